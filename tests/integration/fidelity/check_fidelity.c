// SPDX-License-Identifier: GPL-2.0
/*
 * Stack fidelity cases of issue 15 that the core and the perf backend own:
 * a process that execs itself symbolizes on both sides of the exec, on
 * both backends, in both unwinding modes; -p as root samples only the
 * process (per-task events), not every process to filter afterwards.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/tests.h"

static struct run_result r;

static void teardown(void)
{
	run_result_free(&r);
}

START_TEST(both_sides_of_an_exec_symbolize)
{
	static const char *const modes[] = { "fp", "dwarf" };

	for (int m = 0; m < 2; m++) {
		uint64_t before, after, total;

		run_ok(&r, ((char *[]){ (char *)profile_bin(), "--backend", (char *)test_backends[_i],
					"--unwind", (char *)modes[m], "-F", "499", "-f", "--",
					(char *)workload("reexec"), "700", NULL }),
		       30);
		before = folded_count(r.out, "main;spin_before_exec");
		after = folded_count(r.out, "main;spin_after_exec");
		total = folded_total(r.out, NULL);
		/* 700 ms each side (about 350 samples each, fewer on a busy host), nearly all. */
		ck_assert_msg(before > 100 && after > 100 && (before + after) * 100 >= total * 95,
			      "%s: before %llu, after %llu, of %llu:\n%.600s", modes[m],
			      (unsigned long long)before, (unsigned long long)after,
			      (unsigned long long)total, r.out);
		run_result_free(&r);
	}
}
END_TEST

#define GOFMT "/usr/lib/go-1.19/bin/gofmt"

/*
 * Issue 15, case 11: Debian's Go programs are stripped (no .symtab, no
 * DWARF); their frames are named from .gopclntab, the runtime's own table,
 * where perf prints [unknown]; in dwarf mode stacks cut at a switch to the
 * system stack are marked. gofmt reads the compiler's SSA package and the runtime.
 */
START_TEST(a_stripped_go_program_is_named)
{
	uint64_t total, unknown, rooted, marked;

	if (access(GOFMT, X_OK)) {
		fprintf(stderr, "fidelity: skipping the Go case: %s is not installed "
				"(scripts/install-deps.sh installs golang-go)\n", GOFMT);
		return;
	}
	run_ok(&r, ((char *[]){ (char *)profile_bin(), "--backend", (char *)test_backends[_i],
				"-F", "999", "-f", "--", GOFMT, "-l",
				"/usr/share/go-1.19/src/cmd/compile/internal/ssa",
				"/usr/share/go-1.19/src/runtime", NULL }),
	       60);
	total = folded_count_prefix(r.out, "gofmt;");
	/*
	 * Without .gopclntab every user frame of gofmt has no name: [gofmt], as
	 * frames with no symbol name their file (issue 45). A line with both
	 * counts twice: the bound only tightens.
	 */
	unknown = folded_count(r.out, "[unknown]") + folded_count(r.out, "[gofmt]");
	ck_assert_msg(total > 300 && unknown * 100 <= total * 2,
		      "%llu samples, %llu with [unknown] or [gofmt]:\n%.800s", (unsigned long long)total,
		      (unsigned long long)unknown, r.out);
	ck_assert_ptr_nonnull(strstr(r.out, "runtime.mallocgc"));
	ck_assert_ptr_nonnull(strstr(r.out, "go/parser."));
	run_result_free(&r);

	/*
	 * --unwind dwarf: the copy holds the stack the sample was taken on;
	 * code that runtime.systemstack, morestack or mcall runs on the system
	 * stack ends there, and says so at the root.
	 */
	run_ok(&r, ((char *[]){ (char *)profile_bin(), "--backend", (char *)test_backends[_i],
				"--unwind", "dwarf", "-F", "999", "-f", "--", GOFMT, "-l",
				"/usr/share/go-1.19/src/cmd/compile/internal/ssa",
				"/usr/share/go-1.19/src/runtime", NULL }),
	       60);
	total = folded_count_prefix(r.out, "gofmt;");
	rooted = folded_count_prefix(r.out, "gofmt;runtime.goexit;") +
		 folded_count_prefix(r.out, "gofmt;runtime.mstart;");
	marked = folded_count_prefix(r.out, "gofmt;[goroutine stack not followed];runtime.");
	/* The rest: deeper than the 16 KiB copy (a few per thousand). */
	ck_assert_msg(total > 300 && marked > 0 && (rooted + marked) * 100 >= total * 97,
		      "%llu samples: %llu from the thread's start, %llu marked:\n%.800s",
		      (unsigned long long)total, (unsigned long long)rooted,
		      (unsigned long long)marked, r.out);
}
END_TEST

#define OPENSSL "/usr/bin/openssl"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	char chunk[8192];
	size_t n;

	ck_assert_msg(f, "%s: %s", path, strerror(errno));
	ck_assert_ptr_nonnull(m);
	while ((n = fread(chunk, 1, sizeof(chunk), f)))
		fwrite(chunk, 1, n, m);
	fclose(f);
	fclose(m);
	return buf;
}

/*
 * Of the folded lines whose leaf is frame (followed by the count's space):
 * the sum of their counts, and in *top the largest count of one.
 */
static uint64_t leaf_counts(const char *text, const char *frame, uint64_t *top)
{
	uint64_t sum = 0;

	*top = 0;
	for (const char *l = text; *l;) {
		const char *nl = strchrnul(l, '\n'), *sp = memrchr(l, ' ', nl - l);
		size_t n = strlen(frame);

		if (sp && (size_t)(sp - l) > n && sp[-(long)n - 1] == ';' &&
		    !memcmp(sp - n, frame, n)) {
			uint64_t c = strtoull(sp + 1, NULL, 10);

			sum += c;
			*top = c > *top ? c : *top;
		}
		l = *nl ? nl + 1 : nl;
	}
	return sum;
}

/*
 * Issue 45: Debian's libcrypto.so.3 is stripped to its exported names, and
 * its SHA-512 (sha512_block_data_order, generated assembly) has none: a
 * frame there printed [unknown]. It names its library now, as perf's
 * stackcollapse-perf.pl does, in folded stacks and in the flame graph; two
 * addresses of the library are one frame. `openssl speed sha512` spends
 * most of its time there (about 90% of the samples here); one block size
 * (-bytes), not its six, each for -seconds.
 */
START_TEST(frames_without_symbols_name_their_library)
{
	char dir[] = "/tmp/profile-modnames-XXXXXX", folded[64], svg[64];
	uint64_t total, lib, unknown, leaf, top;
	char *text;

	if (access(OPENSSL, X_OK)) {
		fprintf(stderr, "fidelity: skipping the libcrypto case: %s is not installed "
				"(scripts/install-deps.sh installs openssl)\n", OPENSSL);
		return;
	}
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(folded, sizeof(folded), "%s/out.folded", dir);
	snprintf(svg, sizeof(svg), "%s/out.svg", dir);
	/* openssl prints its results to the same stdout: the reports go to files. */
	run_ok(&r, ((char *[]){ (char *)profile_bin(), "--backend", (char *)test_backends[_i], "-U",
				"-F", "499", "-f", "--output", folded, "--", OPENSSL, "speed",
				"-bytes", "16384", "-seconds", "2", "sha512", NULL }),
	       60);
	run_result_free(&r);
	text = slurp(folded);
	total = folded_count_prefix(text, "openssl;");
	lib = folded_count(text, ";[libcrypto.so.3]");
	unknown = folded_count(text, "[unknown]");
	/* One line for the whole unnamed code of the library under main's caller chain. */
	ck_assert_msg(total > 300 && lib * 100 >= total * 50 && unknown * 100 <= total * 5,
		      "%llu samples, %llu in [libcrypto.so.3], %llu with [unknown]:\n%.1500s",
		      (unsigned long long)total, (unsigned long long)lib,
		      (unsigned long long)unknown, text);
	/*
	 * The unnamed code is one frame: the samples in it are one line under
	 * a caller chain. The hot one, SHA-512, nine in ten of them; a
	 * complete unwind (--unwind auto) adds a few lines of their own
	 * callers in rarer paths (EVP_Digest's, EVP_MD_CTX_reset's).
	 */
	leaf = leaf_counts(text, "[libcrypto.so.3]", &top);
	ck_assert_msg(leaf > 0 && top * 10 >= leaf * 9,
		      "%llu samples end in [libcrypto.so.3], %llu of them on its largest line:\n"
		      "%.1500s",
		      (unsigned long long)leaf, (unsigned long long)top, text);
	free(text);

	run_ok(&r, ((char *[]){ (char *)profile_bin(), "--backend", (char *)test_backends[_i], "-U",
				"-F", "499", "--format", "svg", "--output", svg, "--", OPENSSL,
				"speed", "-bytes", "16384", "-seconds", "1", "sha512", NULL }),
	       60);
	text = slurp(svg);
	ck_assert_msg(strstr(text, "<title>[libcrypto.so.3] ("), "no [libcrypto.so.3] frame:\n%.2000s",
		      text);
	free(text);
	unlink(folded);
	unlink(svg);
	rmdir(dir);
}
END_TEST

/* Issue 15, case 2: with -p the perf backend opens events on the process's threads. */
START_TEST(pid_as_root_samples_only_the_process)
{
	struct bg_proc load, target;
	char pid[16];
	unsigned long taken = 0, kept = 0;
	const char *p;

	bg_start(&load, (char *[]){ (char *)workload("busy"), "2", "6", NULL });
	bg_start(&target, (char *[]){ (char *)workload("ratio31"), "5", NULL });
	snprintf(pid, sizeof(pid), "%d", (int)target.pid);
	run_ok(&r, ((char *[]){ (char *)profile_bin(), "--backend", "perf", "-v", "-F", "499", "-f",
				"-p", pid, "1", NULL }),
	       20);
	bg_stop(&target);
	bg_stop(&load);
	/* "profile: perf: N samples, M mid-run drains" */
	p = strstr(r.err, " mid-run drains");
	while (p && p > r.err && p[-1] != '\n')
		p--;
	ck_assert_msg(p && sscanf(p, "profile: perf: %lu samples", &taken) == 1, "%.500s", r.err);
	p = strstr(r.err, " kept, ");
	while (p && p > r.err && p[-1] != ' ')
		p--;
	ck_assert_msg(p && sscanf(p, "%lu kept", &kept) == 1, "%.500s", r.err);
	/* Nothing of the busy load was sampled only to be dropped. */
	ck_assert_msg(taken > 100 && kept == taken, "taken %lu, kept %lu", taken, kept);
	ck_assert_ptr_nonnull(strstr(r.err, "sampling 3 thread(s)"));
}
END_TEST

Suite *fidelity_suite(void)
{
	Suite *s = suite_create("fidelity");
	TCase *tc = tcase_create("fidelity");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 90);
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_loop_test(tc, both_sides_of_an_exec_symbolize, 0, 2);
	tcase_add_test(tc, pid_as_root_samples_only_the_process);
	tcase_add_loop_test(tc, a_stripped_go_program_is_named, 0, 2);
	tcase_add_loop_test(tc, frames_without_symbols_name_their_library, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
