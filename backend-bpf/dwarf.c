// SPDX-License-Identifier: GPL-2.0
#include "backend-bpf/dwarf.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend-bpf/convert.h"
#include "backend-bpf/shared_maps.h"
#include "bpf/dwarf.skel.h"
#include "bpf/profile.skel.h"
#include "core/lib/log.h"

struct bpf_dwarf {
	struct pipeline *pipeline;
	struct dwarf_bpf *skel;
	bool task_regs;
	struct perf_buffer *pb;
	stack_lookup_fn lookup;
	void *lookup_ctx;
	uint64_t lost;
	uint64_t bad;
	int err;		/* from the sample callback, which cannot return one */
	/*
	 * perf_buffer data follows the record's u32 size, so it is only 4-byte
	 * aligned: each record's fixed part is copied here before it is read.
	 */
	struct dwarf_record *head;
};

unsigned int bpf_dwarf__chunks(unsigned int dump_size)
{
	unsigned int n = (dump_size + PROFILE_DUMP_CHUNK - 1) / PROFILE_DUMP_CHUNK;

	return n > PROFILE_DUMP_MAX_CHUNKS ? PROFILE_DUMP_MAX_CHUNKS : n;
}

/* Load one of the two variants of the program. Returns the skeleton or NULL, errno set. */
static struct dwarf_bpf *load_variant(struct profile_bpf *counting, int nr_cpus, bool task_regs)
{
	struct dwarf_bpf *skel = dwarf_bpf__open();
	int err;

	if (!skel)
		return NULL;
	bpf_program__set_autoload(skel->progs.dwarf_sample_task_regs, task_regs);
	bpf_program__set_autoload(skel->progs.dwarf_sample, !task_regs);
	bpf_map__set_max_entries(skel->maps.scratch, nr_cpus);
	/* The same settings, filter, stack ids and statistics as the counting program. */
	err = shared_maps__reuse(skel->obj, counting->obj);
	if (!err)
		err = dwarf_bpf__load(skel);
	if (err) {
		dwarf_bpf__destroy(skel);
		errno = -err;
		return NULL;
	}
	return skel;
}

static void on_record(void *ctx, int cpu, void *data, __u32 size)
{
	const size_t head = offsetof(struct dwarf_record, stack);
	struct bpf_dwarf *d = ctx;
	uint64_t kbuf[MAX_STACK_DEPTH + 1];
	const struct dwarf_record *rec = d->head;
	/* The stack bytes stay where they are: the unwinder reads them with memcpy. */
	const unsigned char *stack = (const unsigned char *)data + head;
	struct user_snapshot snap;
	struct profile_key key;
	struct sample s;
	int err;

	if (size < head) {
		d->bad++;
		return;
	}
	memcpy(d->head, data, head);
	if (rec->dump_size > size - head) {
		d->bad++;
		return;
	}
	memset(&key, 0, sizeof(key));
	key.tgid = rec->tgid;
	key.tid = rec->tid;
	key.kernel_stack_id = rec->kernel_stack_id;
	key.user_stack_id = rec->user_stack_id;
	key.kernel_ip = rec->kernel_ip;
	memcpy(key.comm, rec->comm, sizeof(key.comm));
	bpf_convert__sample(&key, 1, d->lookup(d->lookup_ctx, rec->kernel_stack_id),
			    d->lookup(d->lookup_ctx, rec->user_stack_id), kbuf, &s);
	s.cpu = cpu;
	if (rec->regs_valid) {
		snap = (struct user_snapshot){ .ip = rec->ip, .sp = rec->sp, .bp = rec->bp,
					       .stack = stack, .stack_size = rec->dump_size };
		s.user_snapshot = &snap;
		s.user_err = 0;
	}
	err = pipeline__add(d->pipeline, &s);
	if (err && !d->err)
		d->err = err;
}

static void on_lost(void *ctx, int cpu, __u64 cnt)
{
	struct bpf_dwarf *d = ctx;

	d->lost += cnt;
}

/* Room for about 100 ms of records per CPU at 1000 Hz. */
static size_t buffer_pages(unsigned int chunks)
{
	size_t want = (size_t)chunks * PROFILE_DUMP_CHUNK * 100 / 4096, pages = 64;

	while (pages < want && pages < 4096)
		pages *= 2;
	return pages;
}

struct bpf_dwarf *bpf_dwarf__open(struct pipeline *p, struct profile_bpf *counting, int nr_cpus,
				  unsigned int dump_size, bool task_regs_wanted, stack_lookup_fn lookup,
				  void *lookup_ctx)
{
	unsigned int chunks = bpf_dwarf__chunks(dump_size);
	struct bpf_dwarf *d = calloc(1, sizeof(*d));
	int err;

	if (d)
		d->head = malloc(sizeof(*d->head));
	if (!d || !d->head) {
		free(d);
		errno = ENOMEM;
		return NULL;
	}
	d->pipeline = p;
	d->lookup = lookup;
	d->lookup_ctx = lookup_ctx;
	d->task_regs = task_regs_wanted;
	d->skel = d->task_regs ? load_variant(counting, nr_cpus, true) : NULL;
	if (!d->skel) {
		pr_debug("bpf: the stack-copy program with bpf_task_pt_regs did not load (%s); "
			 "trying the one without\n",
			 strerror(errno));
		d->task_regs = false;
		d->skel = load_variant(counting, nr_cpus, false);
	}
	if (!d->skel)
		goto err_out;
	d->pb = perf_buffer__new(bpf_map__fd(d->skel->maps.snapshots), buffer_pages(chunks),
				 on_record, on_lost, d, NULL);
	if (!d->pb)
		goto err_out;
	if (chunks * PROFILE_DUMP_CHUNK != dump_size)
		pr_info("bpf: stack copies of %u bytes (whole KiB, at most %u)\n",
			chunks * PROFILE_DUMP_CHUNK, PROFILE_DUMP_MAX_CHUNKS * PROFILE_DUMP_CHUNK);
	pr_info("bpf: stack copies through a perf buffer of %zu pages per CPU; user registers "
		"of kernel-mode samples: %s\n",
		buffer_pages(chunks),
		d->task_regs ? "bpf_task_pt_regs" : "none (frame-pointer stacks for those)");
	return d;

err_out:
	err = errno;
	bpf_dwarf__close(d);
	errno = err;
	return NULL;
}

bool bpf_dwarf__has_task_regs(const struct bpf_dwarf *d)
{
	return d->task_regs;
}

int bpf_dwarf__prog_fd(const struct bpf_dwarf *d)
{
	return bpf_program__fd(d->task_regs ? d->skel->progs.dwarf_sample_task_regs
					    : d->skel->progs.dwarf_sample);
}

int bpf_dwarf__drain(struct bpf_dwarf *d)
{
	int err = perf_buffer__consume(d->pb);

	if (err < 0)
		return err;
	err = d->err;
	d->err = 0;
	return err;
}

uint64_t bpf_dwarf__lost(const struct bpf_dwarf *d)
{
	return d->lost;
}

uint64_t bpf_dwarf__bad_records(const struct bpf_dwarf *d)
{
	return d->bad;
}

void bpf_dwarf__close(struct bpf_dwarf *d)
{
	if (!d)
		return;
	perf_buffer__free(d->pb);
	dwarf_bpf__destroy(d->skel);
	free(d->head);
	free(d);
}

int bpf_dwarf__probe(struct profile_bpf *counting, int nr_cpus, bool task_regs_wanted,
		     bool *task_regs)
{
	struct dwarf_bpf *skel;

	*task_regs = task_regs_wanted;
	skel = *task_regs ? load_variant(counting, nr_cpus, true) : NULL;
	if (!skel) {
		*task_regs = false;
		skel = load_variant(counting, nr_cpus, false);
	}
	if (!skel)
		return -errno;
	dwarf_bpf__destroy(skel);
	return 0;
}
