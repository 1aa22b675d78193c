// SPDX-License-Identifier: GPL-2.0
#include "backend-bpf/offcpu.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "backend-bpf/convert.h"
#include "backend-bpf/countmap.h"
#include "backend-bpf/found_waits.h"
#include "backend-bpf/idmaps.h"
#include "backend-bpf/interruptible.h"
#include "backend-bpf/load.h"
#include "backend-bpf/nsids.h"
#include "backend-bpf/offcpu_native.h"
#include "backend-bpf/python.h"
#include "backend-bpf/stacks.h"
#include "bpf/offcpu.skel.h"
#include "bpf/offcpu_idmap.skel.h"
#include "bpf/offcpu_maps.h"
#include "bpf/offcpu_mntns.skel.h"
#include "compat/cgroup.h"
#include "compat/host.h"
#include "compat/kbtf.h"
#include "compat/pidns.h"
#include "compat/tracepoint.h"
#include "core/lib/clock.h"
#include "core/lib/log.h"

/* Threads switched out at once: a start map entry each. */
#define START_ENTRIES 65536
/* Drain at least this often, or when the active count map is half full. */
#define DRAIN_PERIOD_MS 1000

bool bpf_offcpu__test_no_runtime;

struct bpf_offcpu {
	const struct backend_config *cfg;
	struct pipeline *pipeline;
	struct offcpu_bpf *skel;
	/* bcc's --cgroupmap/--mntnsmap: the variant that reads them runs, on skel's maps. */
	struct offcpu_idmap_bpf *idmap;
	struct offcpu_mntns_bpf *mntns;
	struct bpf_program *prog;	/* the program attached */
	struct bpf_link *link;
	struct bpf_link *fork_link;	/* --cgroup's thread table: sched_process_fork */
	bool sums;			/* off-CPU time; else only the table is kept */
	bool track;			/* keep --cgroup's thread table (cg_members) */
	/* Inside a pid namespace: threads named by the kernel's records (nsids.h). */
	struct nsid_names *names;
	struct offcpu_config config;
	uint32_t next_pid_off;		/* written at start: the program's on switch */
	int config_fd, stats_fd, start_fd, counts_fd[2];
	struct stack_cache stacks;
	int nr_cpus;
	bool no_batch;
	bool stopped;
	uint64_t stop_ns;		/* CLOCK_MONOTONIC, as bpf_ktime_get_ns() */
	uint64_t new_keys_at_switch;
	uint64_t ended_at_switch;	/* pipeline__members_ended then */
	int64_t last_switch_ms;
	/*
	 * CLOCK_MONOTONIC when the active map became so, and the one before:
	 * a map drained holds intervals that ended (switched in) since.
	 */
	uint64_t since_ns, prev_since_ns;
	uint64_t drains;
	uint64_t still_off;		/* threads counted up to the end */
	uint64_t missed;		/* the profiled threads' intervals with no switch-in seen */
	bool missed_counted;
	struct bpf_python *python;	/* Python frames walked at switch-outs, or NULL */
	struct found_waits *found;	/* Python waits begun before their thread was known */
	struct offcpu_native_bpf *native;	/* user stacks unwound by the tables, or NULL */
};

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (log_verbosity() < (level == LIBBPF_WARN ? 2 : 3))
		return 0;
	fputs("profile: libbpf: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

/*
 * Open and load with c's sizes. With sums false the maps of off-CPU time
 * are minimal. With track, the program keeps --cgroup's thread table: the
 * one at members_fd (the on-CPU programs'), or its own if members_fd < 0.
 */
static struct offcpu_bpf *load(const struct backend_config *c, unsigned int nr_ids, bool sums,
			       bool track, int members_fd, bool named, bool python)
{
	struct offcpu_bpf *skel;
	int err = 0;

	libbpf_set_print(libbpf_quiet);
	skel = offcpu_bpf__open();
	if (!skel)
		return NULL;
	bpf_map__set_max_entries(skel->maps.stacks, sums ? c->stack_storage_size : 1);
	bpf_map__set_max_entries(skel->maps.overflow,
				 sums ? bpf_load__overflow_size(c->stack_storage_size) : 1);
	bpf_map__set_max_entries(skel->maps.counts0, sums ? c->hash_storage_size : 1);
	bpf_map__set_max_entries(skel->maps.counts1, sums ? c->hash_storage_size : 1);
	bpf_map__set_max_entries(skel->maps.start, sums ? START_ENTRIES : 1);
	bpf_map__set_max_entries(skel->maps.filter_ids, nr_ids ? nr_ids : 1);
	bpf_map__set_max_entries(skel->maps.cgroups, c->nr_cgroups ? c->nr_cgroups : 1);
	bpf_map__set_max_entries(skel->maps.nsids, named ? NSIDS_ENTRIES : 1);
	/* The Python walk's tables (bpf/python_offcpu.bpf.h): preallocated, so as small as unused. */
	bpf_map__set_max_entries(skel->maps.py_procs, python ? PY_MAX_PROCS : 1);
	bpf_map__set_max_entries(skel->maps.py_threads, python ? PY_MAX_THREADS_IN_KERNEL : 1);
	bpf_map__set_max_entries(skel->maps.py_stacks_off, python ? PY_MAX_PIECES_STORED : 1);
	bpf_map__set_max_entries(skel->maps.py_unknown, python ? PY_MAX_UNKNOWN : 1);
	bpf_map__set_max_entries(skel->maps.py_fresh, python ? PY_MAX_FRESH : 1);
	if (track && members_fd >= 0)
		err = bpf_map__reuse_fd(skel->maps.cg_members, members_fd);
	/* With bcc's maps, only the maps: a variant of the program runs on them. */
	bpf_program__set_autoload(skel->progs.offcpu_switch, !idmaps__filters(c));
	bpf_program__set_autoload(skel->progs.offcpu_fork, track);
	if (!err)
		err = bpf_interruptible__load(skel->skeleton);
	if (err) {
		offcpu_bpf__destroy(skel);
		errno = -err;
		return NULL;
	}
	return skel;
}

/* The variant that reads bcc's maps, on skel's maps. Returns 0 or -errno. */
static int load_idmap(const struct backend_config *c, struct offcpu_bpf *skel,
		      struct offcpu_idmap_bpf **idmap, struct offcpu_mntns_bpf **mntns,
		      struct bpf_program **prog)
{
	int err;

	if (c->mntnsmap_fd) {
		*mntns = offcpu_mntns_bpf__open();
		if (!*mntns)
			return -errno;
		err = idmaps__prepare((*mntns)->obj, skel->obj, c, prog);
		return err ? err : bpf_interruptible__load((*mntns)->skeleton);
	}
	*idmap = offcpu_idmap_bpf__open();
	if (!*idmap)
		return -errno;
	err = idmaps__prepare((*idmap)->obj, skel->obj, c, prog);
	return err ? err : bpf_interruptible__load((*idmap)->skeleton);
}

/* sched:sched_process_fork's child_pid offset: 0, or -errno with a one-line reason. */
static int fork_child_off(uint32_t *off, char *why, size_t len)
{
	struct tp_format *fmt = calloc(1, sizeof(*fmt));
	char dir[4096], reason[256] = "";
	const struct tp_field *f;
	int err;

	if (!fmt)
		return -ENOMEM;
	err = tracefs__find(dir, sizeof(dir), true, reason, sizeof(reason));
	if (!err)
		err = tracepoint__read(dir, "sched", "sched_process_fork", fmt, reason,
				       sizeof(reason));
	f = err ? NULL : tp_format__field(fmt, "child_pid");
	if (!err && (!f || f->size != 4)) {
		snprintf(reason, sizeof(reason), "no 4-byte child_pid field");
		err = -EINVAL;
	}
	if (err)
		snprintf(why, len, "sched:sched_process_fork: %s",
			 reason[0] ? reason : strerror(-err));
	else
		*off = f->offset;
	free(fmt);
	return err;
}

int bpf_offcpu__probe(const struct backend_config *cfg, bool track, char *why, size_t len)
{
	struct sched_switch_layout layout;
	struct backend_config small = *cfg;
	struct offcpu_idmap_bpf *idmap = NULL;
	struct offcpu_mntns_bpf *mntns = NULL;
	struct bpf_program *prog;
	struct offcpu_bpf *skel;
	uint32_t child_off;
	int err = sched_switch__read(&layout, NULL, true, why, len);

	if (!err && track)
		err = fork_child_off(&child_off, why, len);
	if (err)
		return err;
	small.stack_storage_size = small.hash_storage_size = 1;
	skel = load(&small, 1, false, track, -1, false, false);
	if (!skel) {
		err = -errno;
		snprintf(why, len, "the kernel refused the %s program: %s (-vv shows the "
			 "verifier's log)", cfg->off_cpu ? "off-CPU" : "sched_switch", strerror(errno));
		return err;
	}
	if (idmaps__filters(cfg)) {
		err = load_idmap(&small, skel, &idmap, &mntns, &prog);
		if (err)
			idmaps__refused(cfg, "off-CPU program", err, why, len);
		offcpu_idmap_bpf__destroy(idmap);
		offcpu_mntns_bpf__destroy(mntns);
	}
	offcpu_bpf__destroy(skel);
	return err;
}

static int write_config(struct bpf_offcpu *o)
{
	__u32 zero = 0;

	return bpf_map_update_elem(o->config_fd, &zero, &o->config, BPF_ANY) ? -errno : 0;
}

static void set_config(struct bpf_offcpu *o, const struct sched_switch_layout *l)
{
	const struct backend_config *c = o->cfg;
	struct offcpu_config *k = &o->config;

	memset(k, 0, sizeof(*k));
	/* Named by records, threads are filtered by -p/-L once renamed, in the pipeline. */
	k->flags = (o->track ? OFFCPU_CFG_TRACK_CGROUPS : 0) |
		   (o->names ? OFFCPU_CFG_NSIDS : 0) |
		   (c->user_stacks ? OFFCPU_CFG_USER_STACK : 0) |
		   (c->kernel_stacks ? OFFCPU_CFG_KERNEL_STACK : 0) |
		   (c->nr_pids && !o->names ? OFFCPU_CFG_FILTER_TGID : 0) |
		   (c->nr_tids && !o->names ? OFFCPU_CFG_FILTER_TID : 0) |
		   (c->state >= 0 ? OFFCPU_CFG_FILTER_STATE : 0) |
		   (c->threads_user_only ? OFFCPU_CFG_USER_THREADS : 0) |
		   (c->threads_kernel_only ? OFFCPU_CFG_KERNEL_THREADS : 0);
	k->prev_pid_off = l->prev_pid_off;
	o->next_pid_off = l->next_pid_off;	/* 0 until start: the program waits */
	k->prev_state_off = l->prev_state_off;
	k->prev_state_size = l->prev_state_size;
	k->state_mask = l->state_mask;
	k->exit_states = l->exit_states;
	/* The pipeline starts stacks at __schedule: robust to tracers attaching mid-run. */
	k->kernel_skip = 0;
	k->min_us = c->min_block_us;
	k->max_us = c->max_block_us;
	k->state = c->state >= 0 ? (uint64_t)c->state : 0;
}

/*
 * Where struct task_struct keeps a task's CPU time, which ends the
 * intervals whose switch-in no sched_switch reported (bpf/offcpu.bpf.h):
 * from the kernel's BTF. 0 where it does not say: those intervals are
 * dropped, and warned about.
 */
static uint32_t runtime_offset(void)
{
	static const char *const path[] = { "se", "sum_exec_runtime" };
	uint32_t off = 0, size = 0;
	char why[256] = "";
	int err = -ENOENT;

	if (bpf_offcpu__test_no_runtime)
		snprintf(why, sizeof(why), "test seam");
	else
		err = kbtf__member(KBTF_VMLINUX, "task_struct", path, 2, &off, &size, why,
				   sizeof(why));
	if (!err && size != 8) {
		snprintf(why, sizeof(why), "task_struct's se.sum_exec_runtime has %u bytes", size);
		err = -EINVAL;
	}
	if (err) {
		pr_info("bpf: an off-CPU interval whose switch-in no sched_switch reports is lost: "
			"the threads' CPU time is not known (%s)\n", why);
		return 0;
	}
	pr_info("bpf: an off-CPU interval whose switch-in no sched_switch reports ends from the "
		"thread's CPU time (task_struct + %u, from the kernel's BTF)\n", off);
	return off;
}

static int fill_filter(struct bpf_offcpu *o)
{
	const struct backend_config *c = o->cfg;
	const pid_t *ids = c->nr_pids ? c->pids : c->tids;
	int n = c->nr_pids ? c->nr_pids : c->nr_tids, fd = bpf_map__fd(o->skel->maps.filter_ids);
	int cg_fd = bpf_map__fd(o->skel->maps.cgroups);
	__u8 one = 1;

	for (int i = 0; i < n; i++) {
		__u32 id = (__u32)ids[i];

		if (bpf_map_update_elem(fd, &id, &one, BPF_ANY))
			return -errno;
	}
	/* --cgroup: slots 0..n-1 (v2 directories only: the kernel refuses v1 ones). */
	for (int i = 0; i < c->nr_cgroups; i++) {
		__u32 key = (__u32)i, value = (__u32)c->cgroups[i].fd;

		if (bpf_map_update_elem(cg_fd, &key, &value, BPF_ANY))
			return -errno;
	}
	return 0;
}

/*
 * --unwind auto: the variant that unwinds user stacks by the native tables,
 * attached in place of the plain program; where the kernel refuses it,
 * frame pointers, said in -v. Its stacks stay for the run (an interval is
 * read at its end): half the stack map's count, a power of two.
 */
static void open_native(struct bpf_offcpu *o, const struct bpf_offcpu_native *n)
{
	unsigned int slots = 1;
	struct utsname u;

	while (slots <= o->cfg->stack_storage_size / 4)
		slots *= 2;
	o->native = offcpu_native__load(o->skel->obj, n->tables, slots, n->opts);
	if (!o->native) {
		pr_info("bpf: the kernel refused the off-CPU program that unwinds user stacks by "
			"the binaries' tables (%s; -vv shows why): frame pointers\n",
			strerror(errno));
		return;
	}
	o->prog = offcpu_native__switch_prog(o->native);
	o->config.flags |= OFFCPU_CFG_NATIVE;
	if (!uname(&u) && kernel_cuts_syscall_user_stacks(u.release, u.machine)) {
		o->config.flags |= OFFCPU_CFG_SYSCALL_BP_STALE;
		pr_info("bpf: kernel %s saves no rbp in a fast system call: off-CPU stacks are "
			"unwound without it, to the first frame that needs it\n", u.release);
	}
	o->config.native_slots = slots;
	stack_cache__set_walked(&o->stacks, offcpu_native__stacks_fd(o->native));
	pr_info("bpf: off-CPU user stacks unwound by the program from the binaries' tables (%u "
		"stacks kept for the run), from the user registers at the top of the thread's "
		"kernel stack; 32-bit code by frame pointers\n",
		slots);
}

struct bpf_object *bpf_offcpu__native_object(const struct bpf_offcpu *o)
{
	return o && o->native ? offcpu_native__object(o->native) : NULL;
}

void bpf_offcpu__native_off(struct bpf_offcpu *o)
{
	o->config.flags &= ~OFFCPU_CFG_NATIVE;
	write_config(o);
	pr_info("bpf: off-CPU stacks by frame pointers after all\n");
}

/* A thread still switched out: its name is in use when it comes back, or at the end. */
static bool switched_out(void *ctx, __u32 tid)
{
	struct offcpu_start st;

	return !bpf_map_lookup_elem(((struct bpf_offcpu *)ctx)->start_fd, &tid, &st);
}

int bpf_offcpu__open(struct bpf_offcpu **out, const struct backend_config *cfg,
		     struct pipeline *p, int members_fd, const struct bpf_offcpu_native *native,
		     struct errmsg *errm)
{
	struct sched_switch_layout layout;
	struct bpf_offcpu *o = calloc(1, sizeof(*o));
	uint32_t child_off = 0;
	uint64_t ns_dev, ns_ino;
	char why[256] = "";
	bool named, python;
	int err;

	*out = NULL;
	if (!o) {
		errmsg__set(errm, "out of memory");
		return -ENOMEM;
	}
	o->cfg = cfg;
	o->pipeline = p;
	o->nr_cpus = libbpf_num_possible_cpus();
	o->sums = cfg->off_cpu;
	o->track = members_fd >= 0;
	err = sched_switch__read(&layout, NULL, true, why, sizeof(why));
	if (!err && o->track)
		err = fork_child_off(&child_off, why, sizeof(why));
	if (err) {
		errmsg__set(errm, "bpf: %s", why);
		goto err_out;
	}
	named = o->sums && pidns__in_child(&ns_dev, &ns_ino);
	/* Python frames in the kernel: the program of the initial pid namespace, without bcc's maps. */
	python = o->sums && cfg->interp && cfg->user_stacks && !named && !idmaps__filters(cfg);
	o->skel = load(cfg, (unsigned int)(cfg->nr_pids + cfg->nr_tids), o->sums, o->track,
		       members_fd, named, python);
	if (!o->skel) {
		err = -errno;
		errmsg__set(errm, "bpf: loading the %s program: %s",
			    o->sums ? "off-CPU" : "sched_switch", strerror(errno));
		goto err_out;
	}
	if (named) {
		o->names = nsid_names__new(bpf_map__fd(o->skel->maps.nsid_records),
					   bpf_map__fd(o->skel->maps.nsids), true);
		if (!o->names) {
			err = -errno;
			errmsg__set(errm, "bpf: the off-CPU program's records of thread ids: %s",
				    strerror(-err));
			goto err_out;
		}
		pr_info("bpf: in pid namespace %llu: off-CPU threads are named by their ids "
			"there, which the kernel writes into perf records\n",
			(unsigned long long)ns_ino);
	}
	o->prog = o->skel->progs.offcpu_switch;
	if (idmaps__filters(cfg)) {
		char why[512] = "";

		err = load_idmap(cfg, o->skel, &o->idmap, &o->mntns, &o->prog);
		if (err) {
			idmaps__refused(cfg, "off-CPU program", err, why, sizeof(why));
			errmsg__set(errm, "bpf: %s", why);
			goto err_out;
		}
		pr_info("bpf: off-CPU program %s: keeps tasks whose ids are in bcc's pinned "
			"map(s)\n", bpf_program__name(o->prog));
	}
	o->config_fd = bpf_map__fd(o->skel->maps.config);
	o->stats_fd = bpf_map__fd(o->skel->maps.stats);
	o->start_fd = bpf_map__fd(o->skel->maps.start);
	o->counts_fd[0] = bpf_map__fd(o->skel->maps.counts0);
	o->counts_fd[1] = bpf_map__fd(o->skel->maps.counts1);
	if (o->names)
		nsid_names__set_keep(o->names, switched_out, o);
	stack_cache__init(&o->stacks, bpf_map__fd(o->skel->maps.stacks));
	stack_cache__set_overflow(&o->stacks, bpf_map__fd(o->skel->maps.overflow));
	set_config(o, &layout);
	o->config.child_pid_off = child_off;
	if (o->sums)
		o->config.runtime_off = runtime_offset();
	/* Not with bcc's maps (their variants walk frame pointers) nor named by records. */
	if (o->sums && native && cfg->user_stacks && !named && !idmaps__filters(cfg))
		open_native(o, native);
	else if (o->sums && native && cfg->user_stacks && named)
		pr_info("bpf: off-CPU stacks by frame pointers: in a pid namespace the threads are "
			"named by records, which the tables' variant does not write\n");
	if (python) {
		o->python = bpf_python__new(&(struct bpf_python_target){
			.host = o->skel->obj,
			.procs_fd = bpf_map__fd(o->skel->maps.py_procs),
			.threads_fd = bpf_map__fd(o->skel->maps.py_threads),
			.progs_fd = bpf_map__fd(o->skel->maps.py_progs_off),
			.stacks_fd = { bpf_map__fd(o->skel->maps.py_stacks_off), -1 },
			.unknown_fd = bpf_map__fd(o->skel->maps.py_unknown),
			.stats_fd = o->stats_fd,
			.nr_cpus = o->nr_cpus,
			.unknown_slot = OFFCPU_STAT_PY_UNKNOWN,
			.fresh_fd = bpf_map__fd(o->skel->maps.py_fresh),
			.fresh_slot = OFFCPU_STAT_PY_FRESH,
			.offcpu = true });
		if (!o->python) {
			err = -ENOMEM;
			errmsg__set(errm, "out of memory");
			goto err_out;
		}
		o->config.flags |= OFFCPU_CFG_PYTHON;
		/* Its start map's thread ids are the kernel's: not in a pid namespace. */
		if (o->sums && !o->names)
			o->found = found_waits__new(o->cfg->interp_reader, o->pipeline, o->start_fd);
	}
	err = fill_filter(o);
	if (!err)
		err = write_config(o);
	if (err) {
		errmsg__set(errm, "bpf: writing the off-CPU settings: %s", strerror(-err));
		goto err_out;
	}
	o->link = bpf_program__attach_tracepoint(o->prog, "sched", "sched_switch");
	if (!o->link) {
		err = -errno;
		errmsg__set(errm, "bpf: attaching to sched:sched_switch: %s", strerror(errno));
		goto err_out;
	}
	if (o->track) {
		o->fork_link = bpf_program__attach_tracepoint(o->skel->progs.offcpu_fork, "sched",
							      "sched_process_fork");
		if (!o->fork_link) {
			err = -errno;
			errmsg__set(errm, "bpf: attaching to sched:sched_process_fork: %s",
				    strerror(errno));
			goto err_out;
		}
		pr_info("bpf: --cgroup's thread table kept on sched:sched_switch and "
			"sched:sched_process_fork\n");
	}
	if (o->sums)
		pr_info("bpf: off-CPU program on sched:sched_switch; maps: %u stacks (+ %u for "
			"collisions), 2 x %u sums, %d threads off-CPU at once\n",
			cfg->stack_storage_size, bpf_load__overflow_size(cfg->stack_storage_size),
			cfg->hash_storage_size, START_ENTRIES);
	*out = o;
	return 0;

err_out:
	bpf_offcpu__close(o);
	return err;
}

int bpf_offcpu__start(struct bpf_offcpu *o, struct errmsg *errm)
{
	int err;

	if (!o->sums)
		return 0;	/* the thread table is kept from the open */
	o->config.next_pid_off = o->next_pid_off;
	o->last_switch_ms = mono_ms();
	o->since_ns = o->prev_since_ns = (uint64_t)mono_ns();
	err = write_config(o);
	if (err)
		errmsg__set(errm, "bpf: starting the off-CPU program: %s", strerror(-err));
	return err;
}

void bpf_offcpu__stop(struct bpf_offcpu *o)
{
	if (!o->sums)
		return;
	o->stop_ns = (uint64_t)mono_ns();
	o->config.next_pid_off = 0;
	write_config(o);
	o->stopped = true;
}

/*
 * The counts about to be drained ended (switched in) within [t0, t1]: the
 * window their samples get, narrower than the backend's since the start,
 * so that a pid's sums are told from those of a process that took the pid
 * (issue 32). Not where side-band times are not on this clock (all time).
 */
static void set_window(struct bpf_offcpu *o, uint64_t t0, uint64_t t1)
{
	struct pipeline *p = o->pipeline;

	if (p->window_start == 0 && p->window_end == UINT64_MAX)
		return;
	pipeline__set_window(p, t0, t1);
}

/* ns switched out under key k: one interval, or the kernel's sum of several. */
static int add_interval(struct bpf_offcpu *o, const struct offcpu_key *k, uint64_t ns)
{
	struct profile_key key = { .tgid = k->tgid, .tid = k->tid,
				   .user_stack_id = k->user_stack_id,
				   .kernel_stack_id = k->kernel_stack_id };
	uint64_t kbuf[MAX_STACK_DEPTH + 1];
	struct sample s;

	if (o->names && nsid_names__rename(o->names, &key.tgid, &key.tid, 1) <= 0)
		return 0;	/* outside the namespace, or not named: counted */
	memcpy(key.comm, k->comm, sizeof(key.comm));
	bpf_convert__sample(&key, ns, stack_cache__get(&o->stacks, k->kernel_stack_id),
			    stack_cache__get(&o->stacks, k->user_stack_id), kbuf, &s);
	s.kind = WEIGHT_OFFCPU_NS;
	if (o->python)
		bpf_python__sample(o->python, 0, k->tgid, k->py_stack, &s);
	found_waits__apply(o->found, k, &s);
	return pipeline__add(o->pipeline, &s);
}

static int add_entry_cb(void *ctx, const void *key, uint64_t ns)
{
	return add_interval(ctx, key, ns);
}

static int drain_map(struct bpf_offcpu *o, int idx)
{
	struct countmap cm = { .fd = o->counts_fd[idx], .key_size = sizeof(struct offcpu_key),
			       .no_batch = &o->no_batch };

	return countmap__drain(&cm, add_entry_cb, o);
}

/*
 * Threads still switched out at the end: counted up to it, as if they
 * switched in then (bcc forgets them: a thread blocked for the run after
 * it started would not show).
 */
static int count_still_off(struct bpf_offcpu *o)
{
	__u32 key = UINT32_MAX, next;	/* no thread has this id: the walk starts at the first */
	int err = 0;

	while (!err && !bpf_map_get_next_key(o->start_fd, &key, &next)) {
		struct offcpu_start st;

		key = next;
		if (bpf_map_lookup_elem(o->start_fd, &key, &st) || st.ts > o->stop_ns)
			continue;
		{
			uint64_t ns = o->stop_ns - st.ts, us = ns / 1000;
			struct offcpu_key k = { .tgid = st.tgid, .tid = key,
						.user_stack_id = st.user_stack_id,
						.kernel_stack_id = st.kernel_stack_id,
						.py_stack = st.py_stack };

			if (us < o->cfg->min_block_us || us > o->cfg->max_block_us)
				continue;
			memcpy(k.comm, st.comm, sizeof(k.comm));
			o->still_off++;
			/* Off from its switch-out to the end. */
			set_window(o, st.ts, o->stop_ns);
			err = add_interval(o, &k, ns);
		}
	}
	return err;
}

/*
 * The intervals dropped for a switch-in the program did not see, of the
 * threads profiled: the program stores every thread when the pipeline
 * keeps a launched command's, and the other threads' losses are no loss of
 * this profile.
 */
static void count_missed(struct bpf_offcpu *o)
{
	int fd = bpf_map__fd(o->skel->maps.missed);
	__u32 key = UINT32_MAX, next;	/* no thread has this id: the walk starts at the first */

	while (!bpf_map_get_next_key(fd, &key, &next)) {
		struct offcpu_missed m;
		__u32 tgid, tid;

		key = next;
		if (bpf_map_lookup_elem(fd, &key, &m))
			continue;
		tgid = m.tgid;
		tid = key;
		if (o->names && nsid_names__rename(o->names, &tgid, &tid, 0) <= 0)
			continue;
		if (pipeline__wants_thread(o->pipeline, (pid_t)tgid, (pid_t)tid))
			o->missed += m.count;
	}
}

static uint64_t stat(const struct bpf_offcpu *o, enum offcpu_stat slot)
{
	return percpu_stat(o->stats_fd, slot, o->nr_cpus);
}

int bpf_offcpu__drain(struct bpf_offcpu *o)
{
	uint64_t new_keys, switched, ended;
	int64_t now;
	int err;

	if (!o->sums)
		return 0;
	/* Before the sums: a wait read now is one still going on. */
	err = o->stopped ? 0 : found_waits__scan(o->found);
	if (err)
		return err;
	/* The names of the threads counted, all sent at their switch-out. */
	err = o->names ? nsid_names__consume(o->names) : 0;
	if (err)
		return err;
	if (o->stopped) {
		/* The active map since its switch, the other one's stragglers from before. */
		set_window(o, o->prev_since_ns, o->stop_ns);
		err = drain_map(o, 0);
		if (!err)
			err = drain_map(o, 1);
		if (!err && !o->still_off)
			err = count_still_off(o);
		if (!o->missed_counted) {
			count_missed(o);
			o->missed_counted = true;
		}
		if (o->python)
			bpf_python__end_drain(o->python);
		return err;
	}
	new_keys = stat(o, OFFCPU_STAT_NEW_KEYS);
	ended = pipeline__members_ended(o->pipeline);
	now = mono_ms();
	/* A member ended: its pid is free for another process, whose sums go in the next window. */
	if (new_keys - o->new_keys_at_switch < o->cfg->hash_storage_size / 2 &&
	    now - o->last_switch_ms < DRAIN_PERIOD_MS && ended == o->ended_at_switch)
		return 0;
	o->new_keys_at_switch = new_keys;
	o->ended_at_switch = ended;
	o->last_switch_ms = now;
	switched = (uint64_t)mono_ns();
	/* The program writes the other map from now on; runs in flight finish within 2 ms. */
	o->config.active_counts = !o->config.active_counts;
	err = write_config(o);
	if (err)
		return err;
	nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
	/*
	 * Again: a thread that first switched out after the read above may
	 * have switched in before the switch, its interval in the map drained
	 * now; its record was sent before that interval began.
	 */
	err = o->names ? nsid_names__consume(o->names) : 0;
	if (err)
		return err;
	o->drains++;
	/* Intervals that ended since the last switch, and in the 2 ms of this one. */
	set_window(o, o->since_ns, (uint64_t)mono_ns());
	o->prev_since_ns = o->since_ns;
	o->since_ns = switched;
	err = drain_map(o, !o->config.active_counts);
	if (o->python)
		bpf_python__end_drain(o->python);
	return err;
}

struct bpf_python *bpf_offcpu__python(const struct bpf_offcpu *o)
{
	return o ? o->python : NULL;
}

void bpf_offcpu__stats(const struct bpf_offcpu *o, struct backend_stats *st)
{
	uint64_t full = stat(o, OFFCPU_STAT_COUNT_FULL), start_full = stat(o, OFFCPU_STAT_START_FULL);

	if (o->track)
		st->cgroup_untracked += stat(o, OFFCPU_STAT_MEMBERS_FULL);
	if (!o->sums)
		return;
	st->switches = stat(o, OFFCPU_STAT_SWITCHES);
	st->offcpu_lost = full + start_full;
	st->offcpu_bad_intervals = stat(o, OFFCPU_STAT_BAD_DELTA);
	/* Those the missed map had no room for may be anyone's: counted, to be safe. */
	st->offcpu_missed_switch_in = o->missed + stat(o, OFFCPU_STAT_MISSED_UNKEYED);
	st->offcpu_still_off = o->still_off;
	st->offcpu_unreported_in += stat(o, OFFCPU_STAT_UNREPORTED_IN);
	st->stack_overflows += stat(o, OFFCPU_STAT_STACK_OVERFLOWED);
	st->pidns_unnamed += o->names ? nsid_names__unnamed(o->names) : 0;
	st->hash_full |= full > 0;
	st->drains += o->drains;
}

void bpf_offcpu__close(struct bpf_offcpu *o)
{
	if (!o)
		return;
	nsid_names__free(o->names);
	if (found_waits__applied(o->found))
		pr_info("python: %llu off-CPU waits begun before their thread was known took its "
			"frames, read from the process while it waited\n",
			(unsigned long long)found_waits__applied(o->found));
	found_waits__free(o->found);
	bpf_python__free(o->python);
	bpf_link__destroy(o->fork_link);
	bpf_link__destroy(o->link);
	if (o->native && o->sums)
		offcpu_native__report(o->stats_fd, o->nr_cpus);
	offcpu_native__destroy(o->native);
	stack_cache__fini(&o->stacks);
	offcpu_idmap_bpf__destroy(o->idmap);
	offcpu_mntns_bpf__destroy(o->mntns);
	offcpu_bpf__destroy(o->skel);
	free(o);
}
