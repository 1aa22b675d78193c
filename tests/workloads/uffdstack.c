// SPDX-License-Identifier: GPL-2.0
/*
 * A hostile process for the perf backend's stack fill (stackfill.h): a
 * thread whose 64 KiB stack lies right below a range registered with
 * userfaultfd that nobody serves, so that any read past the stack's top
 * blocks until the process ends. Usage: uffdstack SECONDS
 * Prints "ready" once the thread spins. Needs userfaultfd (root, or
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

int main(int argc, char **argv)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	pthread_attr_t attr;
	pthread_t t;
	char *area;
	int uffd;

	seconds = argc > 1 ? atof(argv[1]) : 3;
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
	if (pthread_attr_init(&attr) || pthread_attr_setstack(&attr, area, STACK) ||
	    pthread_create(&t, &attr, worker, NULL))
		return 1;
	printf("ready\n");
	fflush(stdout);
	pthread_join(t, NULL);
	return 0;
}
