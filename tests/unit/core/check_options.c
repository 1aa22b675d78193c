// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/cli/options.h"
#include "tests/support/tests.h"

static struct run_opts opts;
static char err[512];

static enum options_result parse(const char *first, ...)
{
	static char *argv[32];	/* opts.command points into it */
	int argc = 1;
	va_list ap;

	memset(argv, 0, sizeof(argv));
	argv[0] = "profile";
	va_start(ap, first);
	for (const char *a = first; a; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	options__free(&opts);
	return options__parse(argc, argv, &opts, err, sizeof(err));
}

static void teardown(void)
{
	options__free(&opts);
}

static char *header(void)
{
	static char buf[512];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	options__print_header(f, &opts);
	fclose(f);
	return buf;
}

START_TEST(defaults_match_bcc)
{
	ck_assert_int_eq(parse(NULL), OPTIONS_OK);
	ck_assert_uint_eq(opts.frequency, 49);
	ck_assert_uint_eq(opts.hash_storage_size, 40960);
	ck_assert_uint_eq(opts.stack_storage_size, 16384);
	ck_assert_int_eq(opts.cpu, -1);
	ck_assert_int_eq(opts.backend, BACKEND_AUTO);
	ck_assert_int_eq(opts.unwind, DEFAULT_UNWIND);
	ck_assert_uint_eq(opts.stack_dump_size, 16384);
	ck_assert_str_eq(header(),
			 "Sampling at 49 Hertz of all threads by user + kernel stack... Hit Ctrl-C "
			 "to end.\n");
}
END_TEST

START_TEST(header_for_pid_list_user_stack_duration)
{
	char pids[64], want[128];

	snprintf(pids, sizeof(pids), "%d,%d", (int)getpid(), (int)getppid());
	ck_assert_int_eq(parse("-F", "99", "-p", pids, "-U", "5", NULL), OPTIONS_OK);
	ck_assert_int_eq(opts.nr_pids, 2);
	snprintf(want, sizeof(want), "Sampling at 99 Hertz of PID [%d, %d] by user stack for 5 secs.\n",
		 (int)getpid(), (int)getppid());
	ck_assert_str_eq(header(), want);
}
END_TEST

START_TEST(header_for_cpu_count_kernel_tid)
{
	char want[128], tid[16];

	snprintf(tid, sizeof(tid), "%d", (int)getpid());
	ck_assert_int_eq(parse("-c", "1000000", "-K", "-C", "0", "-L", tid, NULL), OPTIONS_OK);
	snprintf(want, sizeof(want),
		 "Sampling at every 1000000 events of TID [%d] by kernel stack on CPU#0... Hit "
		 "Ctrl-C to end.\n",
		 (int)getpid());
	ck_assert_str_eq(header(), want);
}
END_TEST

START_TEST(flags_and_long_options)
{
	ck_assert_int_eq(parse("-d", "-a", "-A", "-I", "-f", "--hash-storage-size", "100",
			       "--stack-storage-size=200", "--backend", "perf", "-vv", NULL),
			 OPTIONS_OK);
	ck_assert(opts.delimited && opts.annotations && opts.addresses && opts.include_idle &&
		  opts.format == FORMAT_FOLDED);
	ck_assert_uint_eq(opts.hash_storage_size, 100);
	ck_assert_uint_eq(opts.stack_storage_size, 200);
	ck_assert_int_eq(opts.backend, BACKEND_PERF);
	ck_assert_int_eq(opts.verbose, 2);
	ck_assert_int_eq(parse("--unwind=dwarf", "--stack-dump-size", "65528", NULL), OPTIONS_OK);
	ck_assert_int_eq(opts.unwind, UNWIND_DWARF);
	ck_assert_uint_eq(opts.stack_dump_size, 65528);
	/* auto sizes the copies it takes where it takes them. */
	ck_assert_int_eq(parse("--unwind", "auto", "--stack-dump-size", "8192", NULL), OPTIONS_OK);
	ck_assert_int_eq(opts.unwind, UNWIND_AUTO);
	ck_assert_uint_eq(opts.stack_dump_size, 8192);
	ck_assert_int_eq(parse("--unwind=fp", NULL), OPTIONS_OK);
	ck_assert_int_eq(opts.unwind, UNWIND_FP);
}
END_TEST

START_TEST(command_after_double_dash)
{
	ck_assert_int_eq(parse("-f", "10", "--", "make", "-j", "4", NULL), OPTIONS_OK);
	ck_assert_uint_eq(opts.duration, 10);
	ck_assert_str_eq(opts.command[0], "make");
	ck_assert_str_eq(opts.command[1], "-j");
	ck_assert_str_eq(opts.command[2], "4");
	ck_assert_ptr_null(opts.command[3]);
}
END_TEST

/* A repeated id would be sampled twice (per-task events opened twice): once is enough. */
START_TEST(duplicate_ids_count_once)
{
	char self[16];

	snprintf(self, sizeof(self), "%d", (int)getpid());
	ck_assert_int_eq(parse("-p", "1,1", NULL), OPTIONS_OK);
	ck_assert_int_eq(opts.nr_pids, 1);
	ck_assert_int_eq(parse("-p", "1", "-p", "1", NULL), OPTIONS_OK);
	ck_assert_int_eq(opts.nr_pids, 1);
	ck_assert_int_eq(parse("-L", self, "--tid", self, NULL), OPTIONS_OK);
	ck_assert_int_eq(opts.nr_tids, 1);
}
END_TEST

struct bad_case {
	const char *args[6];
	const char *message;	/* a part of the expected one-line error */
};

static const struct bad_case bad_cases[] = {
	{ { "-p", "1", "-L", "1" }, "argument -L: not allowed with argument -p" },
	{ { "-U", "-K" }, "argument -K: not allowed with argument -U" },
	{ { "-F", "99", "-c", "10" }, "argument -c: not allowed with argument -F" },
	{ { "-F", "abc" }, "argument -F/--frequency: invalid value 'abc'" },
	{ { "-F", "0" }, "argument -F/--frequency: must be nonzero" },
	{ { "-F", "-5" }, "argument -F/--frequency: invalid value '-5'" },
	{ { "-c", "1.5" }, "argument -c/--count: invalid value '1.5'" },
	{ { "-p", "abc" }, "argument -p/--pid: invalid ID 'abc'" },
	{ { "-p", "1," }, "argument -p/--pid: expected a comma-separated list" },
	{ { "-p", "2147483000" }, "argument -p/--pid: no such process or thread: 2147483000" },
	{ { "-L", "0" }, "argument -L/--tid: invalid ID '0'" },
	{ { "0" }, "argument duration: must be nonzero" },
	{ { "5", "6" }, "unrecognized argument: 6" },
	{ { "--backend", "gpu" }, "argument --backend: invalid choice 'gpu'" },
	{ { "--hash-storage-size", "0" }, "argument --hash-storage-size: must be nonzero" },
	{ { "-C", "x" }, "argument -C/--cpu: invalid CPU 'x'" },
	{ { "-Z" }, "unrecognized argument: -Z" },
	{ { "-fZ" }, "unrecognized argument: -Z (in -fZ)" },
	{ { "-F" }, "argument -F: expected one argument" },
	{ { "--" }, "expected a command after '--'" },
	{ { "-p", "1", "--", "true" }, "argument -- COMMAND: not allowed with argument -p" },
	{ { "--unwind", "lbr" }, "argument --unwind: invalid choice 'lbr' (choose from fp, dwarf, auto)" },
	{ { "--unwind", "dwarf", "--stack-dump-size", "65536" },
	  "argument --stack-dump-size: 65536 is out of range (1..65528)" },
	{ { "--unwind", "dwarf", "--stack-dump-size", "1001" },
	  "argument --stack-dump-size: 1001 is not a multiple of 8 from 64 to 65528" },
	{ { "--unwind", "dwarf", "--stack-dump-size", "32" }, "is not a multiple of 8 from 64" },
	{ { "--unwind", "fp", "--stack-dump-size", "8192" },
	  "argument --stack-dump-size: only with --unwind dwarf or auto" },
};

START_TEST(bad_input_is_a_usage_error_naming_the_option)
{
	const struct bad_case *c = &bad_cases[_i];

	ck_assert_int_eq(parse(c->args[0], c->args[1], c->args[2], c->args[3], c->args[4], NULL),
			 OPTIONS_USAGE_ERROR);
	ck_assert_msg(strstr(err, c->message), "got '%s', want '%s'", err, c->message);
	ck_assert_ptr_null(strchr(err, '\n'));
}
END_TEST

Suite *options_suite(void)
{
	Suite *s = suite_create("options");
	TCase *tc = tcase_create("parse");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, defaults_match_bcc);
	tcase_add_test(tc, header_for_pid_list_user_stack_duration);
	tcase_add_test(tc, header_for_cpu_count_kernel_tid);
	tcase_add_test(tc, flags_and_long_options);
	tcase_add_test(tc, command_after_double_dash);
	tcase_add_test(tc, duplicate_ids_count_once);
	tcase_add_loop_test(tc, bad_input_is_a_usage_error_naming_the_option, 0,
			    sizeof(bad_cases) / sizeof(bad_cases[0]));
	suite_add_tcase(s, tc);
	return s;
}
