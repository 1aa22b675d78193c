// SPDX-License-Identifier: GPL-2.0
/*
 * Output that stays valid and a run that leaves the host as it found it
 * (issue 20, items 4-6): comms that are not text in every format, the
 * launched command's resource limits, no temp file after SIGKILL, signals
 * in every phase, errors with their reason, out of memory mid-run.
 * Each case failed before its fix.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "tests/support/tests.h"

static struct run_result r;
static char dir[] = "/tmp/profile-hygiene-XXXXXX";

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	run_result_free(&r);
	snprintf(cmd, sizeof(cmd), "mountpoint -q %s/fs && umount %s/fs; rm -rf %s", dir, dir, dir);
	ck_assert_int_eq(system(cmd), 0);
	strcpy(dir, "/tmp/profile-hygiene-XXXXXX");
}

/*
 * Comms XML 1.0 cannot carry or discourages (noncharacters, C1 and C0
 * controls, surrogates, bytes that are not UTF-8): the flame graph must
 * still parse, and show each such byte as \xNN.
 */
static char *const hostile_comms[] = {
	"61efbfbf62",	/* a U+FFFF b */
	"efbfbec285",	/* U+FFFE, U+0085 (C1) */
	"eda080ff01",	/* a surrogate, 0xff, ^A */
	"efb790f48fbfbf", /* U+FDD0, U+10FFFF */
};

/* Every character of every text and attribute is one XML 1.0 wants. */
static const char svg_check_py[] =
	"import sys, xml.etree.ElementTree as ET\n"
	"root = ET.parse(sys.argv[1]).getroot()\n"
	"def bad(c):\n"
	"    o = ord(c)\n"
	"    return (o < 0x20 and c not in '\\t\\n\\r') or 0x7f <= o <= 0x9f or \\\n"
	"        0xd800 <= o <= 0xdfff or 0xfdd0 <= o <= 0xfdef or (o & 0xfffe) == 0xfffe\n"
	"titles = []\n"
	"for e in root.iter():\n"
	"    for t in [e.text or '', e.tail or ''] + list(e.attrib.values()):\n"
	"        if any(bad(c) for c in t):\n"
	"            sys.exit('bad character in %r' % t)\n"
	"    if e.tag.endswith('title'):\n"
	"        titles.append(e.text or '')\n"
	"print('\\n'.join(titles))\n";

START_TEST(hostile_comms_keep_every_format_valid)
{
	char svg[300], pb[300], cmd[1200];
	char *argv[32];
	int n = 0;

	snprintf(svg, sizeof(svg), "%s/p.svg", dir);
	snprintf(pb, sizeof(pb), "%s/p.pb.gz", dir);
	for (int fmt = 0; fmt < 3; fmt++) {
		n = 0;
		argv[n++] = (char *)profile_bin();
		argv[n++] = "--backend";
		argv[n++] = (char *)test_backends[_i];
		argv[n++] = "-F";
		argv[n++] = "199";
		argv[n++] = "--format";
		argv[n++] = fmt == 0 ? "svg" : fmt == 1 ? "pprof" : "folded";
		if (fmt < 2) {
			argv[n++] = "--output";
			argv[n++] = fmt == 0 ? svg : pb;
		}
		argv[n++] = "--";
		argv[n++] = (char *)workload("renamed");
		argv[n++] = "1";
		for (size_t i = 0; i < sizeof(hostile_comms) / sizeof(hostile_comms[0]); i++)
			argv[n++] = hostile_comms[i];
		argv[n] = NULL;
		run_cmd(argv, 40, 0, &r);
		ck_assert_msg(r.exit_code == 0, "%.300s", r.err);
		if (fmt == 2)
			break;
		run_result_free(&r);
	}
	/*
	 * Folded is bytes, as flamegraph.pl reads them: each comm as it is but its
	 * controls, and every line one of theirs.
	 */
	{
		static const char *const folded_comms[] = {
			/* U+0085 is a C1 control: escaped as C0 ones are (issue 32). */
			"a\xef\xbf\xbf" "b;", "\xef\xbf\xbe\\xc2\\x85;",
			"\xed\xa0\x80\xff\\x01;", "\xef\xb7\x90\xf4\x8f\xbf\xbf;",
		};
		size_t lines = 0, theirs = 0;

		folded_total(r.out, &lines);
		for (size_t i = 0; i < 4; i++) {
			size_t k = count_lines_starting_with(r.out, folded_comms[i]);

			ck_assert_msg(k > 0, "no line of comm %zu: %.1000s", i, r.out);
			theirs += k;
		}
		/* Before the rename, a sample may still be under the launcher's names. */
		theirs += count_lines_starting_with(r.out, "renamed;");
		theirs += count_lines_starting_with(r.out, "profile;");
		ck_assert_msg(theirs == lines, "%zu of %zu lines: %.1000s", theirs, lines, r.out);
	}
	run_result_free(&r);

	run_cmd((char *[]){ "/usr/bin/python3", "-c", (char *)svg_check_py, svg, NULL }, 30, 0, &r);
	ck_assert_msg(r.exit_code == 0, "the SVG is not valid XML 1.0: %.500s", r.err);
	ck_assert_msg(strstr(r.out, "a\\xef\\xbf\\xbfb ("), "%.2000s", r.out);
	ck_assert_msg(strstr(r.out, "\\xef\\xbf\\xbe\\xc2\\x85 ("), "%.2000s", r.out);
	ck_assert_msg(strstr(r.out, "\\xed\\xa0\\x80\\xff\\x01 ("), "%.2000s", r.out);
	ck_assert_msg(strstr(r.out, "\\xef\\xb7\\x90\\xf4\\x8f\\xbf\\xbf ("), "%.2000s", r.out);
	run_result_free(&r);

	/* An independent reader takes the pprof file; its comm labels are UTF-8. */
	snprintf(cmd, sizeof(cmd),
		 "go tool pprof -raw '%s' > '%s/raw' && /usr/bin/python3 -c \"import sys; "
		 "t = open(sys.argv[1], 'rb').read().decode('utf-8'); "
		 "assert 'a\\uffffb' in t, t[:2000]\" '%s/raw'",
		 pb, dir, dir);
	run_cmd((char *[]){ "/bin/sh", "-c", cmd, NULL }, 60, 0, &r);
	ck_assert_msg(r.exit_code == 0, "pprof: %.500s", r.err);
}
END_TEST

/*
 * The profiler raises its own RLIMIT_NOFILE to keep files open; the command
 * it runs gets the limits it would get without the profiler.
 */
START_TEST(a_launched_command_gets_the_callers_limits)
{
	run_cmd((char *[]){ "/usr/bin/prlimit", "--nofile=1024:4096", (char *)profile_bin(), "-F",
			    "49", "-f", "--", "/bin/sh", "-c", "echo limits=$(ulimit -Sn):$(ulimit -Hn)",
			    NULL },
		30, 0, &r);
	ck_assert_msg(r.exit_code == 0, "%.300s", r.err);
	ck_assert_msg(strstr(r.out, "limits=1024:4096\n"), "%.300s", r.out);
}
END_TEST

/* Names in d (dot files too), sorted, space-separated. */
static void list_dir(const char *d, char *buf, size_t len)
{
	struct dirent **names;
	int n = scandir(d, &names, NULL, alphasort);

	ck_assert_int_ge(n, 0);
	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, "..")) {
			strncat(buf, names[i]->d_name, len - strlen(buf) - 2);
			strcat(buf, " ");
		}
		free(names[i]);
	}
	free(names);
}

/* profile --output D/out killed by SIGKILL after 1 s (or run to its end). */
static void run_to(const char *d, bool kill9)
{
	char cmd[1000];

	snprintf(cmd, sizeof(cmd),
		 "'%s' -F 49 -f --output '%s/out' -- /bin/sleep %s & p=$!; %s wait $p; echo exit=$?",
		 profile_bin(), d, kill9 ? "3" : "0.2", kill9 ? "sleep 1; kill -9 $p;" : "");
	run_cmd((char *[]){ "/bin/sh", "-c", cmd, NULL }, 30, 0, &r);
	ck_assert_msg(strstr(r.out, kill9 ? "exit=137" : "exit=0"), "%s %s", r.out, r.err);
	run_result_free(&r);
}

/* SIGKILL leaves no temporary file beside --output, on ext4 (/tmp here) and tmpfs. */
START_TEST(sigkill_leaves_no_temporary_file)
{
	char d[300], names[1000], cmd[400];
	struct stat st, st2;

	umask(022);
	snprintf(d, sizeof(d), "%s/fs", dir);
	ck_assert_int_eq(mkdir(d, 0755), 0);
	if (_i == 1) {
		snprintf(cmd, sizeof(cmd), "mount -t tmpfs none '%s'", d);
		ck_assert_int_eq(system(cmd), 0);
	}
	run_to(d, true);
	list_dir(d, names, sizeof(names));
	ck_assert_msg(!strcmp(names, ""), "left behind: %s", names);

	/* A report that exists is replaced by a finished run, never by a killed one. */
	run_to(d, false);
	list_dir(d, names, sizeof(names));
	ck_assert_str_eq(names, "out ");
	snprintf(cmd, sizeof(cmd), "%s/out", d);
	ck_assert_int_eq(stat(cmd, &st), 0);
	run_to(d, true);
	list_dir(d, names, sizeof(names));
	ck_assert_msg(!strcmp(names, "out "), "left behind: %s", names);
	ck_assert_int_eq(stat(cmd, &st2), 0);
	ck_assert_uint_eq(st.st_ino, st2.st_ino);
	run_to(d, false);
	list_dir(d, names, sizeof(names));
	ck_assert_str_eq(names, "out ");
	ck_assert_int_eq(stat(cmd, &st2), 0);
	ck_assert_uint_ne(st.st_ino, st2.st_ino);
	/* As any file created with the umask (022 here). */
	ck_assert_uint_eq(st2.st_mode & 0777, 0644);
}
END_TEST

/* Milliseconds from "ms=" in s, or -1. */
static long ms_of(const char *s)
{
	const char *p = strstr(s, "ms=");

	return p ? atol(p + 3) : -1;
}

/*
 * Ctrl-C while /proc is read at set-up (256,000 mappings in 64 processes
 * took seconds there, each signal waiting for the end) ends the run within
 * a second; with --output, no file is left.
 */
START_TEST(sigint_during_set_up_ends_it_within_a_second)
{
	struct bg_proc maps;
	char cmd[1200], out[300];

	bg_start(&maps, (char *[]){ (char *)workload("manymaps"), "4000", "60", "63", NULL });
	ck_assert_str_eq(maps.first_line, "ready");
	snprintf(out, sizeof(out), "%s/o", dir);
	ck_assert_int_eq(mkdir(out, 0755), 0);
	snprintf(cmd, sizeof(cmd),
		 "'%s' -F 49 -f --output '%s/out' 5 & p=$!; sleep 1.5; kill -INT $p; "
		 "t0=$(date +%%s%%N); wait $p; rc=$?; t1=$(date +%%s%%N); "
		 "echo exit=$rc ms=$(( (t1 - t0) / 1000000 )); ls -A '%s'",
		 profile_bin(), out, out);
	run_cmd((char *[]){ "/bin/sh", "-c", cmd, NULL }, 60, 0, &r);
	bg_stop(&maps);
	ck_assert_msg(ms_of(r.out) >= 0 && ms_of(r.out) < 1000, "%s / %s", r.out, r.err);
	if (strstr(r.out, "exit=0")) {
		/* A fast set-up: the signal ended sampling instead, and the report is whole. */
		ck_assert_msg(strstr(r.out, "\nout\n"), "%s", r.out);
		return;
	}
	ck_assert_msg(strstr(r.out, "exit=1 "), "%s / %s", r.out, r.err);
	ck_assert_str_eq(r.err, "profile: interrupted during set-up; no report\n");
	ck_assert_msg(!strstr(r.out, "out"), "left behind: %s", r.out);
}
END_TEST

/*
 * A SIGHUP during set-up is passed on to the launched command, which dies;
 * the events then opened on its pid fail (ESRCH). The run says the stop,
 * not "perf_event_open: No such process" (what it said before). The
 * signal is sent at delays across the set-up (where the events are opened
 * moves with the machine's load); each run ends one of two ways.
 */
START_TEST(sighup_during_set_up_says_the_stop)
{
	char cmd[1000];

	snprintf(cmd, sizeof(cmd),
		 "for d in 0.3 0.4 0.45 0.5 0.55 0.6 0.7; do "
		 "'%s' --backend bpf -F 49 -f -- sleep 5 > /dev/null 2> '%s/err' & p=$!; "
		 "sleep $d; kill -HUP $p; wait $p; echo \"d=$d exit=$? $(tr '\\n' '|' < '%s/err')\"; "
		 "done",
		 profile_bin(), dir, dir);
	run_cmd((char *[]){ "/bin/sh", "-c", cmd, NULL }, 120, 0, &r);
	for (const char *l = r.out; *l;) {
		const char *e = strchr(l, '\n');
		int len = e ? (int)(e - l) : (int)strlen(l);
		char line[400];

		snprintf(line, sizeof(line), "%.*s", len, l);
		/* Stopped in set-up: one line saying so; else sampling had begun and the
		 * command's death by SIGHUP (129) is the exit status, after the report. */
		ck_assert_msg(strstr(line, " exit=1 profile: interrupted during set-up; no report|") ||
				      (strstr(line, " exit=129 ") && !strstr(line, "profile:")),
			      "%s", line);
		l = e ? e + 1 : l + len;
	}
	ck_assert_uint_eq(count_lines_with(r.out, "exit="), 7);
}
END_TEST

/*
 * The signal that ends sampling asks for the report; one more during the
 * report stops it, even a report blocked on a pipe nobody reads (it waited
 * for the reader before): exit within a second, one line on stderr.
 */
START_TEST(a_second_signal_stops_the_report_within_a_second)
{
	char cmd[1500];

	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && mkfifo fifo && { sleep 30 < fifo & s=$!; "
		 "'%s' -F 999 --format svg -- '%s' 20000 1 > fifo 2> err & p=$!; "
		 "sleep 4; kill -TERM $p; t0=$(date +%%s%%N); wait $p; rc=$?; t1=$(date +%%s%%N); "
		 "kill $s; echo exit=$rc ms=$(( (t1 - t0) / 1000000 )); cat err; }",
		 dir, profile_bin(), workload("manystacks"));
	run_cmd((char *[]){ "/bin/sh", "-c", cmd, NULL }, 60, 0, &r);
	ck_assert_msg(ms_of(r.out) >= 0 && ms_of(r.out) < 1000, "%s / %s", r.out, r.err);
	ck_assert_msg(strstr(r.out, "exit=1 "), "%s / %s", r.out, r.err);
	ck_assert_msg(strstr(r.out, "\nprofile: interrupted while writing the report: the report "
				    "is incomplete\n"),
		      "%s", r.out);
	ck_assert_uint_eq(count_lines_with(r.out, "profile:"), 1);
}
END_TEST

/*
 * Memory that runs out mid-run (the seam: at 200 distinct stacks) stops
 * sampling; what was counted is still the report, with one warning and
 * exit 1 (before, the whole report was lost).
 */
START_TEST(out_of_memory_mid_run_writes_what_was_counted)
{
	char out[300];
	unsigned long long dropped = 0;
	const char *w;
	size_t lines = 0;

	snprintf(out, sizeof(out), "%s/oom", dir);
	run_cmd((char *[]){ "/usr/bin/env", "PROFILE_TEST_OOM_AFTER_STACKS=200", (char *)seams_bin(),
			    "--backend", (char *)test_backends[_i], "-F", "999", "-f", "--output", out,
			    "--", (char *)workload("manystacks"), "100000", "3", NULL },
		60, 0, &r);
	ck_assert_msg(r.exit_code == 1, "exit %d: %s", r.exit_code, r.err);
	w = strstr(r.err, "profile: out of memory: report incomplete (");
	ck_assert_msg(w && sscanf(w, "profile: out of memory: report incomplete (%llu samples "
				     "dropped)\n", &dropped) == 1, "%s", r.err);
	ck_assert_uint_eq(count_lines_with(r.err, "profile:"), 1);
	run_result_free(&r);
	run_cmd((char *[]){ "/bin/cat", out, NULL }, 10, 0, &r);
	ck_assert_uint_ge(folded_total(r.out, &lines), 200);
	ck_assert_uint_ge(lines, 190);
	ck_assert_uint_le(lines, 200);
	ck_assert_uint_gt(folded_count(r.out, "leaf"), 150);
}
END_TEST

/*
 * The kernel's own limit (RLIMIT_AS capped at the size the process has 2.5 s
 * in, one malloc arena): wherever memory runs out, a report is written, or
 * the run says why not in one line; never a crash, never silence.
 */
START_TEST(an_address_space_limit_mid_run_still_gives_a_report)
{
	char out[300], cmd[600], asan[512];
	const char *asan_was = getenv("ASAN_OPTIONS");

	snprintf(out, sizeof(out), "%s/oom.pb.gz", dir);
	/* A sanitizer's report in stderr, where it is looked for below, even if ours go to files. */
	snprintf(asan, sizeof(asan), "ASAN_OPTIONS=%s:log_path=stderr", asan_was ? asan_was : "");
	run_cmd((char *[]){ "/usr/bin/env", asan, "MALLOC_ARENA_MAX=1",
			    "PROFILE_TEST_AS_LIMIT_AFTER_MS=2500",
			    (char *)seams_bin(), "--backend", (char *)test_backends[_i], "-F", "999",
			    "--format", "pprof", "--inline", "--output", out, "--", "/usr/bin/python3",
			    "-c",
			    "import json, re\n"
			    "for _ in range(4000): re.sub('a', 'b', json.dumps(list(range(1000))))",
			    NULL },
		90, 0, &r);
	/* A sanitizer's allocator aborts where malloc would return NULL: nothing to see there. */
	if (strstr(r.err, "Sanitizer") || strstr(r.err, "ERROR: Failed to mmap"))
		return;
	ck_assert_msg(r.exit_code == 0 || (r.exit_code == 1 && strstr(r.err, "out of memory: "
									 "report incomplete")),
		      "exit %d: %s", r.exit_code, r.err);
	run_result_free(&r);
	snprintf(cmd, sizeof(cmd), "go tool pprof -raw '%s' | grep -c python3", out);
	run_cmd((char *[]){ "/bin/sh", "-c", cmd, NULL }, 60, 0, &r);
	ck_assert_msg(r.exit_code == 0 && atoi(r.out) > 0, "%s / %s", r.out, r.err);
}
END_TEST

/* workloads/renamed with its renamed_burn called sym, as prog in the test's directory. */
static void renamed_burn(const char *sym, char *prog, size_t len)
{
	char cmd[600];

	snprintf(prog, len, "%s/renamed", dir);
	snprintf(cmd, sizeof(cmd), "objcopy --redefine-sym 'renamed_burn=%s' '%s' '%s'", sym,
		 workload("renamed"), prog);
	ck_assert_int_eq(system(cmd), 0);
}

/* prog run for 1 s under comm comm_hex, profiled by backend, folded (fmt 1) or bcc's, into r. */
static void run_renamed(const char *backend, int fmt, const char *prog, const char *comm_hex)
{
	run_cmd((char *[]){ (char *)profile_bin(), "--backend", (char *)backend, "-F", "199", "-U",
			    fmt ? "-f" : "-d", "--", (char *)prog, "1", (char *)comm_hex, NULL },
		40, 0, &r);
	ck_assert_msg(r.exit_code == 0, "%.300s", r.err);
}

/*
 * Issue 32: C1 controls (U+009B is CSI, U+009D OSC: a terminal acts on
 * them as on ESC [ and ESC ]) in a comm and in a symbol name reached the
 * bcc and folded reports raw, on the terminal of whoever reads them. Both
 * must print escaped, byte by byte, as C0 controls do; nothing of a
 * control sequence may stay.
 */
START_TEST(c1_controls_in_names_are_escaped_in_text_reports)
{
	/* "x" CSI "31m" OSC "0;t" BEL: what a terminal would take as two sequences */
	static const char comm_hex[] = "78c29b33316dc29d303b7407";
	static const char sym[] = "burn\xc2\x9b" "31m\xc2\x9d" "0;t";
	char prog[300];

	renamed_burn(sym, prog, sizeof(prog));
	for (int fmt = 0; fmt < 2; fmt++) {
		const char *frame = fmt ? "burn\\xc2\\x9b31m\\xc2\\x9d0\\x3bt"
					: "burn\\xc2\\x9b31m\\xc2\\x9d0;t";
		const char *comm = fmt ? "x\\xc2\\x9b31m\\xc2\\x9d0\\x3bt\\x07"
				       : "x\\xc2\\x9b31m\\xc2\\x9d0;t\\x07";

		run_renamed(test_backends[_i], fmt, prog, comm_hex);
		/* No C1 control, and no C0 one but the newlines, anywhere in the report. */
		for (const unsigned char *c = (const unsigned char *)r.out; *c; c++) {
			ck_assert_msg(*c >= 0x20 || *c == '\n', "a raw control %#x in %.2000s", *c,
				      r.out);
			ck_assert_msg(!(c[0] == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f),
				      "a raw C1 control in %.2000s", r.out);
		}
		ck_assert_msg(strstr(r.out, frame), "no frame %s in %.2000s", frame, r.out);
		ck_assert_msg(strstr(r.out, comm), "no comm %s in %.2000s", comm, r.out);
		run_result_free(&r);
	}
}
END_TEST

/*
 * Issue 46 row 6: a right-to-left override (U+202E) or a line separator
 * (U+2028) in a comm or a symbol reached folded and bcc reports raw: a
 * terminal or an editor shows the line reordered, or as two lines. Both
 * print as their bytes, as C1 controls do, in text and folded reports.
 */
START_TEST(bidi_controls_in_names_are_escaped_in_text_reports)
{
	/* "x" RLO "y" LS "z" */
	static const char comm_hex[] = "78e280ae79e280a87a";
	static const char sym[] = "burn\xe2\x80\xae" "evil\xe2\x80\xa8" "next";
	char prog[300];

	renamed_burn(sym, prog, sizeof(prog));
	for (int fmt = 0; fmt < 2; fmt++) {
		run_renamed(test_backends[_i], fmt, prog, comm_hex);
		ck_assert_msg(!strstr(r.out, "\xe2\x80\xae") && !strstr(r.out, "\xe2\x80\xa8"),
			      "a raw bidi control or line separator in %.2000s", r.out);
		ck_assert_msg(strstr(r.out, "burn\\xe2\\x80\\xaeevil\\xe2\\x80\\xa8next"),
			      "no escaped frame in %.2000s", r.out);
		ck_assert_msg(strstr(r.out, "x\\xe2\\x80\\xaey\\xe2\\x80\\xa8z"),
			      "no escaped comm in %.2000s", r.out);
		run_result_free(&r);
	}
}
END_TEST

/*
 * Issue 32: a user who made the --output name in a sticky directory while
 * root's run went on had root's report thrown away (exit 1, written
 * nowhere); so had a directory removed meanwhile. The report is written
 * beside the name under a fresh one, or, where the directory is gone, on
 * standard output, and the error says where. The user's file stays theirs.
 */
START_TEST(a_report_whose_name_was_taken_is_written_elsewhere)
{
	bool gone = _i >= 2;
	char sticky[300], report[320], cmd[1200];
	const char *at;
	struct bg_proc user;
	struct stat st;

	ck_assert_int_eq(chmod(dir, 0755), 0);
	snprintf(sticky, sizeof(sticky), "%s/shared", dir);
	ck_assert_int_eq(mkdir(sticky, 0755), 0);
	ck_assert_int_eq(chmod(sticky, 01777), 0);
	snprintf(report, sizeof(report), "%s/report", sticky);
	/* A second into the run: the name taken by user 65534, or the directory gone. */
	if (gone)
		snprintf(cmd, sizeof(cmd), "echo ready; sleep 1; rmdir '%s'; sleep 30", sticky);
	else
		snprintf(cmd, sizeof(cmd),
			 "echo ready; sleep 1; setpriv --reuid 65534 --regid 65534 --clear-groups "
			 "sh -c 'echo theirs > %s'; sleep 30",
			 report);
	bg_start(&user, (char *[]){ "/bin/sh", "-c", cmd, NULL });
	ck_assert_str_eq(user.first_line, "ready");
	run_cmd((char *[]){ (char *)profile_bin(), "--backend", (char *)test_backends[_i % 2],
			    "-F", "199", "-f", "--output", report, "--", (char *)workload("ratio31"),
			    "3", NULL },
		60, 0, &r);
	bg_stop(&user);
	ck_assert_msg(r.exit_code == 1, "exit %d: %s", r.exit_code, r.err);
	if (gone) {
		ck_assert_msg(strstr(r.err, "; the report is on standard output instead\n"), "%s",
			      r.err);
		ck_assert_uint_gt(folded_count(r.out, "hot_loop"), 20);
		return;
	}
	at = strstr(r.err, "another user's file; not replacing it; the report is at ");
	ck_assert_msg(at, "%s", r.err);
	at = strstr(at, report);
	ck_assert_ptr_nonnull(at);
	ck_assert_uint_eq(count_lines_with(r.err, "profile:"), 1);
	snprintf(cmd, sizeof(cmd), "%.*s", (int)strcspn(at, " \n"), at);
	ck_assert_int_eq(stat(cmd, &st), 0);
	ck_assert_uint_eq(st.st_uid, 0);
	run_result_free(&r);
	run_cmd((char *[]){ "/bin/cat", cmd, NULL }, 10, 0, &r);
	ck_assert_uint_gt(folded_count(r.out, "hot_loop"), 20);
	run_result_free(&r);
	/* The user's file is as they made it. */
	run_cmd((char *[]){ "/bin/cat", report, NULL }, 10, 0, &r);
	ck_assert_str_eq(r.out, "theirs\n");
	ck_assert_int_eq(stat(report, &st), 0);
	ck_assert_uint_eq(st.st_uid, 65534);
}
END_TEST

Suite *hygiene_suite(void)
{
	Suite *s = suite_create("hygiene");
	TCase *tc = tcase_create("hygiene");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, hostile_comms_keep_every_format_valid, 0, 2);
	tcase_add_test(tc, a_launched_command_gets_the_callers_limits);
	tcase_add_loop_test(tc, sigkill_leaves_no_temporary_file, 0, 2);
	tcase_add_test(tc, sigint_during_set_up_ends_it_within_a_second);
	tcase_add_test(tc, sighup_during_set_up_says_the_stop);
	tcase_add_test(tc, a_second_signal_stops_the_report_within_a_second);
	tcase_add_loop_test(tc, out_of_memory_mid_run_writes_what_was_counted, 0, 2);
	tcase_add_loop_test(tc, an_address_space_limit_mid_run_still_gives_a_report, 0, 2);
	suite_add_tcase(s, tc);
	/* Trust, round 3 (issue 32): what reaches root's terminal, and a report never lost. */
	tc = tcase_create("round3");
	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, c1_controls_in_names_are_escaped_in_text_reports, 0, 2);
	tcase_add_loop_test(tc, bidi_controls_in_names_are_escaped_in_text_reports, 0, 2);
	tcase_add_loop_test(tc, a_report_whose_name_was_taken_is_written_elsewhere, 0, 4);
	suite_add_tcase(s, tc);
	return s;
}
