// SPDX-License-Identifier: GPL-2.0
/*
 * The bpf backend's counting program: loaded at the sizes the host allows,
 * with the stack-copy program of --unwind dwarf, the pid namespace's and
 * bcc's id-map variants, its settings written, then attached (attach.c).
 */
#include "backend-bpf/bpfbackend_internal.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <string.h>

#include "backend-bpf/dwarf.h"
#include "backend-bpf/idmaps.h"
#include "backend-bpf/nsids.h"
#include "backend-bpf/python.h"
#include "compat/pidns.h"

#define MIN_MAP_ENTRIES 1024

/*
 * Where pre-5.11 kernels charge maps to RLIMIT_MEMLOCK, large maps fail:
 * shrink them (stats tell the sizes in use, the run warns).
 */
static struct profile_bpf *load_sized(struct backend *b, unsigned int nr_ids, bool dwarf,
				      bool kstacks_inline, struct errmsg *errm)
{
	const struct backend_config *o = b->cfg;
	struct profile_bpf *skel;

	b->hash_size = o->hash_storage_size;
	b->stack_size = o->stack_storage_size;
	/* With dwarf, generation 0's stacks are never emptied: the run's size. */
	if (!o->stack_storage_given && !dwarf)
		b->stack_size = bpf_backend__stack_size_for_rate(o, MIN_MAP_ENTRIES,
								 o->stack_storage_size);
	b->stack_start = b->stack_size;
	for (;;) {
		/* Stack maps nothing writes are the smallest there is. */
		skel = bpf_load__program(b->hash_size, kstacks_inline ? 1 : b->stack_size, nr_ids,
					 dwarf, b->cg_mode == CGROUP_MODE_TABLE ? CGTRACK_ENTRIES : 0,
					 b->python_wanted, true);
		if (skel)
			break;
		if ((errno != EPERM && errno != ENOMEM && errno != E2BIG) ||
		    (b->hash_size <= MIN_MAP_ENTRIES && b->stack_size <= MIN_MAP_ENTRIES)) {
			errmsg__set(errm, "bpf: loading the program: %s", strerror(errno));
			return NULL;
		}
		if (b->stack_size > MIN_MAP_ENTRIES)
			b->stack_size /= 2;
		else
			b->hash_size /= 2;
	}
	return skel;
}

/* The config element written whole; the caller holds config_lock. */
static int write_config_locked(struct backend *b)
{
	__u32 zero = 0;

	return bpf_map_update_elem(b->config_fd, &zero, &b->config, BPF_ANY) ? -errno : 0;
}

int bpf_backend__write_config(struct backend *b)
{
	int err;

	pthread_mutex_lock(&b->config_lock);
	err = write_config_locked(b);
	pthread_mutex_unlock(&b->config_lock);
	return err;
}

int bpf_backend__set_lease(struct backend *b, uint64_t until_ns, bool only_longer)
{
	int err = 0;

	pthread_mutex_lock(&b->config_lock);
	if (!only_longer || b->config.copies_until_ns < until_ns) {
		b->config.copies_until_ns = until_ns;
		err = write_config_locked(b);
		if (err)
			b->config.copies_until_ns = 0;
	}
	pthread_mutex_unlock(&b->config_lock);
	return err;
}

static int setup_maps(struct backend *b)
{
	const struct backend_config *o = b->cfg;
	const pid_t *ids = o->nr_pids ? o->pids : o->tids;
	int nr_ids = o->nr_pids ? o->nr_pids : o->nr_tids;
	int fd = bpf_map__fd(b->skel->maps.filter_ids);
	/* Named by records, tasks are filtered by -p/-L once renamed, in the pipeline. */
	bool by_ids = !b->nsids;
	__u8 one = 1;

	for (int i = 0; i < nr_ids; i++) {
		__u32 id = (__u32)ids[i];

		if (bpf_map_update_elem(fd, &id, &one, BPF_ANY))
			return -errno;
	}
	b->config.flags |= (o->user_stacks ? PROFILE_CFG_USER_STACK : 0) |
			  (o->kernel_stacks ? PROFILE_CFG_KERNEL_STACK : 0) |
			  (o->include_idle ? PROFILE_CFG_INCLUDE_IDLE : 0) |
			  (o->nr_pids && by_ids ? PROFILE_CFG_FILTER_TGID : 0) |
			  (o->nr_tids && by_ids ? PROFILE_CFG_FILTER_TID : 0) |
			  (o->nr_tids && !by_ids ? PROFILE_CFG_KEY_TID : 0) |
			  (b->cg_mode == CGROUP_MODE_TABLE ? PROFILE_CFG_CGROUP_MEMBERS : 0);
	b->config.active_counts = 0;
	return bpf_backend__write_config(b);
}

/*
 * A profiler inside a pid namespace names tasks by their ids there: the
 * counting program's 5.7 variant asks the kernel for them; before 5.7 the
 * records' variant has the kernel write them into perf records
 * (nsids.h). The stack-copy program has them only in its 5.15 variant.
 */
static int open_pidns(struct backend *b, uint64_t dev, uint64_t ino, struct errmsg *errm)
{
	int err;

	if (b->dwarf && !bpf_dwarf__has_task_regs(b->dwarf)) {
		errmsg__set(errm, "bpf: %s", PIDNS_DWARF_WHY);
		return -EOPNOTSUPP;
	}
	if (!b->dwarf && (bpf_nsids__test_force || !(b->pidns = bpf_load__pidns_program(b->skel)))) {
		b->nsids = bpf_nsids__open(b->skel, b->cfg->nr_tids > 0);
		if (!b->nsids) {
			err = -errno;
			errmsg__set(errm, "bpf: " PIDNS_WHY, strerror(-err));
			return err;
		}
		pr_info("bpf: in pid namespace %llu: tasks are named by their ids there, which "
			"the kernel writes into perf records (without bpf_get_ns_current_pid_tgid, "
			"Linux 5.7)\n", (unsigned long long)ino);
		return 0;
	}
	b->config.flags |= PROFILE_CFG_PIDNS;
	b->config.pidns_dev = dev;
	b->config.pidns_ino = ino;
	pr_info("bpf: in pid namespace %llu: tasks are named by their ids there\n",
		(unsigned long long)ino);
	return 0;
}

/*
 * The stack-copy program on the counting program's maps (handed: for the
 * native unwinder's samples of processes not loaded yet; continuous: and
 * of those it leaves to copies the whole run); NULL with errno set.
 */
struct bpf_dwarf *bpf_backend__open_dwarf(struct backend *b, bool task_regs, bool handed,
					  bool continuous, struct errmsg *errm)
{
	struct bpf_dwarf_opts dopts = {
		.pipeline = b->pipeline, .cfg = b->cfg, .counting = b->skel,
		.nr_cpus = b->nr_cpus, .task_regs_wanted = task_regs,
		.lookup = bpf_backend__cached_stack, .lookup_ctx = b,
		/*
		 * System-wide, one reader for both: a second ring set cost
		 * its own thread and wakeups, and its 128 KiB rings lost
		 * records in fork storms that the 4 MiB ones hold.
		 */
		.track_tasks = b->target <= 0 && !handed,
		.python = b->python_wanted,
		.handed = handed,
		.continuous = continuous,
	};
	struct bpf_dwarf *d;

	if (!dopts.track_tasks)
		dopts.reserved_pages = (uint64_t)(SIDEBAND_PAGES + 1) * b->nr_cpus;
	d = bpf_dwarf__open(&dopts, errm);
	if (d)
		b->config.dump_chunks = bpf_dwarf__chunks(bpf_dwarf__dump_size(d),
							  bpf_dwarf__piece(d));
	return d;
}

/*
 * The counting program, and with --unwind dwarf the stack-copy program on
 * its maps. The copy program of 5.15 sends kernel stacks in its records:
 * then the stack maps are made as small as can be (the 16384 stacks of a
 * long run took a tenth of a short run's CPU to create), and made again at
 * full size if that variant is refused after all.
 */
static int load_counting(struct backend *b, bool native, bool regs_or_fp, struct errmsg *errm)
{
	const struct backend_config *o = b->cfg;
	bool dwarf = o->dwarf && o->user_stacks && !native;
	bool task_regs = dwarf && !o->test_no_task_regs && bpf_dwarf__task_regs_supported();
	bool after_native = false;	/* the copies are the tables' fallback */

	/* REGS_OR_FP: copies only by the 5.15 program, else frame-pointer walks. */
	if (regs_or_fp && dwarf && !task_regs) {
		pr_info("bpf: %s\n", PIDNS_AUTO_FP);
		dwarf = false;
	}

	for (;;) {
		b->skel = load_sized(b, (unsigned int)(o->nr_pids + o->nr_tids), dwarf, task_regs,
				     errm);
		if (!b->skel)
			return -errno;
		b->counts_fd[0] = bpf_map__fd(b->skel->maps.counts0);
		b->counts_fd[1] = bpf_map__fd(b->skel->maps.counts1);
		stack_cache__init(&b->stacks[0], bpf_map__fd(b->skel->maps.stacks));
		stack_cache__set_overflow(&b->stacks[0], bpf_map__fd(b->skel->maps.overflow0));
		stack_cache__init(&b->stacks[1], bpf_map__fd(b->skel->maps.stacks1));
		stack_cache__set_overflow(&b->stacks[1], bpf_map__fd(b->skel->maps.overflow1));
		b->poll_ms = bpf_backend__poll_interval(o, b->stack_size);
		b->stats_fd = bpf_map__fd(b->skel->maps.stats);
		b->config_fd = bpf_map__fd(b->skel->maps.config);
		/*
		 * --unwind auto: the tables in the program, else (refused) the
		 * stack copies that auto asks for beside them.
		 */
		if (native) {
			bpf_native__open(b);
			if (b->native_prog_fd >= 0 || !o->dwarf)
				return 0;
			pr_info("bpf: stack copies instead (--unwind auto)\n");
			native = false;
			after_native = true;
			dwarf = true;
			task_regs = !o->test_no_task_regs && bpf_dwarf__task_regs_supported();
			stack_cache__fini(&b->stacks[0]);
			stack_cache__fini(&b->stacks[1]);
			profile_bpf__destroy(b->skel);
			b->skel = NULL;
			continue;
		}
		if (!dwarf)
			return 0;
		b->dwarf = bpf_backend__open_dwarf(b, task_regs, false, false, errm);
		if (!b->dwarf && after_native && errno != EINTR) {
			/*
			 * The probe left the copies untried where the tables'
			 * program runs (a load of the copy program it did not
			 * use cost every run 10 ms): both refused, frame pointers.
			 */
			pr_warn("bpf: the stack copies were refused too (%s): user stacks by frame "
				"pointers\n", errmsg__reason(errm, -errno));
			errm->text[0] = '\0';
			after_native = false;
			dwarf = false;
			stack_cache__fini(&b->stacks[0]);
			stack_cache__fini(&b->stacks[1]);
			profile_bpf__destroy(b->skel);
			b->skel = NULL;
			continue;
		}
		if (!b->dwarf)
			return -errno;
		b->kstacks_inline = bpf_dwarf__has_task_regs(b->dwarf);
		if (b->kstacks_inline || !task_regs)
			return 0;
		pr_debug("bpf: the stack-copy program of 5.15 was refused: loading the stack maps "
			 "at full size for the older one\n");
		bpf_dwarf__close(b->dwarf);
		b->dwarf = NULL;
		stack_cache__fini(&b->stacks[0]);
		stack_cache__fini(&b->stacks[1]);
		profile_bpf__destroy(b->skel);
		b->skel = NULL;
		task_regs = false;
		if (regs_or_fp) {
			pr_info("bpf: %s\n", PIDNS_AUTO_FP);
			dwarf = false;
		}
	}
}

/*
 * The variant that walks user stacks by frame pointers itself, where the
 * kernel takes it (5.15, or 5.5 for user-mode samples only): the kernel's
 * walk cost 4-11 us a sample here, this one 1-2 (bpf/fpwalk.bpf.h). Its
 * tables hold a generation's stacks, a quarter of the stack map's size: a
 * generation is drained long before.
 */
static void open_fpwalk(struct backend *b)
{
	/* --stack-storage-size bounds these too: a small one asked loses stacks, as in bcc. */
	unsigned int entries = b->stack_size / 4 ? b->stack_size / 4 : 1;
	struct bpf_object *obj;
	int err = bpf_load__fpwalk_program(b->skel, entries, &b->fpwalk_regs, &b->fpwalk);

	if (err) {
		pr_info("bpf: user stacks walked by the kernel (the program that walks them "
			"itself was refused: %s)\n", strerror(-err));
		return;
	}
	obj = b->fpwalk_regs ? b->fpwalk_regs->obj : b->fpwalk->obj;
	b->fpwalk_prog_fd = bpf_program__fd(bpf_object__find_program_by_name(obj,
									      "profile_fpwalk"));
	stack_cache__set_walked(&b->stacks[0],
				bpf_map__fd(bpf_object__find_map_by_name(obj, "ustacks0")));
	stack_cache__set_walked(&b->stacks[1],
				bpf_map__fd(bpf_object__find_map_by_name(obj, "ustacks1")));
	pr_info("bpf: user stacks walked by the program (frame pointers, %u stacks a "
		"generation) for %s\n", entries,
		b->fpwalk_regs ? "every sample, no walk for kernel threads"
			       : "user-mode samples; the kernel walks the others");
}

/* The counting program on cpu-clock events: on-CPU stacks. */
int bpf_backend__open_counting(struct backend *b, struct errmsg *errm)
{
	const struct backend_config *o = b->cfg;
	uint64_t ns_dev, ns_ino;
	bool in_pidns = pidns__in_child(&ns_dev, &ns_ino);
	char why[512] = "";
	int err;

	err = cgtrack__mode(o, in_pidns, why, sizeof(why));
	if (err < 0) {
		errmsg__set(errm, "bpf: %s", why);
		return err;
	}
	b->cg_mode = err;
	if (b->cg_mode == CGROUP_MODE_TABLE)
		pr_info("bpf: --cgroup: %s; the sampling program looks threads up in a table that "
			"sched_switch keeps instead\n", why);
	/*
	 * Python frames in the kernel: the counting program of the initial pid
	 * namespace counts them, the stack copies of --unwind dwarf send them
	 * with each sample; the variants for a namespace and bcc's id maps
	 * leave them to the pipeline.
	 */
	b->python_wanted = o->interp && !in_pidns && !idmaps__filters(o) && o->user_stacks;
	/*
	 * The variants for a pid namespace and bcc's id maps have no native
	 * walk; in a namespace, auto's copies need the 5.15 program, else its
	 * stacks are frame-pointer walks (explicit dwarf is refused there).
	 */
	err = load_counting(b, o->native_unwind && o->user_stacks && !in_pidns &&
				       !idmaps__filters(o),
			    in_pidns && o->native_unwind, errm);
	if (err)
		return err;
	/* Auto's copies for the samples the tables cannot take yet (first_copies.c says where). */
	if (b->native_prog_fd >= 0 && o->dwarf)
		bpf_first_copies__open(b);
	/* The stack copies' programs were refused the walk: frames read at the drain. */
	if (b->dwarf && !bpf_dwarf__python(b->dwarf))
		b->python_wanted = false;
	if (b->python_wanted) {
		b->python = bpf_python__new(&(struct bpf_python_target){
			.host = b->skel->obj,
			.procs_fd = bpf_map__fd(b->skel->maps.py_procs),
			.threads_fd = bpf_map__fd(b->skel->maps.py_threads),
			.progs_fd = bpf_map__fd(b->skel->maps.py_progs),
			.stacks_fd = { bpf_map__fd(b->skel->maps.py_stacks0),
				       bpf_map__fd(b->skel->maps.py_stacks1) },
			.unknown_fd = bpf_map__fd(b->skel->maps.py_unknown),
			.stats_fd = b->stats_fd,
			.nr_cpus = b->nr_cpus,
			.unknown_slot = PROFILE_STAT_PY_UNKNOWN,
			.fresh_fd = -1,
			.end_given = b->dwarf != NULL });
		if (!b->python)
			return -ENOMEM;
		b->config.flags |= PROFILE_CFG_PYTHON;
	}
	if (in_pidns) {
		err = open_pidns(b, ns_dev, ns_ino, errm);
		if (err)
			return err;
	}
	if (idmaps__filters(o)) {
		err = bpf_load__idmap_program(b->skel, o, &b->idmap, &b->mntns, &b->idmap_prog);
		if (err) {
			idmaps__refused(o, "program", err, why, sizeof(why));
			errmsg__set(errm, "bpf: %s", why);
			return err;
		}
		pr_info("bpf: counting program %s: keeps tasks whose ids are in bcc's pinned "
			"map(s)\n", bpf_program__name(b->idmap_prog));
	}
	if (!b->dwarf && !b->pidns && !b->nsids && !b->idmap_prog && o->user_stacks &&
	    b->native_prog_fd < 0)
		open_fpwalk(b);
	/* The maps were loaded without it: 6-10 ms of verifying that a variant saves. */
	if (!b->dwarf && !b->pidns && !b->nsids && !b->idmap_prog && b->fpwalk_prog_fd < 0 &&
	    b->native_prog_fd < 0) {
		b->counting = bpf_load__counting_program(b->skel);
		if (!b->counting) {
			err = -errno;
			errmsg__set(errm, "bpf: loading the program: %s", strerror(-err));
			return err;
		}
	}
	err = setup_maps(b);
	if (err) {
		errmsg__set(errm, "bpf: writing the settings map: %s", strerror(-err));
		return err;
	}
	err = bpf_backend__attach_events(b, errm);
	if (!err && b->dwarf && b->kstacks_inline)
		pr_info("bpf: %d event(s); kernel stacks in the stack copies' records\n",
			b->nr_events);
	else if (!err && b->dwarf)
		pr_info("bpf: %d event(s); maps: %u + %u stacks\n", b->nr_events, b->stack_size,
			bpf_load__overflow_size(b->stack_size));
	else if (!err)
		pr_info("bpf: %d event(s); maps: 2 x (%u + %u) stacks%s, 2 x %u counts; fill "
			"looked at every %d ms\n",
			b->nr_events, b->stack_size, bpf_load__overflow_size(b->stack_size),
			o->stack_storage_given ? "" : " (for the rate)", b->hash_size, b->poll_ms);
	return err;
}

/* The threads in the cgroups now; the programs keep the table from here on. */
int bpf_backend__fill_cgroup_table(struct backend *b, struct errmsg *errm)
{
	char why[512] = "";
	uint64_t full;
	int n = cgtrack__fill(bpf_map__fd(b->skel->maps.cg_members), b->cfg, &full, why,
			      sizeof(why));

	if (n < 0) {
		errmsg__set(errm, "%s", why);
		return n;
	}
	pr_info("bpf: --cgroup: %d thread(s) in the cgroups at the start%s\n", n,
		full ? ", some not: the table is full" : "");
	b->cgroup_full_at_start = full;
	return 0;
}
