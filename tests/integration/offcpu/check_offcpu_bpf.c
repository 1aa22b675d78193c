// SPDX-License-Identifier: GPL-2.0
/*
 * The off-CPU program (bpf/offcpu.bpf.c) on this kernel, as root: loaded
 * from its object with the settings compat/tracepoint.c reads from tracefs,
 * attached to sched:sched_switch, run against tests/workloads/blocking,
 * whose threads print how long they blocked. The microseconds the program
 * counts for each thread are within 5% of that; kernel stacks start in the
 * scheduler, with no frame of the tracing path (the skip count is
 * calibrated first, as the loader must).
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <libgen.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bpf/offcpu_maps.h"
#include "compat/tracepoint.h"
#include "core/sym/ksym.h"
#include "tests/support/tests.h"

#define MAX_THREADS 16

struct offcpu_test {
	struct bpf_object *obj;
	struct bpf_link *link;
	int perf_fd;
	int config_fd, filter_fd, stacks_fd, start_fd, stats_fd;
	int counts_fds[2];
	int counts_fd;			/* the one of counts_fds the settings make active */
	struct offcpu_config cfg;
	struct ksyms *ks;
};

/* What the workload printed: one line per measured thread. */
struct truth {
	int nr;
	struct {
		int tid;
		char comm[16];
		unsigned long long us;
	} t[MAX_THREADS];
};

static struct offcpu_test T;
/* The layout's next_pid offset: 0 in the settings turns the program off. */
static __u32 tp_next_pid_off;

static int map_fd(const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(T.obj, name);

	ck_assert_msg(m, "no map %s", name);
	return bpf_map__fd(m);
}

static void write_config(void)
{
	__u32 zero = 0;

	ck_assert_int_eq(bpf_map_update_elem(T.config_fd, &zero, &T.cfg, BPF_ANY), 0);
}

/* The object next to $PROFILE_BPF_OBJ (the test build has no -I for skeletons). */
static void open_and_load(void)
{
	const char *profile_obj = getenv("PROFILE_BPF_OBJ");
	char dir[4096], path[4200], tracefs[4096], why[256] = "";
	struct sched_switch_layout layout;
	struct tp_format *fmt = calloc(1, sizeof(*fmt));
	int err;

	ck_assert_ptr_nonnull(profile_obj);
	ck_assert_ptr_nonnull(fmt);
	snprintf(dir, sizeof(dir), "%s", profile_obj);
	snprintf(path, sizeof(path), "%s/offcpu.bpf.o", dirname(dir));

	err = tracefs__find(tracefs, sizeof(tracefs), true, why, sizeof(why));
	ck_assert_msg(!err, "tracefs: %d %s", err, why);
	err = tracepoint__read(tracefs, "sched", "sched_switch", fmt, why, sizeof(why));
	ck_assert_msg(!err, "sched_switch: %d %s", err, why);
	ck_assert_int_gt(fmt->id, 0);
	err = sched_switch__layout(fmt, &layout, why, sizeof(why));
	ck_assert_msg(!err, "layout: %d %s", err, why);

	T.obj = bpf_object__open_file(path, NULL);
	ck_assert_msg(T.obj, "open %s: %s", path, strerror(errno));
	ck_assert_int_eq(bpf_map__set_max_entries(bpf_object__find_map_by_name(T.obj, "filter_ids"),
						  16),
			 0);
	err = bpf_object__load(T.obj);
	ck_assert_msg(!err, "load %s: %d", path, err);
	T.config_fd = map_fd("config");
	T.filter_fd = map_fd("filter_ids");
	T.stacks_fd = map_fd("stacks");
	T.start_fd = map_fd("start");
	T.counts_fds[0] = map_fd("counts0");
	T.counts_fds[1] = map_fd("counts1");
	T.counts_fd = T.counts_fds[0];
	T.stats_fd = map_fd("stats");
	T.perf_fd = -1;

	memset(&T.cfg, 0, sizeof(T.cfg));
	T.cfg.prev_pid_off = layout.prev_pid_off;
	T.cfg.next_pid_off = layout.next_pid_off;
	tp_next_pid_off = layout.next_pid_off;
	T.cfg.prev_state_off = layout.prev_state_off;
	T.cfg.prev_state_size = layout.prev_state_size;
	T.cfg.state_mask = layout.state_mask;
	T.cfg.exit_states = layout.exit_states;
	T.cfg.min_us = 1;
	T.cfg.max_us = UINT64_MAX;
	T.ks = ksyms__load("/proc/kallsyms");
	ck_assert_ptr_nonnull(T.ks);
	ck_assert(!ksyms__restricted(T.ks));
	free(fmt);
}

/* By name, as libbpf does (it reads the id from tracefs itself). */
static void attach_by_name(void)
{
	struct bpf_program *prog = bpf_object__find_program_by_name(T.obj, "offcpu_switch");

	ck_assert_ptr_nonnull(prog);
	T.link = bpf_program__attach_tracepoint(prog, "sched", "sched_switch");
	ck_assert_msg(T.link, "attach: %s", strerror(errno));
}

/* By the id from compat/tracepoint.c, as on 4.9 without libbpf's tracefs lookup. */
static void attach_by_id(void)
{
	struct bpf_program *prog = bpf_object__find_program_by_name(T.obj, "offcpu_switch");
	char tracefs[4096], why[256];
	struct perf_event_attr attr;
	struct tp_format *fmt = calloc(1, sizeof(*fmt));

	ck_assert_ptr_nonnull(fmt);
	ck_assert_int_eq(tracefs__find(tracefs, sizeof(tracefs), false, why, sizeof(why)), 0);
	ck_assert_int_eq(tracepoint__read(tracefs, "sched", "sched_switch", fmt, why, sizeof(why)),
			 0);
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.size = sizeof(attr);
	attr.config = fmt->id;
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_RAW;
	/* One event is enough: the program hangs on the tracepoint, for every CPU. */
	T.perf_fd = syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	ck_assert_msg(T.perf_fd >= 0, "perf_event_open: %s", strerror(errno));
	T.link = bpf_program__attach_perf_event(prog, T.perf_fd);
	ck_assert_msg(T.link, "attach: %s", strerror(errno));
	free(fmt);
}

static void teardown(void)
{
	bpf_link__destroy(T.link);
	if (T.perf_fd >= 0)
		close(T.perf_fd);
	bpf_object__close(T.obj);
	ksyms__free(T.ks);
	memset(&T, 0, sizeof(T));
}

static unsigned long long stat_sum(enum offcpu_stat slot)
{
	int ncpu = libbpf_num_possible_cpus();
	unsigned long long vals[ncpu], sum = 0;
	__u32 key = slot;

	ck_assert_int_eq(bpf_map_lookup_elem(T.stats_fd, &key, vals), 0);
	for (int i = 0; i < ncpu; i++)
		sum += vals[i];
	return sum;
}

static void clear_map(int fd, size_t key_size)
{
	char key[64], next[64];

	ck_assert_uint_le(key_size, sizeof(key));
	while (!bpf_map_get_next_key(fd, NULL, next)) {
		memcpy(key, next, key_size);
		bpf_map_delete_elem(fd, key);
	}
}

/* Frames of a stack id, 0 if unreadable. */
static int stack_of(int id, __u64 *ips)
{
	int n = 0;

	memset(ips, 0, PROFILE_MAX_STACK_DEPTH * sizeof(*ips));
	if (id < 0 || bpf_map_lookup_elem(T.stacks_fd, &id, ips))
		return 0;
	while (n < PROFILE_MAX_STACK_DEPTH && ips[n])
		n++;
	return n;
}

/* Every frame but the first is a return address: look up addr - 1. */
static const char *ksym(__u64 ip, int frame)
{
	const char *module, *name;
	uint64_t off;

	name = ksyms__lookup(T.ks, ip - (frame > 0), &off, &module);
	return name ? name : "?";
}

static void format_stack(char *buf, size_t size, const __u64 *ips, int n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < n && len < size; i++)
		len += snprintf(buf + len, size - len, "%s%s", i ? ";" : "", ksym(ips[i], i));
}

/*
 * The loader's calibration: with skip 0, block this thread a few times and
 * find where __schedule is in its kernel stacks; that many frames belong to
 * the tracing path. Returns the skip count.
 */
static int calibrate_skip(void)
{
	struct timespec ts = { 0, 1000 * 1000 };
	__u32 tid = syscall(SYS_gettid);
	struct offcpu_key key, next;
	__u8 one = 1;
	int skip = -1, seen = 0;

	ck_assert_int_eq(bpf_map_update_elem(T.filter_fd, &tid, &one, BPF_ANY), 0);
	T.cfg.flags = OFFCPU_CFG_FILTER_TID | OFFCPU_CFG_KERNEL_STACK;
	T.cfg.kernel_skip = 0;
	write_config();
	for (int i = 0; i < 5; i++)
		nanosleep(&ts, NULL);
	T.cfg.flags = 0;
	T.cfg.next_pid_off = 0;	/* off while the maps are cleared */
	write_config();
	T.cfg.next_pid_off = tp_next_pid_off;

	memset(&key, 0xff, sizeof(key));
	while (!bpf_map_get_next_key(T.counts_fd, &key, &next)) {
		__u64 ips[PROFILE_MAX_STACK_DEPTH];
		char buf[2048];
		int n;

		key = next;
		if (key.tid != tid)
			continue;
		n = stack_of(key.kernel_stack_id, ips);
		format_stack(buf, sizeof(buf), ips, n);
		for (int i = 0; i < n; i++) {
			if (!strcmp(ksym(ips[i], i), "__schedule")) {
				ck_assert_msg(skip < 0 || skip == i, "__schedule at %d and %d: %s",
					      skip, i, buf);
				skip = i;
				break;
			}
		}
		if (!seen++)
			fprintf(stderr, "offcpu_bpf: skip 0: %s\n", buf);
	}
	ck_assert_msg(skip >= 0, "__schedule not found in %d stacks", seen);
	bpf_map_delete_elem(T.filter_fd, &tid);
	clear_map(T.counts_fd, sizeof(struct offcpu_key));
	clear_map(T.start_fd, sizeof(__u32));
	return skip;
}

/* A workload started with its pid in the filter; its stdout is read by finish_workload. */
struct workload_run {
	pid_t pid;
	FILE *out;
};

/*
 * Start the workload stopped before exec, add its pid to the filter, let it
 * run. The tgid stays the same through exec.
 */
static void start_workload(char *const argv[], __u32 flags, struct workload_run *w)
{
	int go[2], out[2];
	__u8 one = 1;
	pid_t pid;

	ck_assert(pipe(go) == 0 && pipe(out) == 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char c;

		close(go[1]);
		close(out[0]);
		dup2(out[1], 1);
		if (read(go[0], &c, 1) != 1)
			_exit(125);
		execv(argv[0], argv);
		_exit(126);
	}
	close(go[0]);
	close(out[1]);
	ck_assert_int_eq(bpf_map_update_elem(T.filter_fd, &(__u32){ pid }, &one, BPF_ANY), 0);
	T.cfg.flags = flags | OFFCPU_CFG_FILTER_TGID;
	write_config();
	ck_assert_int_eq(write(go[1], "g", 1), 1);
	close(go[1]);
	w->pid = pid;
	w->out = fdopen(out[0], "r");
	ck_assert_ptr_nonnull(w->out);
}

/* The rest of the workload's output into r->out; it must exit 0. */
static void finish_workload(struct workload_run *w, struct run_result *r)
{
	size_t len = 0;
	char buf[4096];
	int status;

	memset(r, 0, sizeof(*r));
	r->out = calloc(1, 1);
	while (fgets(buf, sizeof(buf), w->out)) {
		size_t n = strlen(buf);

		r->out = realloc(r->out, len + n + 1);
		memcpy(r->out + len, buf, n + 1);
		len += n;
	}
	fclose(w->out);
	waitpid(w->pid, &status, 0);
	r->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	r->err = calloc(1, 1);
	ck_assert_msg(r->exit_code == 0, "workload exited %d", r->exit_code);
}

/* start_workload, then finish_workload: returns the tgid. */
static int run_workload(char *const argv[], struct run_result *r, __u32 flags)
{
	struct workload_run w;

	start_workload(argv, flags, &w);
	finish_workload(&w, r);
	return w.pid;
}

static void parse_truth(const char *out, struct truth *t)
{
	const char *line = out;

	memset(t, 0, sizeof(*t));
	for (; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		unsigned long long v;
		int tid;
		char comm[16];

		if (sscanf(line, "offcpu tid=%d comm=%15s us=%llu", &tid, comm, &v) == 3 &&
		    t->nr < MAX_THREADS) {
			t->t[t->nr].tid = tid;
			snprintf(t->t[t->nr].comm, sizeof(t->t[0].comm), "%s", comm);
			t->t[t->nr].us = v;
			t->nr++;
		}
	}
	ck_assert_msg(t->nr > 0, "no result in: %s", out);
}

/*
 * Sum of counted microseconds for tid; only tgid's keys may exist. Most are
 * under comm (unless NULL): a new thread may block before it names itself.
 */
static unsigned long long counted_us(int tgid, int tid, const char *comm)
{
	unsigned long long sum = 0, named = 0;
	struct offcpu_key key, next;

	memset(&key, 0xff, sizeof(key));
	while (!bpf_map_get_next_key(T.counts_fd, &key, &next)) {
		__u64 ns;

		key = next;
		ck_assert_int_eq((int)key.tgid, tgid);
		if ((int)key.tid != tid || bpf_map_lookup_elem(T.counts_fd, &key, &ns))
			continue;
		sum += ns;
		if (!comm || !strcmp(key.comm, comm))
			named += ns;
	}
	/* The maps hold nanoseconds. */
	ck_assert_msg(named * 100 >= sum * 95, "tid %d: %llu of %llu ns as %s", tid, named, sum,
		      comm);
	return sum / 1000;
}

/* Names of the tracing path that must not be in a stack that starts in the scheduler. */
static bool tracing_frame(const char *name)
{
	static const char *const prefixes[] = { "bpf_", "__bpf", "perf_", "trace_call_bpf",
						"__traceiter_", "trace_event_", "?" };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* Every kernel stack of tid starts at __schedule, with no frame of the tracing path. */
static void assert_kernel_stacks(int tid, const char *must_contain)
{
	struct offcpu_key key, next;
	int stacks = 0, found = 0;
	char other[4096] = "";

	memset(&key, 0xff, sizeof(key));
	while (!bpf_map_get_next_key(T.counts_fd, &key, &next)) {
		__u64 ips[PROFILE_MAX_STACK_DEPTH];
		char buf[4096];
		int n;

		key = next;
		if ((int)key.tid != tid)
			continue;
		n = stack_of(key.kernel_stack_id, ips);
		ck_assert_msg(n > 0, "tid %d: kernel stack id %d", tid, key.kernel_stack_id);
		format_stack(buf, sizeof(buf), ips, n);
		ck_assert_msg(!strcmp(ksym(ips[0], 0), "__schedule"), "first frame: %s", buf);
		for (int i = 0; i < n; i++)
			ck_assert_msg(!tracing_frame(ksym(ips[i], i)), "frame %d: %s", i, buf);
		if (!must_contain || strstr(buf, must_contain))
			found++;
		else if (!other[0])
			snprintf(other, sizeof(other), "%s", buf);
		stacks++;
	}
	ck_assert_msg(stacks > 0 && found > 0, "tid %d: %d stacks, %d with %s; one: %s", tid,
		      stacks, found, must_contain, other);
}

/* Threads that exited were not stored (exit_states): nothing of tgid is left. */
static void assert_none_left_in_start(int tgid)
{
	__u32 key = 0, next;

	while (!bpf_map_get_next_key(T.start_fd, key ? &key : NULL, &next)) {
		struct offcpu_start st;

		key = next;
		if (bpf_map_lookup_elem(T.start_fd, &key, &st))
			continue;
		ck_assert_msg((int)st.tgid != tgid, "tid %u of %d left in start, state %#llx", key,
			      tgid, (unsigned long long)st.state);
	}
}

/*
 * Nothing lost, and the runs the kernel skipped (recursion misses: another
 * tracing program or a map system call on that CPU, e.g. other profilers on
 * this machine) and the intervals dropped for them, printed.
 */
static void assert_no_losses(void)
{
	struct bpf_program *prog = bpf_object__find_program_by_name(T.obj, "offcpu_switch");
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	ck_assert_int_eq(bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len), 0);
	fprintf(stderr, "offcpu_bpf: %llu runs, %llu skipped by the kernel, %llu intervals "
		"dropped for a missed switch-in\n", stat_sum(OFFCPU_STAT_SWITCHES),
		(unsigned long long)info.recursion_misses,
		stat_sum(OFFCPU_STAT_MISSED_SWITCH_IN));
	ck_assert_uint_gt(stat_sum(OFFCPU_STAT_SWITCHES), 0);
	ck_assert_uint_eq(stat_sum(OFFCPU_STAT_BAD_CTX), 0);
	ck_assert_uint_eq(stat_sum(OFFCPU_STAT_BAD_DELTA), 0);
	ck_assert_uint_eq(stat_sum(OFFCPU_STAT_START_FULL), 0);
	ck_assert_uint_eq(stat_sum(OFFCPU_STAT_COUNT_FULL), 0);
}

#define BLOCKING(mode, secs) ((char *[]){ (char *)workload("blocking"), mode, secs, NULL })
#define ATTEMPTS 3

static bool within_5pct(const char *what, unsigned long long truth, unsigned long long counted)
{
	fprintf(stderr, "offcpu_bpf: %s: workload %llu us, bpf %llu us (%+.2f%%)\n", what, truth,
		counted, truth ? 100.0 * ((double)counted - truth) / truth : 0.0);
	return counted * 100 >= truth * 95 && counted * 100 <= truth * 105;
}

/*
 * Run blocking MODE for a second with the settings' flags plus the tgid
 * filter; every measured thread's counted microseconds must be within 5% of
 * its own measure. The kernel does not report every switch-in (see
 * OFFCPU_STAT_MISSED_SWITCH_IN): a run that misses by intervals dropped for
 * that is repeated, up to ATTEMPTS runs. Returns the tgid, the truth in *t.
 */
static int run_and_compare(const char *mode, __u32 flags, struct truth *t)
{
	for (int attempt = 1;; attempt++) {
		unsigned long long dropped = stat_sum(OFFCPU_STAT_MISSED_SWITCH_IN);
		struct run_result r;
		bool ok = true;
		int tgid;

		clear_map(T.counts_fd, sizeof(struct offcpu_key));
		tgid = run_workload(BLOCKING((char *)mode, "1"), &r, flags);
		parse_truth(r.out, t);
		run_result_free(&r);
		for (int i = 0; i < t->nr; i++) {
			char what[64];

			snprintf(what, sizeof(what), "%s %s", mode, t->t[i].comm);
			ok &= within_5pct(what, t->t[i].us, counted_us(tgid, t->t[i].tid,
								      t->t[i].comm));
		}
		if (ok)
			return tgid;
		dropped = stat_sum(OFFCPU_STAT_MISSED_SWITCH_IN) - dropped;
		ck_assert_msg(dropped > 0 && attempt < ATTEMPTS,
			      "%s: not within 5%% in run %d, %llu intervals dropped", mode, attempt,
			      dropped);
		fprintf(stderr, "offcpu_bpf: %s: %llu intervals dropped for unreported switch-ins: "
			"again\n", mode, dropped);
	}
}

#define ALL_STACKS (OFFCPU_CFG_USER_STACK | OFFCPU_CFG_KERNEL_STACK)

/* The sleeping thread's 10 ms naps, summed, and their kernel stacks. */
START_TEST(sleep_is_counted_within_5pct)
{
	struct truth t;
	int tgid;

	open_and_load();
	attach_by_name();
	T.cfg.kernel_skip = calibrate_skip();
	fprintf(stderr, "offcpu_bpf: kernel_skip %u\n", T.cfg.kernel_skip);
	tgid = run_and_compare("sleep", ALL_STACKS, &t);
	ck_assert_int_eq(t.nr, 1);
	assert_kernel_stacks(t.t[0].tid, "hrtimer_nanosleep");
	assert_none_left_in_start(tgid);
	assert_no_losses();
}
END_TEST

/*
 * The reader blocked in read(), the feeder in its naps: attached by
 * tracepoint id, counted into the second count map.
 */
START_TEST(pipe_is_counted_within_5pct)
{
	struct offcpu_key key;
	struct truth t;

	open_and_load();
	attach_by_id();
	T.cfg.kernel_skip = calibrate_skip();
	T.cfg.active_counts = 1;
	T.counts_fd = T.counts_fds[1];
	run_and_compare("pipe", ALL_STACKS, &t);
	ck_assert_int_ne(bpf_map_get_next_key(T.counts_fds[0], NULL, &key), 0);
	ck_assert_int_eq(t.nr, 2);
	assert_kernel_stacks(t.t[0].tid, "pipe_read");
	assert_no_losses();
}
END_TEST

/* --state 0: spinners preempted while runnable, against their schedstat run delay. */
START_TEST(preempted_time_is_counted_with_state_0)
{
	struct truth t;
	int tgid;

	open_and_load();
	attach_by_name();
	T.cfg.state = 0;
	tgid = run_and_compare("preempt", OFFCPU_CFG_FILTER_STATE, &t);
	ck_assert_int_ge(t.nr, 2);
	/*
	 * The main thread waits in pthread_join (S) for the whole run: not
	 * counted. Its preemptions are, which under load take a few 10 ms.
	 */
	ck_assert_uint_lt(counted_us(tgid, tgid, NULL), 250000);
	assert_no_losses();
}
END_TEST

/* --state 2: the parent waits in vfork() uninterruptibly, its joins and waitpids are not. */
START_TEST(vfork_time_is_counted_with_state_2)
{
	struct truth t;
	int tgid;

	open_and_load();
	attach_by_name();
	T.cfg.kernel_skip = calibrate_skip();
	T.cfg.state = 2;
	tgid = run_and_compare("vfork", OFFCPU_CFG_FILTER_STATE | OFFCPU_CFG_KERNEL_STACK, &t);
	ck_assert_int_eq(t.nr, 1);
	assert_kernel_stacks(t.t[0].tid, "sys_vfork");
	/*
	 * The main thread waits for it in S; its own rare D waits (its
	 * mmap_lock while a thread starts, 164 us in one CI run) stay short.
	 */
	ck_assert_uint_lt(counted_us(tgid, tgid, NULL), 50000);
	assert_no_losses();
}
END_TEST

/*
 * Threads blocked for the rest of the run are in the start map while it
 * lasts (what the loader counts up to its end), with their stacks; killed
 * at exit, they are switched in and counted.
 */
START_TEST(deadlocked_threads_wait_in_start_then_count)
{
	struct workload_run w;
	struct run_result r;
	struct truth t;
	int nr = 0;

	open_and_load();
	attach_by_name();
	T.cfg.kernel_skip = calibrate_skip();
	start_workload(BLOCKING("deadlock", "1"), ALL_STACKS, &w);
	while (nr < 2) {
		char line[256], comm[16];
		unsigned long long since;
		struct offcpu_start st;
		__u64 ips[PROFILE_MAX_STACK_DEPTH];
		char buf[4096];
		__u32 tid;
		int n;

		ck_assert_ptr_nonnull(fgets(line, sizeof(line), w.out));
		if (sscanf(line, "blocked tid=%u comm=%15s since_ns=%llu", &tid, comm, &since) != 3)
			continue;
		nr++;
		ck_assert_msg(!bpf_map_lookup_elem(T.start_fd, &tid, &st), "%s not in start", comm);
		ck_assert_int_eq((int)st.tgid, w.pid);
		ck_assert_str_eq(st.comm, comm);
		/* Switched out in the lock call, after the workload took its time. */
		ck_assert_msg(st.ts >= since && st.ts - since < 200000000ull, "ts %llu since %llu",
			      (unsigned long long)st.ts, since);
		ck_assert_uint_eq(st.state & T.cfg.state_mask, 1);	/* S */
		ck_assert_int_ge(st.user_stack_id, 0);
		n = stack_of(st.kernel_stack_id, ips);
		format_stack(buf, sizeof(buf), ips, n);
		ck_assert_msg(n > 0 && !strcmp(ksym(ips[0], 0), "__schedule"),
			      "kernel stack id %d, %d frames: %s", (int)st.kernel_stack_id, n, buf);
		ck_assert_msg(strstr(buf, "futex"), "%s", buf);
	}
	finish_workload(&w, &r);
	parse_truth(r.out, &t);
	ck_assert_int_eq(t.nr, 2);
	for (int i = 0; i < t.nr; i++) {
		char what[64];

		snprintf(what, sizeof(what), "deadlock %s", t.t[i].comm);
		ck_assert_msg(within_5pct(what, t.t[i].us,
					  counted_us(w.pid, t.t[i].tid, t.t[i].comm)),
			      "%s", what);
	}
	assert_none_left_in_start(w.pid);
	assert_no_losses();
	run_result_free(&r);
}
END_TEST

/*
 * PF_KTHREAD in /proc/PID/stat's flags; -1 if the task is gone or exiting
 * (PF_EXITING: after exit_mm it has no user stack either, and the program
 * takes it for a kernel thread).
 */
static int is_kthread(int pid)
{
	char path[64], buf[1024], *p;
	unsigned long flags;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	p = p ? strrchr(buf, ')') : NULL;
	/* ") S ppid pgrp session tty tpgid flags" */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %lu", &flags) != 1 || (flags & 0x4))
		return -1;
	return (flags & 0x00200000) != 0;
}

/* --kernel-threads-only and --user-threads-only, told apart by the user stack. */
START_TEST(thread_kind_filters)
{
	static const __u32 kinds[] = { OFFCPU_CFG_KERNEL_THREADS, OFFCPU_CFG_USER_THREADS };

	open_and_load();
	attach_by_name();
	for (int k = 0; k < 2; k++) {
		const char *kind = k ? "user-threads-only" : "kernel-threads-only";
		struct timespec ts = { 0, 5 * 1000 * 1000 };
		__u32 tid = 0, next_tid;
		struct offcpu_key key, next;
		int checked = 0;

		/* Entries stored under the other filter would be counted at their switch-in. */
		clear_map(T.start_fd, sizeof(__u32));
		clear_map(T.counts_fd, sizeof(key));
		T.cfg.flags = kinds[k] | OFFCPU_CFG_KERNEL_STACK;
		write_config();
		/*
		 * This thread blocks too: a user thread. So do its children,
		 * which also exit, when they look like kernel threads.
		 */
		for (int i = 0; i < 100; i++) {
			pid_t pid = fork();

			if (pid == 0) {
				nanosleep(&ts, NULL);
				_exit(0);
			}
			nanosleep(&ts, NULL);
			waitpid(pid, NULL, 0);
		}
		T.cfg.flags = 0;
		T.cfg.next_pid_off = 0;
		write_config();
		T.cfg.next_pid_off = tp_next_pid_off;

		memset(&key, 0xff, sizeof(key));
		while (!bpf_map_get_next_key(T.counts_fd, &key, &next)) {
			int kt;

			key = next;
			ck_assert_int_eq(key.user_stack_id, PROFILE_STACK_NOT_TAKEN);
			kt = is_kthread(key.tgid);
			if (kt < 0)
				continue;
			if (kt != (k == 0)) {
				__u64 ips[PROFILE_MAX_STACK_DEPTH];
				char buf[4096];
				int n;

				n = stack_of(key.kernel_stack_id, ips);
				format_stack(buf, sizeof(buf), ips, n);
				ck_abort_msg("%s: tgid %u (%s) kthread %d: %s", kind, key.tgid,
					     key.comm, kt, buf);
			}
			checked++;
		}
		/* Threads stored and not back yet passed the filter too. */
		while (!bpf_map_get_next_key(T.start_fd, tid ? &tid : NULL, &next_tid)) {
			struct offcpu_start st;
			int kt;

			tid = next_tid;
			if (bpf_map_lookup_elem(T.start_fd, &tid, &st))
				continue;
			kt = is_kthread(st.tgid);
			if (kt < 0)
				continue;
			ck_assert_msg(kt == (k == 0), "%s: started tgid %u (%s) kthread %d", kind,
				      st.tgid, st.comm, kt);
			checked++;
		}
		fprintf(stderr, "offcpu_bpf: %s: %d keys checked\n", kind, checked);
		ck_assert_int_gt(checked, 0);
	}
	assert_no_losses();
}
END_TEST

Suite *offcpu_bpf_suite(void)
{
	Suite *s = suite_create("offcpu_bpf");
	TCase *tc = tcase_create("kernel");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, sleep_is_counted_within_5pct);
	tcase_add_test(tc, pipe_is_counted_within_5pct);
	tcase_add_test(tc, preempted_time_is_counted_with_state_0);
	tcase_add_test(tc, vfork_time_is_counted_with_state_2);
	tcase_add_test(tc, deadlocked_threads_wait_in_start_then_count);
	tcase_add_test(tc, thread_kind_filters);
	suite_add_tcase(s, tc);
	return s;
}
