/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers the test suites share. */
#ifndef TESTS_SUPPORT_TESTS_H
#define TESTS_SUPPORT_TESTS_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Tests tagged with this need root (perf_event_open system-wide, bpf). */
#define TAG_ROOT "root"

struct run_result {
	int exit_code;		/* 128 + signal if killed */
	char *out;		/* NUL-terminated stdout */
	char *err;		/* NUL-terminated stderr */
	long rss_kb;		/* the command's own peak RSS (wait4), in KB */
};

/*
 * Run argv (argv[0] a path), collect its output, kill it after timeout_s.
 * If stop_after_s > 0, send SIGINT after that many seconds.
 */
void run_cmd(char *const argv[], int timeout_s, double stop_after_s, struct run_result *r);
void run_result_free(struct run_result *r);
/* run_cmd, then fail the test unless argv exited 0 (its stderr in the message). */
void run_ok(struct run_result *r, char *const argv[], int timeout_s);
/* The backends the integration suites loop over (_i of a loop test). */
extern const char *const test_backends[2];

/* $PROFILE_BIN and $WORKLOAD_DIR/name. */
const char *profile_bin(void);
/* $PROFILE_SEAMS_BIN: profile with the test seams of tests/seams/profile_seams.c. */
const char *seams_bin(void);
const char *workload(const char *name);
/*
 * "perf record" and the options this host needs for perf to be a sound anchor
 * of a comparison (tests/support/perf-record-options.sh says which and why:
 * --buildid-mmap where the kernel corrupts the MMAP2 records of perf's events),
 * for a shell command line. The probe runs once per process, its reason on stderr.
 */
const char *perf_record_cmd(void);

/* Sum of counts of folded lines whose stack contains needle. */
uint64_t folded_count(const char *out, const char *needle);
/* The same for lines whose stack starts with prefix. */
uint64_t folded_count_prefix(const char *out, const char *prefix);
/*
 * folded_count of stack, written from its comm as a frame-pointer walk ends
 * it: a thread's "comm;start_thread;...", the main thread's
 * "comm;__libc_start_call_main;main;...". A complete unwind (--unwind dwarf,
 * auto) has the entry frames before those too, "comm;clone3;start_thread;..."
 * (clone before glibc 2.34) and "comm;_start;__libc_start_main;
 * __libc_start_call_main;..." (__libc_start_main_impl with glibc's local
 * symbols): its lines count as well. Nothing else between comm and the
 * stack: a line that lost a caller counts with neither. A stack that ends
 * in a space counts the lines that end with it (its last frame the leaf).
 */
uint64_t folded_count_from_entry(const char *out, const char *stack);
/* The count of the folded line whose stack is exactly stack (0 if none). */
uint64_t folded_count_exact(const char *out, const char *stack);
/*
 * A number a workload printed on its line for a thread ("... comm=COMM ...
 * FIELD=N ...", as blocking and pingpong print them); fails the test when
 * the line or the field is missing.
 */
unsigned long long workload_field(const char *out, const char *comm, const char *field);
/* Sum of all counts of folded output; number of lines in *lines. */
uint64_t folded_total(const char *out, size_t *lines);
/* Share of hot_loop among hot_loop + warm_loop samples (ratio31), in percent. */
double hot_share(const char *folded);
/* Number of lines in s that start with prefix. */
size_t count_lines_starting_with(const char *s, const char *prefix);
/* Number of lines in s that contain needle. */
size_t count_lines_with(const char *s, const char *needle);

/* How many descriptors this process has open (/proc/self/fd). */
size_t open_fds(void);

/* A process started in the background, its first stdout line kept. */
struct bg_proc {
	pid_t pid;
	int out_fd;
	char first_line[256];
};
void bg_start(struct bg_proc *p, char *const argv[]);
void bg_stop(struct bg_proc *p);

#endif
