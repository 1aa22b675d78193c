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
#include "core/log.h"
#include "unwind/unwind.h"

struct bpf_dwarf {
	struct profile_core *core;
	struct dwarf_bpf *skel;
	bool task_regs;
	struct perf_buffer *pb;
	struct unwinder *unwinder;
	stack_lookup_fn lookup;
	void *lookup_ctx;
	uint64_t lost;
	uint64_t bad;
	int err;		/* from the sample callback, which cannot return one */
};

unsigned int bpf_dwarf__chunks(unsigned int dump_size)
{
	unsigned int n = (dump_size + PROFILE_DUMP_CHUNK - 1) / PROFILE_DUMP_CHUNK;

	return n > PROFILE_DUMP_MAX_CHUNKS ? PROFILE_DUMP_MAX_CHUNKS : n;
}

/*
 * Tests run the variant for kernels without bpf_task_pt_regs on this one:
 * the same program older kernels get, on the real kernel.
 */
static bool task_regs_wanted(void)
{
	return !getenv("PROFILE_TEST_NO_TASK_REGS");
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
	uint64_t kbuf[MAX_STACK_DEPTH + 1], ubuf[MAX_STACK_DEPTH];
	struct dwarf_record *rec = data;
	struct profile_key key;
	struct sample s;
	int err;

	if (size < head || rec->dump_size > size - head) {
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
		struct unwind_regs regs = { .ip = rec->ip, .sp = rec->sp, .bp = rec->bp };
		struct addr_space *as = proctrack__addr_space(d->core->procs, rec->tgid);

		s.user_ips = ubuf;
		s.nr_user = as ? unwinder__unwind(d->unwinder, as, &regs, rec->stack,
						  rec->dump_size, ubuf, MAX_STACK_DEPTH)
			       : 0;
		s.user_err = 0;
	}
	err = core__add_sample(d->core, &s);
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

struct bpf_dwarf *bpf_dwarf__open(struct profile_core *core, struct profile_bpf *counting,
				  int nr_cpus, stack_lookup_fn lookup, void *lookup_ctx)
{
	unsigned int chunks = bpf_dwarf__chunks(core->opts->stack_dump_size);
	struct bpf_dwarf *d = calloc(1, sizeof(*d));
	int err;

	if (!d)
		return NULL;
	d->core = core;
	d->lookup = lookup;
	d->lookup_ctx = lookup_ctx;
	d->task_regs = task_regs_wanted();
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
	d->unwinder = unwinder__new();
	if (!d->unwinder) {
		errno = ENOMEM;
		goto err_out;
	}
	d->pb = perf_buffer__new(bpf_map__fd(d->skel->maps.snapshots), buffer_pages(chunks),
				 on_record, on_lost, d, NULL);
	if (!d->pb)
		goto err_out;
	if (chunks * PROFILE_DUMP_CHUNK != core->opts->stack_dump_size)
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

void bpf_dwarf__report(const struct bpf_dwarf *d, uint64_t fp_fallbacks)
{
	unwinder__report(d->unwinder);
	if (d->bad)
		pr_warn("warning: %llu malformed stack-copy records skipped\n",
			(unsigned long long)d->bad);
	if (fp_fallbacks)
		pr_warn("warning: %llu samples taken in kernel mode have frame-pointer user stacks: "
			"this kernel cannot give a BPF program their user registers "
			"(bpf_task_pt_regs needs Linux 5.15 with BTF); --backend perf can\n",
			(unsigned long long)fp_fallbacks);
}

void bpf_dwarf__close(struct bpf_dwarf *d)
{
	if (!d)
		return;
	perf_buffer__free(d->pb);
	unwinder__free(d->unwinder);
	dwarf_bpf__destroy(d->skel);
	free(d);
}

int bpf_dwarf__probe(struct profile_bpf *counting, int nr_cpus, bool *task_regs)
{
	struct dwarf_bpf *skel;

	*task_regs = task_regs_wanted();
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
