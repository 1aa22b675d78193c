// SPDX-License-Identifier: GPL-2.0
/*
 * Two threads bouncing one byte over two pipes, the context-switch-heavy
 * load of make bench's off-CPU section: every round trip blocks each thread
 * once in read(), so it costs two switch-outs and two switch-ins at least.
 *
 * Usage: pingpong [SECONDS] [CPU] [WORK_US] (default 5 s, no pinning, no
 * work). With CPU (-1: none) both threads run on that CPU only, so every
 * switch goes from one thread straight to the other instead of through the
 * idle task. With WORK_US each thread computes that long before it answers,
 * so each blocks about that long per round trip instead of a few
 * microseconds: long enough that what a tracer costs per switch is small
 * next to it (see check_offcpu.c's short_intervals test).
 *
 * At the end it prints one line, then one per thread:
 *
 *   pingpong round_trips=N seconds=S per_sec=R
 *   offcpu tid=TID comm=pp-ping us=OFF calls=N read_us=R wall_us=W cpu_us=C steal_us=S
 *
 * W is the thread's loop in CLOCK_MONOTONIC, C its CPU time in it
 * (CLOCK_THREAD_CPUTIME_ID), and OFF = W - C the off-CPU time that tracers
 * should find: blocked, and also preempted, since a write that wakes the
 * other thread on the same CPU is often switched out runnable. R is the
 * time spent in read() (on-CPU parts included), a second opinion.
 *
 * OFF is an upper bound: in a VM whose kernel accounts steal time
 * (CONFIG_PARAVIRT_TIME_ACCOUNTING, this project's 6.18 guests), the time
 * the hypervisor runs something else while the thread is on the guest's
 * CPU is left out of C (the task clock skips it) but is no switch at all,
 * so no off-CPU tracer sees it: perf record -e sched:sched_switch and both
 * backends read 3-7% under W - C in runs where the host stole 60-100 ms of
 * the pinned CPU, and agreed with it where it stole none. No interface
 * gives a thread's own steal; S is the steal of every CPU the threads may
 * run on during the run (/proc/stat, in clock ticks), so that the thread's
 * off-CPU time lies between OFF - S and OFF.
 *
 * The threads are named pp-ping and pp-pong; they block in ping_loop and
 * pong_loop.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct side {
	pthread_t thread;
	const char *comm;
	int in, out;		/* read from in, answer on out */
	pid_t tid;
	uint64_t us, calls;
	uint64_t wall_us, cpu_us;	/* the thread's loop: off-CPU is their difference */
};

static int to_pong[2], to_ping[2];
static volatile int stop;
static uint64_t round_trips;
static uint64_t work_ns;	/* computed before each answer */

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

/* The steal time of the CPUs in set so far (/proc/stat's 8th value, in clock ticks), in us. */
static uint64_t steal_us(const cpu_set_t *set)
{
	unsigned long long v[8], sum = 0;
	char line[512];
	FILE *f = fopen("/proc/stat", "r");
	int cpu;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1],
			   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 9 &&
		    cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, set))
			sum += v[7];
	fclose(f);
	return sum * 1000000ull / (uint64_t)sysconf(_SC_CLK_TCK);
}

/* On-CPU for work_ns (preemption aside): the other thread waits meanwhile. */
static void work(void)
{
	uint64_t end;

	if (!work_ns)
		return;
	end = mono_ns() + work_ns;
	while (mono_ns() < end)
		;
}

static void die(const char *what)
{
	fprintf(stderr, "pingpong: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* One blocking read of one byte; 0 at end of file. */
static ssize_t timed_read(struct side *s, char *c)
{
	uint64_t t0 = mono_ns();
	ssize_t n;

	do
		n = read(s->in, c, 1);
	while (n < 0 && errno == EINTR);
	s->us += (mono_ns() - t0) / 1000;
	s->calls++;
	if (n < 0)
		die("read");
	return n;
}

/* Sends, then waits for the answer, until told to stop; closing its pipe ends pong. */
__attribute__((noinline)) static void ping_loop(struct side *s)
{
	char c = 'x';

	while (!stop) {
		work();
		if (write(s->out, &c, 1) != 1)
			die("write");
		if (timed_read(s, &c) != 1)
			break;
		round_trips++;
	}
	close(s->out);
}

__attribute__((noinline)) static void pong_loop(struct side *s)
{
	char c;

	while (timed_read(s, &c) == 1) {
		work();
		if (write(s->out, &c, 1) != 1)
			die("write");
	}
}

static void *side_main(void *arg)
{
	struct side *s = arg;
	uint64_t wall0, cpu0;

	prctl(PR_SET_NAME, s->comm);
	s->tid = (pid_t)syscall(SYS_gettid);
	wall0 = mono_ns();
	cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	if (s->in == to_pong[0])
		pong_loop(s);
	else
		ping_loop(s);
	s->cpu_us = (now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0) / 1000;
	s->wall_us = (mono_ns() - wall0) / 1000;
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 5;
	struct side sides[2];
	struct timespec ts;
	pthread_attr_t attr;
	cpu_set_t cpus;
	uint64_t t0, t1, steal0, steal;

	if (argc > 4 || seconds <= 0) {
		fprintf(stderr, "usage: pingpong [SECONDS] [CPU] [WORK_US]\n");
		return 2;
	}
	if (argc > 3)
		work_ns = strtoull(argv[3], NULL, 10) * 1000;
	if (pipe(to_pong) || pipe(to_ping))
		die("pipe");
	sides[0] = (struct side){ .comm = "pp-ping", .in = to_ping[0], .out = to_pong[1] };
	sides[1] = (struct side){ .comm = "pp-pong", .in = to_pong[0], .out = to_ping[1] };
	pthread_attr_init(&attr);
	if (sched_getaffinity(0, sizeof(cpus), &cpus))
		die("sched_getaffinity");
	if (argc > 2 && atoi(argv[2]) >= 0) {
		CPU_ZERO(&cpus);
		CPU_SET(atoi(argv[2]), &cpus);
		errno = pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus);
		if (errno)
			die("pthread_attr_setaffinity_np");
	}
	steal0 = steal_us(&cpus);
	t0 = mono_ns();
	for (int i = 0; i < 2; i++) {
		errno = pthread_create(&sides[i].thread, &attr, side_main, &sides[i]);
		if (errno)
			die("pthread_create");
	}
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	stop = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(sides[i].thread, NULL);
	t1 = mono_ns();
	steal = steal_us(&cpus) - steal0;
	printf("pingpong round_trips=%llu seconds=%.3f per_sec=%.0f\n",
	       (unsigned long long)round_trips, (t1 - t0) / 1e9, round_trips / ((t1 - t0) / 1e9));
	for (int i = 0; i < 2; i++)
		printf("offcpu tid=%d comm=%s us=%llu calls=%llu read_us=%llu wall_us=%llu "
		       "cpu_us=%llu steal_us=%llu\n", sides[i].tid, sides[i].comm,
		       (unsigned long long)(sides[i].wall_us - sides[i].cpu_us),
		       (unsigned long long)sides[i].calls, (unsigned long long)sides[i].us,
		       (unsigned long long)sides[i].wall_us, (unsigned long long)sides[i].cpu_us, (unsigned long long)steal);
	return 0;
}
