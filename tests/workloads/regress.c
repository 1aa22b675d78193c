// SPDX-License-Identifier: GPL-2.0
/*
 * regress SECONDS: one program in two builds, for differential profiles.
 * The plain build spends its time in checksum() (about 3/4) and in
 * format_record() (1/4). Built with -DREGRESSION (build/workloads/
 * regress_slow), each record is also validated by validate_slowly(), which
 * takes about as long as the rest together: "what got slower since the
 * last build" has one answer, validate_slowly, whose self share goes from
 * 0 to about one half.
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void checksum(void)
{
	for (unsigned long i = 0; i < 300000; i++)
		sink += i * 2654435761u;
}

__attribute__((noinline)) static void format_record(void)
{
	for (unsigned long i = 0; i < 100000; i++)
		sink ^= i + (sink << 1);
}

#ifdef REGRESSION
__attribute__((noinline)) static void validate_slowly(void)
{
	for (unsigned long i = 0; i < 400000; i++)
		sink += (i * 7) ^ sink;
}
#endif

__attribute__((noinline)) static void process_record(void)
{
	checksum();
	format_record();
#ifdef REGRESSION
	validate_slowly();
#endif
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 2);

	while (now() < end)
		process_record();
	return 0;
}
