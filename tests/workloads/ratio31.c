// SPDX-License-Identifier: GPL-2.0
/*
 * Two threads whose CPU time is held at 3:1: hot_thread spins in hot_loop,
 * warm_thread spins in warm_loop only while the CPU time it spent there is
 * below a third of hot_thread's. The split holds whatever the scheduler does.
 * Prints "pid=P hot_tid=H warm_tid=W" once both threads run.
 * Usage: ratio31 [seconds]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static volatile int done;
static clockid_t hot_clock;
static pid_t hot_tid, warm_tid;
static pthread_barrier_t started;

static double clock_seconds(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* About a millisecond of pure computation: no calls, no syscalls. */
__attribute__((noinline)) static void hot_loop(void)
{
	for (unsigned long i = 0; i < 300000; i++)
		sink = sink * 31 + i;
}

__attribute__((noinline)) static void warm_loop(void)
{
	for (unsigned long i = 0; i < 300000; i++)
		sink = sink * 37 + i;
}

static void *hot_thread(void *arg)
{
	(void)arg;
	hot_tid = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(&started);
	while (!done)
		hot_loop();
	return NULL;
}

/*
 * Only the CPU time spent inside warm_loop counts: the checks are overhead.
 * The pauses are jittered so that no rhythm of this thread can lock onto a
 * sampling period and bias what a profiler sees.
 */
static void *warm_thread(void *arg)
{
	unsigned int seed = 12345;
	double in_loop = 0;

	(void)arg;
	warm_tid = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(&started);
	while (!done) {
		if (in_loop * 3 < clock_seconds(hot_clock)) {
			double before = clock_seconds(CLOCK_THREAD_CPUTIME_ID);

			warm_loop();
			in_loop += clock_seconds(CLOCK_THREAD_CPUTIME_ID) - before;
		} else {
			struct timespec pause = { 0, 97000 + (seed = seed * 1103515245 + 12345) % 211000 };

			nanosleep(&pause, NULL);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3;
	pthread_t hot, warm;
	double end;

	pthread_barrier_init(&started, NULL, 3);
	pthread_create(&hot, NULL, hot_thread, NULL);
	pthread_getcpuclockid(hot, &hot_clock);
	pthread_create(&warm, NULL, warm_thread, NULL);
	pthread_barrier_wait(&started);
	printf("pid=%d hot_tid=%d warm_tid=%d\n", (int)getpid(), (int)hot_tid, (int)warm_tid);
	fflush(stdout);

	end = clock_seconds(CLOCK_MONOTONIC) + seconds;
	while (clock_seconds(CLOCK_MONOTONIC) < end) {
		struct timespec tick = { 0, 20000000 };

		nanosleep(&tick, NULL);
	}
	done = 1;
	pthread_join(hot, NULL);
	pthread_join(warm, NULL);
	return 0;
}
