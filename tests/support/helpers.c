// SPDX-License-Identifier: GPL-2.0
#include "tests/support/tests.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void append(char **buf, size_t *len, const char *data, size_t n)
{
	*buf = realloc(*buf, *len + n + 1);
	ck_assert_ptr_nonnull(*buf);
	memcpy(*buf + *len, data, n);
	*len += n;
	(*buf)[*len] = '\0';
}

void run_cmd(char *const argv[], int timeout_s, double stop_after_s, struct run_result *r)
{
	int out[2], err[2], status;
	size_t out_len = 0, err_len = 0;
	double start = mono();
	bool stopped = false, killed = false;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	r->out = calloc(1, 1);
	r->err = calloc(1, 1);
	ck_assert(pipe(out) == 0 && pipe(err) == 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);

		dup2(devnull, 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		close(out[0]);
		close(err[0]);
		/* Only 1 and 2: what argv leaves running with them closed does not hold the run. */
		if (out[1] > 2)
			close(out[1]);
		if (err[1] > 2)
			close(err[1]);
		execv(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(126);
	}
	close(out[1]);
	close(err[1]);
	struct pollfd pfds[2] = { { out[0], POLLIN, 0 }, { err[0], POLLIN, 0 } };
	int open_fds = 2;

	while (open_fds) {
		char buf[65536];
		double elapsed = mono() - start;

		if (stop_after_s > 0 && !stopped && elapsed >= stop_after_s) {
			kill(pid, SIGINT);
			stopped = true;
		}
		if (!killed && elapsed >= timeout_s) {
			kill(pid, SIGKILL);
			killed = true;
		}
		if (poll(pfds, 2, 50) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++) {
			ssize_t n;

			if (pfds[i].fd < 0 || !(pfds[i].revents & (POLLIN | POLLHUP)))
				continue;
			n = read(pfds[i].fd, buf, sizeof(buf));
			if (n <= 0) {
				close(pfds[i].fd);
				pfds[i].fd = -1;
				open_fds--;
				continue;
			}
			if (i == 0)
				append(&r->out, &out_len, buf, n);
			else
				append(&r->err, &err_len, buf, n);
		}
	}
	struct rusage ru = { 0 };

	wait4(pid, &status, 0, &ru);
	r->rss_kb = ru.ru_maxrss;
	r->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	ck_assert_msg(!killed, "%s timed out after %d s", argv[0], timeout_s);
}

const char *const test_backends[2] = { "bpf", "perf" };

void run_ok(struct run_result *r, char *const argv[], int timeout_s)
{
	run_cmd(argv, timeout_s, 0, r);
	ck_assert_msg(r->exit_code == 0, "exit %d, stderr: %.300s", r->exit_code, r->err);
}

void run_result_free(struct run_result *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

const char *profile_bin(void)
{
	const char *p = getenv("PROFILE_BIN");

	return p ? p : "build/profile";
}

const char *seams_bin(void)
{
	const char *p = getenv("PROFILE_SEAMS_BIN");

	return p ? p : "build/tests/profile-seams";
}

const char *perf_record_cmd(void)
{
	static char cmd[128];
	const char *src = getenv("PROFILE_SRCDIR");
	char probe[512];
	struct run_result r;

	if (cmd[0])
		return cmd;
	snprintf(probe, sizeof(probe), "%s/tests/support/perf-record-options.sh", src ? src : ".");
	run_cmd((char *[]){ probe, NULL }, 60, 0, &r);
	ck_assert_msg(r.exit_code == 0, "%s: exit %d: %.300s", probe, r.exit_code, r.err);
	fputs(r.err, stderr);
	/* One line of options, nothing else: safe to paste into a command line. */
	ck_assert_msg(strspn(r.out, "abcdefghijklmnopqrstuvwxyz-\n") == strlen(r.out),
		      "%s printed %.100s", probe, r.out);
	snprintf(cmd, sizeof(cmd), "perf record %.*s", (int)strcspn(r.out, "\n"), r.out);
	run_result_free(&r);
	return cmd;
}

const char *workload(const char *name)
{
	static char paths[8][512];
	static int next;
	const char *dir = getenv("WORKLOAD_DIR");
	char *p = paths[next++ % 8];

	snprintf(p, sizeof(paths[0]), "%s/%s", dir ? dir : "build/workloads", name);
	return p;
}

/* Sum of the counts of folded lines whose stack holds needle (or starts with it: anchored). */
static uint64_t sum_lines(const char *out, const char *needle, bool anchored, size_t *lines)
{
	const char *line = out;
	uint64_t sum = 0;

	if (lines)
		*lines = 0;
	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		const char *sp = memrchr(line, ' ', len);

		if (sp && (!needle || (anchored ? (size_t)(sp - line) >= strlen(needle) &&
							   !memcmp(line, needle, strlen(needle))
						: memmem(line, sp - line, needle, strlen(needle)) != NULL))) {
			sum += strtoull(sp + 1, NULL, 10);
			if (lines)
				(*lines)++;
		}
		line += len + (nl ? 1 : 0);
	}
	return sum;
}

uint64_t folded_count(const char *out, const char *needle)
{
	return sum_lines(out, needle, false, NULL);
}

uint64_t folded_count_prefix(const char *out, const char *prefix)
{
	return sum_lines(out, prefix, true, NULL);
}

/* Sum of the counts of folded lines whose stack ends with the n bytes at leaf. */
static uint64_t folded_count_leaf(const char *out, const char *leaf, size_t n)
{
	uint64_t sum = 0;

	for (const char *line = out; *line;) {
		const char *nl = strchrnul(line, '\n'), *sp = memrchr(line, ' ', nl - line);

		if (sp && (size_t)(sp - line) >= n && !memcmp(sp - n, leaf, n))
			sum += strtoull(sp + 1, NULL, 10);
		line = *nl ? nl + 1 : nl;
	}
	return sum;
}

/* folded_count, or with a space at its end the lines whose stack ends with it. */
static uint64_t folded_count_or_leaf(const char *out, const char *stack)
{
	size_t n = strlen(stack);

	return n && stack[n - 1] == ' ' ? folded_count_leaf(out, stack, n - 1)
					: folded_count(out, stack);
}

uint64_t folded_count_from_entry(const char *out, const char *stack)
{
	static const struct {
		const char *first, *entry[3];
	} entries[] = {
	    {"start_thread;", {"clone3;", "clone;"}},
	    {"__libc_start_call_main;",
	     {"_start;__libc_start_main;", "_start;__libc_start_main_impl;"}},
	};
	const char *rest = strchr(stack, ';');
	uint64_t sum = folded_count_or_leaf(out, stack);
	char variant[1024];

	ck_assert_msg(rest, "%s: no comm", stack);
	rest++;
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
		if (strncmp(rest, entries[i].first, strlen(entries[i].first)))
			continue;
		for (size_t j = 0; j < 3 && entries[i].entry[j]; j++) {
			ck_assert_uint_lt(snprintf(variant, sizeof(variant), "%.*s%s%s",
						   (int)(rest - stack), stack, entries[i].entry[j],
						   rest),
					  sizeof(variant));
			sum += folded_count_or_leaf(out, variant);
		}
	}
	return sum;
}

uint64_t folded_count_exact(const char *out, const char *stack)
{
	size_t n = strlen(stack);
	uint64_t sum = 0;

	for (const char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, stack, n) && p[n] == ' ')
			sum += strtoull(p + n + 1, NULL, 10);
	return sum;
}

unsigned long long workload_field(const char *out, const char *comm, const char *field)
{
	char key[64];
	const char *p, *eol;

	snprintf(key, sizeof(key), " comm=%s ", comm);
	p = strstr(out, key);
	ck_assert_msg(p, "the workload printed nothing for %s:\n%.500s", comm, out);
	eol = strchr(p, '\n');
	snprintf(key, sizeof(key), " %s=", field);
	p = strstr(p, key);
	ck_assert_msg(p && (!eol || p < eol), "no %s for %s", field, comm);
	return strtoull(p + strlen(key), NULL, 10);
}

uint64_t folded_total(const char *out, size_t *lines)
{
	return sum_lines(out, NULL, false, lines);
}

double hot_share(const char *out)
{
	uint64_t hot = folded_count(out, "hot_loop"), warm = folded_count(out, "warm_loop");

	ck_assert_msg(hot + warm > 100, "too few samples: hot %lu warm %lu", (unsigned long)hot,
		      (unsigned long)warm);
	return 100.0 * hot / (hot + warm);
}

size_t count_lines_starting_with(const char *s, const char *prefix)
{
	size_t n = 0;

	while (*s) {
		const char *nl = strchr(s, '\n');

		n += !strncmp(s, prefix, strlen(prefix));
		s = nl ? nl + 1 : s + strlen(s);
	}
	return n;
}

size_t count_lines_with(const char *s, const char *needle)
{
	size_t n = 0;

	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);

		if (memmem(s, len, needle, strlen(needle)))
			n++;
		s += len + (nl ? 1 : 0);
	}
	return n;
}

size_t open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	size_t n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n - 1;	/* the directory's own */
}

void bg_start(struct bg_proc *p, char *const argv[])
{
	int out[2];
	size_t len = 0;

	memset(p, 0, sizeof(*p));
	ck_assert(pipe(out) == 0);
	p->pid = fork();
	ck_assert_int_ge(p->pid, 0);
	if (p->pid == 0) {
		dup2(out[1], 1);
		close(out[0]);
		execv(argv[0], argv);
		_exit(126);
	}
	close(out[1]);
	p->out_fd = out[0];
	while (len < sizeof(p->first_line) - 1) {
		char c;

		if (read(p->out_fd, &c, 1) != 1 || c == '\n')
			break;
		p->first_line[len++] = c;
	}
}

void bg_stop(struct bg_proc *p)
{
	if (p->pid <= 0)
		return;
	kill(p->pid, SIGKILL);
	waitpid(p->pid, NULL, 0);
	close(p->out_fd);
	p->pid = 0;
}
