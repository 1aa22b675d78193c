// SPDX-License-Identifier: GPL-2.0
#include "backend-bpf/dwarf.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend-bpf/convert.h"
#include "backend-bpf/dwarf_join.h"
#include "backend-bpf/interruptible.h"
#include "backend-bpf/python.h"
#include "backend-bpf/shared_maps.h"
#include "backend-perfring/ringset.h"
#include "bpf/dwarf.skel.h"
#include "bpf/dwarf_map.skel.h"
#include "bpf/dwarf_task_regs.skel.h"
#include "bpf/profile.skel.h"
#include "core/lib/log.h"

struct bpf_dwarf {
	struct pipeline *pipeline;
	const struct backend_config *cfg;
	/* One of the three variants, newest first (see load_variant). */
	struct dwarf_task_regs_bpf *skel_task_regs;
	struct dwarf_map_bpf *skel_map;
	struct dwarf_bpf *skel;
	struct ring_set *rs;		/* the perf event array's rings */
	bool timed;			/* record times compare with the side-band's */
	stack_lookup_fn lookup;
	void *lookup_ctx;
	struct dwarf_joiner join;	/* the records, each CPU's joined into samples */
	int err;		/* from the sample callback, which cannot return one */
	/*
	 * Python frames walked in the kernel at the sample (dwarf_py_start
	 * on the events, bpf/dwarf.bpf.h), else read from user space at the
	 * drain.
	 */
	bool python;
	bool handed;		/* the native unwinder's copies (bpf_dwarf_opts.handed) */
	bool continuous;	/* ... of Node's processes too (bpf_dwarf_opts.continuous) */
	unsigned int dump_size;	/* a copy's most bytes: --stack-dump-size, or handed's */
	uint64_t py_lost;	/* samples whose frames were sent but not joined whole */
};

bool bpf_dwarf__test_pieces_on_stack;
bool bpf_dwarf__test_refuse;

unsigned int bpf_dwarf__piece(const struct bpf_dwarf *d)
{
	return d->skel ? PROFILE_DUMP_PIECE_STACK : PROFILE_DUMP_PIECE_MAP;
}

/* The longest piece the loaded variant sends: up to 60 KiB of the copy from 5.15. */
static unsigned int longest_piece(const struct bpf_dwarf *d)
{
	return d->skel_task_regs ? PROFILE_DUMP_PIECE_ONE : bpf_dwarf__piece(d);
}

unsigned int bpf_dwarf__chunks(unsigned int dump_size, unsigned int piece)
{
	unsigned int pieces = (dump_size + piece - 1) / piece;
	/*
	 * The program sends piece i while i * piece < chunks * UNIT: the most
	 * units that send the pieces covering dump_size and not one more
	 * (rounding units up from 16384 bytes sent five 4096-byte pieces: a
	 * quarter more to copy into the batch and again into the join; from
	 * 65528, seventeen, more than a join holds: samples with that much
	 * stack above sp were dropped as malformed).
	 */
	unsigned int n = pieces ? pieces * piece / PROFILE_DUMP_UNIT : 1;

	return n > PROFILE_DUMP_MAX_UNITS ? PROFILE_DUMP_MAX_UNITS : n;
}

/*
 * The maps settings both variants share with the counting program, and
 * the programs that hand samples to the Python walk when it is wanted.
 */
static int prepare(struct bpf_object *obj, struct profile_bpf *counting, bool python, bool handed)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj) {
		const char *name = bpf_program__name(prog);
		size_t n = strlen(name);
		bool is_handed = n > 7 && !strcmp(name + n - 7, "_handed");

		if (!strncmp(name, "dwarf_py_", 9))
			bpf_program__set_autoload(prog, python && !handed);
		else
			bpf_program__set_autoload(prog, is_handed == handed);
	}
	/* The counting program's settings, filter, stack ids, statistics and Python tables. */
	return shared_maps__reuse(obj, counting->obj);
}

bool bpf_dwarf__task_regs_supported(void)
{
	/*
	 * A kernel without it is asked with a two-instruction program, not
	 * made to verify the variant.
	 */
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_task_pt_regs, NULL) == 1;
}

/* The variant with bpf_task_pt_regs (5.15). Returns the skeleton or NULL, errno set. */
static struct dwarf_task_regs_bpf *load_task_regs(struct profile_bpf *counting, bool python,
						  bool handed)
{
	struct dwarf_task_regs_bpf *skel;
	int err;

	if (!bpf_dwarf__task_regs_supported()) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	skel = dwarf_task_regs_bpf__open();
	if (!skel)
		return NULL;
	/* Its copy buffer, indexed by the running CPU (bpf/dwarf_one.bpf.h). */
	err = libbpf_num_possible_cpus();
	if (err > 0)
		err = bpf_map__set_max_entries(skel->maps.copy_buf, (__u32)err);
	if (!err)
		err = prepare(skel->obj, counting, python, handed);
	if (!err)
		err = bpf_interruptible__load(skel->skeleton);
	if (err) {
		dwarf_task_regs_bpf__destroy(skel);
		errno = -err;
		return NULL;
	}
	return skel;
}

/* Open, share the maps, load; NULL with errno set when refused. */
#define LOAD_SKEL(name, counting, python, handed)                                               \
	({                                                                                      \
		struct name##_bpf *__s = name##_bpf__open();                                    \
		int __err = __s ? prepare(__s->obj, (counting), (python), (handed)) : -errno;   \
		if (!__err)                                                                     \
			__err = bpf_interruptible__load(__s->skeleton);                         \
		if (__err) {                                                                    \
			name##_bpf__destroy(__s);                                               \
			__s = NULL;                                                             \
			errno = -__err;                                                         \
		}                                                                               \
		__s;                                                                            \
	})

/*
 * Load the first variant the kernel accepts: with bpf_task_pt_regs (5.15)
 * if wanted, else with its pieces in a map value (4.10), else on the BPF
 * stack (4.9). A kernel refuses the newer ones at their first instruction
 * it lacks, so trying costs little. Returns 0 or -errno.
 */
static int load_variant(struct bpf_dwarf *d, struct profile_bpf *counting, bool task_regs_wanted)
{
	if (task_regs_wanted) {
		d->skel_task_regs = load_task_regs(counting, d->python, d->handed);
		if (d->skel_task_regs)
			return 0;
		pr_debug("bpf: the stack-copy program with bpf_task_pt_regs did not load (%s); "
			 "trying the one without\n",
			 strerror(errno));
	}
	d->skel_map = bpf_dwarf__test_pieces_on_stack ? NULL
						      : LOAD_SKEL(dwarf_map, counting, d->python,
								  d->handed);
	if (d->skel_map)
		return 0;
	pr_debug("bpf: the stack-copy program with map-value pieces (Linux 4.10) did not load "
		 "(%s); trying the one with pieces on the BPF stack (4.9)\n",
		 strerror(errno));
	d->skel = LOAD_SKEL(dwarf, counting, d->python, d->handed);
	return d->skel ? 0 : -errno;
}

static struct bpf_program *copy_program(const struct bpf_dwarf *d)
{
	if (d->handed)
		return d->skel_task_regs ? d->skel_task_regs->progs.dwarf_sample_task_regs_handed
		       : d->skel_map	  ? d->skel_map->progs.dwarf_sample_map_handed
					  : d->skel->progs.dwarf_sample_handed;
	return d->skel_task_regs ? d->skel_task_regs->progs.dwarf_sample_task_regs
	       : d->skel_map	  ? d->skel_map->progs.dwarf_sample_map
				  : d->skel->progs.dwarf_sample;
}

static struct bpf_object *loaded_obj(const struct bpf_dwarf *d)
{
	return d->skel_task_regs ? d->skel_task_regs->obj
	       : d->skel_map	  ? d->skel_map->obj
				  : d->skel->obj;
}

static int program_fd(const struct bpf_dwarf *d, const char *name)
{
	struct bpf_program *prog = bpf_object__find_program_by_name(loaded_obj(d), name);

	return prog ? bpf_program__fd(prog) : -ENOENT;
}

/* The stack-copy program's, the walk's end's, in the slots they are tail-called through. */
static int link_python(struct bpf_dwarf *d)
{
	struct bpf_map *own = bpf_object__find_map_by_name(loaded_obj(d), "dwarf_progs");
	struct bpf_map *walks = bpf_object__find_map_by_name(loaded_obj(d), "py_progs");
	int copy = bpf_program__fd(copy_program(d));
	int end = program_fd(d, "dwarf_py_end");
	__u32 zero = 0;

	if (!own || !walks || copy < 0 || end < 0)
		return -ENOENT;
	if (bpf_map_update_elem(bpf_map__fd(own), &zero, &copy, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(walks), &zero, &end, BPF_ANY))
		return -errno;
	return 0;
}

/*
 * The variant, with the Python walk's programs when wanted; without them
 * if the kernel refuses them (the frames are then read at the drain).
 */
static int load_programs(struct bpf_dwarf *d, struct profile_bpf *counting, bool task_regs_wanted)
{
	int err = load_variant(d, counting, task_regs_wanted);

	if (!err && d->python) {
		err = link_python(d);
		if (!err)
			return 0;
		dwarf_bpf__destroy(d->skel);
		dwarf_map_bpf__destroy(d->skel_map);
		dwarf_task_regs_bpf__destroy(d->skel_task_regs);
		d->skel = NULL;
		d->skel_map = NULL;
		d->skel_task_regs = NULL;
	}
	if (!err || !d->python)
		return err;
	pr_info("bpf: the stack-copy program with the Python walk was refused (%s): Python "
		"frames are read from user space when each sample is drained, not at the "
		"sample\n", strerror(-err));
	d->python = false;
	return load_variant(d, counting, task_regs_wanted);
}

static struct bpf_map *snapshots_map(const struct bpf_dwarf *d)
{
	return d->skel_task_regs ? d->skel_task_regs->maps.snapshots
	       : d->skel_map	  ? d->skel_map->maps.snapshots
				  : d->skel->maps.snapshots;
}

/* The Python frames walked at the sample, or why there are none. */
static void py_part(struct bpf_dwarf *d, int cpu, const struct dwarf_head *rec, struct sample *s)
{
	const struct interp_frame *frames;
	unsigned int nr;

	s->read_interp = false;
	if (!(rec->py & DWARF_PY_SENT)) {
		s->interp_status = bpf_python__why(rec->py);
		return;
	}
	frames = dwarf_joiner__py(&d->join, cpu, rec, &nr);
	if (!frames) {
		d->py_lost++;
		s->interp_status = INTERP_LOST;
		return;
	}
	/* Valid during the call: the pipeline copies what it keeps. */
	s->interp_frames = frames;
	s->nr_interp = nr;
	s->interp_status = bpf_python__walked(rec->py & ~DWARF_PY_SENT);
}

/* A joined sample to the pipeline, with its stacks by id from the counting program's maps. */
static void on_sample(void *ctx, int cpu, uint64_t time, const struct dwarf_head *rec,
		      const uint64_t *kstack, const struct user_snapshot *snap)
{
	struct bpf_dwarf *d = ctx;
	uint64_t kbuf[MAX_STACK_DEPTH + 1];
	struct profile_key key;
	struct sample s;
	int err;

	memset(&key, 0, sizeof(key));
	key.tgid = rec->tgid;
	key.tid = rec->tid;
	key.kernel_stack_id = rec->kernel_stack_id;
	key.user_stack_id = rec->user_stack_id;
	key.kernel_ip = rec->kernel_ip;
	memcpy(key.comm, rec->comm, sizeof(key.comm));
	bpf_convert__sample(&key, 1,
			    kstack ? kstack : d->lookup(d->lookup_ctx, rec->kernel_stack_id),
			    d->lookup(d->lookup_ctx, rec->user_stack_id), kbuf, &s);
	s.cpu = cpu;
	/* The process image of the sample's own time, where the side-band's clock is the same. */
	if (d->timed)
		s.time = s.time_end = time;
	if (snap) {
		s.user_snapshot = snap;
		s.user_err = 0;
	}
	if (d->python)
		py_part(d, cpu, rec, &s);
	else
		/* Read from the process as the record is taken: another moment's frames. */
		s.read_interp = d->cfg->interp;
	err = pipeline__add(d->pipeline, &s);
	if (err && !d->err)
		d->err = err;
}

static int on_record(void *ctx, int cpu, uint64_t time, const void *data, uint32_t size)
{
	struct bpf_dwarf *d = ctx;

	return dwarf_joiner__record(&d->join, cpu, time, data, size);
}

static void on_lost(void *ctx, int cpu, uint64_t cnt)
{
	struct bpf_dwarf *d = ctx;

	(void)cnt;
	/* The CPU's sample being joined may have lost a piece: drop it at its head. */
	dwarf_joiner__lost(&d->join, cpu);
}

/*
 * The perf event array's rings, planned as the perf backend plans its own
 * (rate x a sample's records x 250 ms, within the locked-memory budget,
 * less the side-band rings' share), read by a ring set's reader thread.
 */
static int open_rings(struct bpf_dwarf *d, const struct bpf_dwarf_opts *o, struct errmsg *errm)
{
	const struct backend_config *c = o->cfg;
	unsigned int piece = longest_piece(d);
	unsigned int pieces = (d->dump_size + piece - 1) / piece;
	/* A record's header, time, cpu and raw size around each piece and the head. */
	const unsigned int around = 8 + 16 + 8 + sizeof(struct dwarf_piece);
	uint64_t rate = c->frequency ? c->frequency : 1000000000ull / (c->period ? c->period : 1);
	const char *what = o->track_tasks ? "stack copies and side-band" : "stack copies";
	uint64_t largest = piece > sizeof(struct dwarf_head) ? piece : sizeof(struct dwarf_head);
	struct perf_event_attr attr;
	pid_t all = -1;
	int *cpus = NULL, nr, pages, err;

	nr = ring_set__cpus(c, &cpus);
	free(cpus);
	if (nr < 0) {
		errmsg__set(errm, "bpf: cannot read the online CPUs: %s", strerror(-nr));
		return nr;
	}
	if (d->handed) {
		what = d->continuous ? "stack copies before tables and of Node.js"
				     : "stack copies before tables";
		rate = rate < BPF_DWARF_HANDED_RATE ? rate : BPF_DWARF_HANDED_RATE;
	}
	/* Samples, each a stack copy in pieces and a head, and a Python stack's first 32 frames. */
	pages = ring_set__plan(what, nr, rate,
			       d->dump_size + (pieces + 1) * around +
				       sizeof(struct dwarf_head) +
				       (d->python ? 2 * (sizeof(struct dwarf_py) + around) : 0),
			       largest + around, o->reserved_pages, errm);
	if (pages < 0)
		return pages;
	/* The planner's floor is a sampling ring's: these rings hold a new process's first few. */
	if (d->handed && pages > BPF_DWARF_HANDED_PAGES) {
		pr_info("%s: %d data pages a ring, not %d: a new process's first few copies\n",
			what, BPF_DWARF_HANDED_PAGES, pages);
		pages = BPF_DWARF_HANDED_PAGES;
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_BPF_OUTPUT;
	attr.sample_period = 1;
	/* Enabled now: bpf_perf_event_output fails on an event that is not (-EOPNOTSUPP). */
	attr.disabled = 0;
	attr.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW;
	attr.sample_id_all = 1;	/* PERF_RECORD_LOST says its CPU */
	attr.use_clockid = 1;	/* the side-band's clock (4.1) */
	attr.clockid = CLOCK_MONOTONIC;
	attr.watermark = 1;
	if (o->track_tasks)
		ring_set__track_tasks(&attr);
	err = ring_set__open(&d->rs, what, d->pipeline, c, &attr, &all, 1, (unsigned int)pages,
			     errm);
	if (err)
		return err;
	d->timed = ring_set__monotonic(d->rs);
	/* A few at a time, but a backlog while the main thread compiles their tables: spilled. */
	if (d->handed && !d->continuous)
		ring_set__hold_at_most(d->rs, BPF_DWARF_HANDED_HELD);
	ring_set__on_raw(d->rs, on_record, d);
	ring_set__on_lost(d->rs, on_lost, d);
	for (int i = 0; i < ring_set__nr_events(d->rs); i++) {
		int cpu, fd = ring_set__event_fd(d->rs, i, &cpu);

		if (bpf_map_update_elem(bpf_map__fd(snapshots_map(d)), &cpu, &fd, BPF_ANY)) {
			err = -errno;
			errmsg__set(errm, "bpf: the stack copies' ring of CPU %d: %s", cpu,
				    strerror(-err));
			return err;
		}
	}
	return 0;
}

struct bpf_dwarf *bpf_dwarf__open(const struct bpf_dwarf_opts *o, struct errmsg *errm)
{
	struct bpf_dwarf *d = calloc(1, sizeof(*d));
	int err;

	if (!d) {
		errmsg__set(errm, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	if (bpf_dwarf__test_refuse) {
		free(d);
		errmsg__set(errm, "bpf: loading the stack-copy program: %s", strerror(EACCES));
		errno = EACCES;
		return NULL;
	}
	d->pipeline = o->pipeline;
	d->cfg = o->cfg;
	d->lookup = o->lookup;
	d->lookup_ctx = o->lookup_ctx;
	d->handed = o->handed;
	d->continuous = o->handed && o->continuous;
	d->dump_size = o->cfg->stack_dump_size;
	if (d->handed && d->dump_size < BPF_DWARF_HANDED_DUMP)
		d->dump_size = BPF_DWARF_HANDED_DUMP;
	d->python = o->python && !o->handed;
	err = load_programs(d, o->counting, o->task_regs_wanted);
	if (err) {
		errmsg__set(errm, "bpf: loading the stack-copy program: %s", strerror(-err));
		goto err_out;
	}
	err = dwarf_joiner__init(&d->join, o->nr_cpus, longest_piece(d), d->dump_size,
				 on_sample, d);
	if (err) {
		errmsg__set(errm, "out of memory");
		goto err_out;
	}
	err = open_rings(d, o, errm);
	if (err)
		goto err_out;
	if (d->handed)
		pr_info("bpf: samples of processes the tables do not have yet: stack copies in "
			"pieces of %u bytes, unwound here; %s\n",
			longest_piece(d),
			d->skel_task_regs ? "kernel-mode ones' too, from bpf_task_pt_regs"
					  : "kernel-mode ones' too, from the top of the kernel stack");
	else
		pr_info("bpf: stack copies in pieces of %u bytes; user registers of kernel-mode "
			"samples: %s\n",
			longest_piece(d),
			d->skel_task_regs ? "bpf_task_pt_regs"
					  : "from the top of the task's kernel stack (frame-pointer "
					    "stacks where they are not found there)");
	return d;

err_out:
	bpf_dwarf__close(d);
	errno = -err;
	return NULL;
}

unsigned int bpf_dwarf__dump_size(const struct bpf_dwarf *d)
{
	return d->dump_size;
}

bool bpf_dwarf__has_task_regs(const struct bpf_dwarf *d)
{
	return d->skel_task_regs;
}

int bpf_dwarf__prog_fd(const struct bpf_dwarf *d)
{
	/* With the walk, the events run the program that hands over to it; it resumes the copy. */
	return d->python ? program_fd(d, "dwarf_py_start") : bpf_program__fd(copy_program(d));
}

bool bpf_dwarf__python(const struct bpf_dwarf *d)
{
	return d->python;
}

uint64_t bpf_dwarf__py_lost(const struct bpf_dwarf *d)
{
	return d->py_lost;
}

struct ring_set *bpf_dwarf__ring_set(const struct bpf_dwarf *d)
{
	return d->rs;
}

int bpf_dwarf__drain(struct bpf_dwarf *d, bool now)
{
	int err = now ? ring_set__drain_now(d->rs) : ring_set__drain(d->rs);

	/* The batch is refilled by the next drain: pieces still waiting for their head move out. */
	dwarf_joiner__batch_done(&d->join);
	if (err < 0)
		return err;
	err = d->err ? d->err : d->join.err;
	d->err = 0;
	d->join.err = 0;
	return err;
}

void bpf_dwarf__stop(struct bpf_dwarf *d)
{
	/* Everything written is in the rings now: the last drain reads them itself. */
	ring_set__disable(d->rs);
}

uint64_t bpf_dwarf__lost(const struct bpf_dwarf *d)
{
	/* Records per sample, as seen (at least one: the head). */
	uint64_t lost = ring_set__lost(d->rs);
	const struct dwarf_joiner *jn = &d->join;
	double per = jn->heads ? (double)jn->records / jn->heads : 1;
	uint64_t whole = per >= 1 ? (uint64_t)(lost / per + 0.5) : lost;

	return whole > jn->broken_heads ? whole : jn->broken_heads;
}

uint64_t bpf_dwarf__bad_records(const struct bpf_dwarf *d)
{
	return d->join.bad + ring_set__bad_records(d->rs);
}

void bpf_dwarf__close(struct bpf_dwarf *d)
{
	if (!d)
		return;
	/* What each sample cost the reader: the 5.15 variant sends 1, the others 6 to 10. */
	if (d->join.heads)
		pr_info("bpf: stack copies: %" PRIu64 " records for %" PRIu64
			" samples (%.2f a sample)\n",
			d->join.records, d->join.heads,
			(double)d->join.records / (double)d->join.heads);
	if (d->py_lost)
		pr_info("bpf: %" PRIu64 " samples whose Python frames did not arrive whole\n",
			d->py_lost);
	/* Before the program goes: its map holds the events' fds. */
	ring_set__close(d->rs);
	dwarf_bpf__destroy(d->skel);
	dwarf_map_bpf__destroy(d->skel_map);
	dwarf_task_regs_bpf__destroy(d->skel_task_regs);
	dwarf_joiner__exit(&d->join);
	free(d);
}

int bpf_dwarf__probe(struct profile_bpf *counting, bool task_regs_wanted, bool *task_regs)
{
	struct bpf_dwarf d = { .pipeline = NULL };
	int err = load_variant(&d, counting, task_regs_wanted);

	*task_regs = d.skel_task_regs;
	dwarf_bpf__destroy(d.skel);
	dwarf_map_bpf__destroy(d.skel_map);
	dwarf_task_regs_bpf__destroy(d.skel_task_regs);
	return err;
}
