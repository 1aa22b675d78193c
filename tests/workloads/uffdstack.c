// SPDX-License-Identifier: GPL-2.0
/*
 * A hostile process for the perf backend's stack fill (stackfill.h): a
 * thread whose 64 KiB stack lies right below a range registered with
 * userfaultfd that nobody serves, so that any read past the stack's top
 * blocks until the process ends. Usage: uffdstack SECONDS [SERVE_MS]
 * With SERVE_MS, a thread serves each fault that late (a zero page): a
 * read that is slow, not stuck. Prints "ready" once the thread spins. Needs userfaultfd (root, or
 * vm.unprivileged_userfaultfd); exits 3 where it is refused.
 */
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define STACK (64 << 10)
#define TRAP (64 << 10)

static volatile unsigned long sink;
static double seconds;
static int uffd, serve_ms;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void uffd_spin(void)
{
	double end = now() + seconds;

	while (now() < end)
		for (int i = 0; i < 100000; i++)
			sink = sink * 33 + i;
}

static void *worker(void *arg)
{
	(void)arg;
	uffd_spin();
	return NULL;
}

/* Each fault served serve_ms after it came: the reader's read returns, late. */
static void *server(void *arg)
{
	struct uffd_msg msg;

	(void)arg;
	while (read(uffd, &msg, sizeof(msg)) == (ssize_t)sizeof(msg)) {
		struct timespec ts = { serve_ms / 1000, (long)(serve_ms % 1000) * 1000000L };
		struct uffdio_zeropage zp;

		if (msg.event != UFFD_EVENT_PAGEFAULT)
			continue;
		nanosleep(&ts, NULL);
		zp.range.start = msg.arg.pagefault.address & ~4095ull;
		zp.range.len = 4096;
		zp.mode = 0;
		ioctl(uffd, UFFDIO_ZEROPAGE, &zp);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	pthread_attr_t attr;
	pthread_t t, s;
	char *area;

	seconds = argc > 1 ? atof(argv[1]) : 3;
	serve_ms = argc > 2 ? atoi(argv[2]) : 0;
	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) {
		perror("userfaultfd");
		return 3;
	}
	/* The stack, then the trap right above it: one mapping split by the registration. */
	area = mmap(NULL, STACK + TRAP, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		return 1;
	reg.range.start = (unsigned long)(area + STACK);
	reg.range.len = TRAP;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		perror("UFFDIO_REGISTER");
		return 3;
	}
	if (serve_ms > 0 && pthread_create(&s, NULL, server, NULL))
		return 1;
	if (pthread_attr_init(&attr) || pthread_attr_setstack(&attr, area, STACK) ||
	    pthread_create(&t, &attr, worker, NULL))
		return 1;
	printf("ready\n");
	fflush(stdout);
	pthread_join(t, NULL);
	return 0;
}
