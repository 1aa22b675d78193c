// SPDX-License-Identifier: GPL-2.0
/*
 * Threads that block in known ways, the truth for off-CPU profiles. Each
 * measures, with CLOCK_MONOTONIC, the time spent in its own blocking calls
 * and prints it when done, one line per measured thread:
 *
 *   offcpu tid=TID comm=NAME us=MICROSECONDS calls=N [more]
 *
 * Usage: blocking MODE [SECONDS] (default 1), MODE one of
 *   sleep     blk-sleep sleeps in nanosleep, 10 ms at a time
 *   pipe      blk-reader blocks in read() on a pipe that blk-feeder writes a
 *             byte to every 5 ms (the feeder's nanosleeps are measured too)
 *   preempt   CPUs + 1 threads blk-spinN spin and are preempted: us is the
 *             run delay of /proc/thread-self/schedstat (time runnable but not
 *             running, what --state 0 counts); wall_us - cpu_us is printed
 *             as a second opinion (it includes interrupts taken)
 *   vfork     blk-vfork vforks children that sleep 10 ms and exec /bin/true
 *             or exit: it waits in vfork() in TASK_UNINTERRUPTIBLE
 *             (TASK_KILLABLE: "D", --state 2); us is the time in vfork()
 *   deadlock  blk-lockA and blk-lockB take two mutexes in opposite orders and
 *             block for the rest of the run: us is from the blocking lock
 *             call to the end; they never return. Their "blocked" lines are
 *             printed (and flushed) as soon as both are blocked.
 *
 * The functions that block have names for the stacks: sleep_loop,
 * pipe_read_loop, pipe_feed_loop, spin_loop, vfork_loop, lock_forever.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64

struct result {
	pthread_t thread;
	char comm[16];
	pid_t tid;
	uint64_t us;
	uint64_t calls;
	/* preempt only */
	uint64_t wall_us, cpu_us;
};

static double seconds = 1;
static struct result results[MAX_THREADS];
static int nr_results;
static volatile unsigned long sink;

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t mono_ns(void)
{
	return now_ns(CLOCK_MONOTONIC);
}

static void die(const char *what)
{
	fprintf(stderr, "blocking: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Every thread names itself and records its tid before it blocks. */
static void thread_init(struct result *r)
{
	prctl(PR_SET_NAME, r->comm);
	__atomic_store_n(&r->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
}

__attribute__((noinline)) static void sleep_loop(struct result *r)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	uint64_t end = mono_ns() + (uint64_t)(seconds * 1e9);

	while (mono_ns() < end) {
		uint64_t t0 = mono_ns();

		nanosleep(&ts, NULL);
		r->us += (mono_ns() - t0) / 1000;
		r->calls++;
	}
}

static void *sleep_thread(void *arg)
{
	thread_init(arg);
	sleep_loop(arg);
	return NULL;
}

static int pipe_fds[2];

__attribute__((noinline)) static void pipe_read_loop(struct result *r)
{
	char c;

	for (;;) {
		uint64_t t0 = mono_ns();
		ssize_t n = read(pipe_fds[0], &c, 1);

		r->us += (mono_ns() - t0) / 1000;
		r->calls++;
		if (n == 0)
			return;
		if (n < 0 && errno != EINTR)
			die("read");
	}
}

__attribute__((noinline)) static void pipe_feed_loop(struct result *r)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	uint64_t end = mono_ns() + (uint64_t)(seconds * 1e9);

	while (mono_ns() < end) {
		uint64_t t0 = mono_ns();

		nanosleep(&ts, NULL);
		r->us += (mono_ns() - t0) / 1000;
		r->calls++;
		if (write(pipe_fds[1], "x", 1) != 1)
			die("write");
	}
	close(pipe_fds[1]);
}

static void *pipe_reader(void *arg)
{
	thread_init(arg);
	pipe_read_loop(arg);
	return NULL;
}

static void *pipe_feeder(void *arg)
{
	thread_init(arg);
	pipe_feed_loop(arg);
	return NULL;
}

/* This thread's run delay in ns: the second number of its schedstat (CONFIG_SCHED_INFO). */
static uint64_t run_delay_ns(void)
{
	unsigned long long on_cpu, delay;
	FILE *f = fopen("/proc/thread-self/schedstat", "re");
	int n;

	if (!f)
		die("/proc/thread-self/schedstat");
	n = fscanf(f, "%llu %llu", &on_cpu, &delay);
	fclose(f);
	if (n != 2)
		die("schedstat");
	return delay;
}

__attribute__((noinline)) static void spin_loop(struct result *r)
{
	uint64_t delay0 = run_delay_ns(), wall0 = mono_ns();
	uint64_t cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	uint64_t end = wall0 + (uint64_t)(seconds * 1e9);

	while (mono_ns() < end)
		for (int i = 0; i < 1000; i++)
			sink = sink * 31 + i;
	r->wall_us = (mono_ns() - wall0) / 1000;
	r->cpu_us = (now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0) / 1000;
	r->us = (run_delay_ns() - delay0) / 1000;
}

static void *spin_thread(void *arg)
{
	thread_init(arg);
	spin_loop(arg);
	return NULL;
}

/* The child shares our memory and stack until it execs or exits: raw system calls only. */
__attribute__((noinline)) static void vfork_loop(struct result *r)
{
	static char *const argv[] = { "true", NULL };
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	uint64_t end = mono_ns() + (uint64_t)(seconds * 1e9);

	while (mono_ns() < end) {
		uint64_t t0 = mono_ns();
		pid_t pid = vfork();

		if (pid == 0) {
			syscall(SYS_nanosleep, &ts, NULL);
			if (r->calls % 2)
				syscall(SYS_execve, "/bin/true", argv, NULL);
			syscall(SYS_exit, 0);
		}
		r->us += (mono_ns() - t0) / 1000;
		r->calls++;
		if (pid < 0)
			die("vfork");
		waitpid(pid, NULL, 0);
	}
}

static void *vfork_thread(void *arg)
{
	thread_init(arg);
	vfork_loop(arg);
	return NULL;
}

static pthread_mutex_t locks[2] = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER };
static pthread_barrier_t both_hold;
static uint64_t blocked_since[2];

__attribute__((noinline)) static void lock_forever(int first)
{
	pthread_mutex_lock(&locks[first]);
	pthread_barrier_wait(&both_hold);
	__atomic_store_n(&blocked_since[first], mono_ns(), __ATOMIC_RELEASE);
	pthread_mutex_lock(&locks[!first]);	/* never returns */
}

static void *lock_thread(void *arg)
{
	struct result *r = arg;

	thread_init(r);
	lock_forever(r - results);
	return NULL;
}

static struct result *add_thread(const char *comm, void *(*fn)(void *))
{
	struct result *r = &results[nr_results++];

	snprintf(r->comm, sizeof(r->comm), "%s", comm);
	if (pthread_create(&r->thread, NULL, fn, r))
		die("pthread_create");
	return r;
}

static void print_result(const struct result *r)
{
	printf("offcpu tid=%d comm=%s us=%llu calls=%llu", r->tid, r->comm,
	       (unsigned long long)r->us, (unsigned long long)r->calls);
	if (r->wall_us)
		printf(" wall_us=%llu cpu_us=%llu", (unsigned long long)r->wall_us,
		       (unsigned long long)r->cpu_us);
	printf("\n");
}

/* Both lock threads blocked: wait until the kernel says so ("S" in their stat). */
static void wait_blocked(const struct result *r)
{
	for (int tries = 0; tries < 1000; tries++) {
		char path[64], buf[512], *p;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%d/stat", r->tid);
		f = fopen(path, "re");
		if (f) {
			p = fgets(buf, sizeof(buf), f);
			fclose(f);
			p = p ? strrchr(buf, ')') : NULL;
			if (p && __atomic_load_n(&blocked_since[r - results], __ATOMIC_ACQUIRE) &&
			    p[1] == ' ' && p[2] == 'S')
				return;
		}
		usleep(1000);
	}
	fprintf(stderr, "blocking: %s did not block\n", r->comm);
	exit(1);
}

static int run_deadlock(void)
{
	struct timespec ts;
	uint64_t end;

	pthread_barrier_init(&both_hold, NULL, 2);
	add_thread("blk-lockA", lock_thread);
	add_thread("blk-lockB", lock_thread);
	for (int i = 0; i < 2; i++) {
		while (!__atomic_load_n(&results[i].tid, __ATOMIC_ACQUIRE))
			usleep(1000);
		wait_blocked(&results[i]);
		printf("blocked tid=%d comm=%s since_ns=%llu\n", results[i].tid, results[i].comm,
		       (unsigned long long)blocked_since[i]);
	}
	fflush(stdout);
	end = blocked_since[0] + (uint64_t)(seconds * 1e9);
	ts.tv_sec = end / 1000000000ull;
	ts.tv_nsec = end % 1000000000ull;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	end = mono_ns();
	for (int i = 0; i < 2; i++) {
		results[i].us = (end - blocked_since[i]) / 1000;
		results[i].calls = 1;
		print_result(&results[i]);
	}
	fflush(stdout);
	_exit(0);	/* the deadlocked threads die with us */
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (argc > 2)
		seconds = atof(argv[2]);
	if (!strcmp(mode, "sleep")) {
		add_thread("blk-sleep", sleep_thread);
	} else if (!strcmp(mode, "pipe")) {
		if (pipe(pipe_fds))
			die("pipe");
		add_thread("blk-reader", pipe_reader);
		add_thread("blk-feeder", pipe_feeder);
	} else if (!strcmp(mode, "preempt")) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);

		for (long i = 0; i <= cpus && i < MAX_THREADS; i++) {
			char name[16];

			snprintf(name, sizeof(name), "blk-spin%ld", i);
			add_thread(name, spin_thread);
		}
	} else if (!strcmp(mode, "vfork")) {
		add_thread("blk-vfork", vfork_thread);
	} else if (!strcmp(mode, "deadlock")) {
		return run_deadlock();
	} else {
		fprintf(stderr, "usage: blocking sleep|pipe|preempt|vfork|deadlock [SECONDS]\n");
		return 2;
	}
	for (int i = 0; i < nr_results; i++)
		pthread_join(results[i].thread, NULL);
	for (int i = 0; i < nr_results; i++)
		print_result(&results[i]);
	return 0;
}
