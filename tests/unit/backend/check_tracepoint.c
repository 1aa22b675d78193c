// SPDX-License-Identifier: GPL-2.0
/*
 * Tracepoint format parsing (compat/tracepoint.c) on sched_switch's format
 * as kernels of several generations print it, on malformed texts, and the
 * tracefs reading on a directory laid out like tracefs. No root needed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compat/tracepoint.h"
#include "tests/support/tests.h"

#define COMMON_FIELDS                                                                      \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"              \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"              \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"      \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

/* Linux 6.18 (this machine): states as reported since 4.14, hex, the marker 0x100. */
static const char fmt_6_18[] =
	"name: sched_switch\nID: 372\nformat:\n" COMMON_FIELDS
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s "
	"next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, "
	"(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | "
	"0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? __print_flags(REC->prev_state & "
	"((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | "
	"0x00000020 | 0x00000040) + 1) << 1) - 1), \"|\", { 0x00000001, \"S\" }, { 0x00000002, "
	"\"D\" }, { 0x00000004, \"T\" }, { 0x00000008, \"t\" }, { 0x00000010, \"X\" }, { "
	"0x00000020, \"Z\" }, { 0x00000040, \"P\" }, { 0x00000080, \"I\" }) : \"R\", "
	"REC->prev_state & (((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | "
	"0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) ? \"+\" : \"\", REC->next_comm, "
	"REC->next_pid, REC->next_prio\n";

/*
 * Linux 4.9 (from v4.9's include/trace/events/sched.h, macros expanded as
 * tracefs prints them): the raw task state, decimal, TASK_STATE_MAX 4096 as
 * the marker, TASK_DEAD "x". prev_state is a long there too.
 */
static const char fmt_4_9[] =
	"name: sched_switch\nID: 273\nformat:\n" COMMON_FIELDS
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:1;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:1;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s "
	"next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, "
	"REC->prev_state & (4096-1) ? __print_flags(REC->prev_state & (4096-1), \"|\", { 1, "
	"\"S\"} , { 2, \"D\" }, { 4, \"T\" }, { 8, \"t\" }, { 16, \"Z\" }, { 32, \"X\" }, { 64, "
	"\"x\" }, { 128, \"K\" }, { 256, \"W\" }, { 512, \"P\" }, { 1024, \"N\" }) : \"R\", "
	"REC->prev_state & 4096 ? \"+\" : \"\", REC->next_comm, REC->next_pid, REC->next_prio\n";

/*
 * A 32-bit kernel of the 4.x generation: long is 4 bytes, so prev_state is
 * an int-sized field and everything after it moves up by 4.
 */
static const char fmt_32bit[] =
	"name: sched_switch\nID: 290\nformat:\n" COMMON_FIELDS
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:1;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:4;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:36;\tsize:16;\tsigned:1;\n"
	"\tfield:pid_t next_pid;\toffset:52;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:56;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"prev_state=%s\", REC->prev_state & (2048-1) ? __print_flags(REC->prev_state "
	"& (2048-1), \"|\", { 1, \"S\"} , { 2, \"D\" }, { 64, \"x\" }) : \"R\"\n";

/* 2.6.31: no "signed:" yet, and a padding field in the common header. */
static const char fmt_2_6_31[] =
	"name: sched_switch\nID: 28\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\n"
	"\tfield:int common_tgid;\toffset:8;\tsize:4;\n\n"
	"\tfield:char prev_comm[TASK_COMM_LEN];\toffset:12;\tsize:16;\n"
	"\tfield:pid_t prev_pid;\toffset:28;\tsize:4;\n"
	"\tfield:int prev_prio;\toffset:32;\tsize:4;\n"
	"\tfield:long prev_state;\toffset:40;\tsize:8;\n"
	"\tfield:char next_comm[TASK_COMM_LEN];\toffset:48;\tsize:16;\n"
	"\tfield:pid_t next_pid;\toffset:64;\tsize:4;\n"
	"\tfield:int next_prio;\toffset:68;\tsize:4;\n\n"
	"print fmt: \"task %s:%d [%d] (%s) ==> %s:%d [%d]\", REC->prev_comm, REC->prev_pid\n";

static struct tp_format fmt;
static char why[256];

static void parse_ok(const char *text)
{
	int err = tp_format__parse(&fmt, text, strlen(text), why, sizeof(why));

	ck_assert_msg(!err, "parse: %d %s", err, why);
}

static void assert_field(const char *name, const char *type, unsigned int offset,
			 unsigned int size, bool is_signed)
{
	const struct tp_field *f = tp_format__field(&fmt, name);

	ck_assert_msg(f, "no field %s", name);
	ck_assert_str_eq(f->type, type);
	ck_assert_uint_eq(f->offset, offset);
	ck_assert_uint_eq(f->size, size);
	ck_assert_int_eq(f->is_signed, is_signed);
}

START_TEST(parses_6_18)
{
	struct sched_switch_layout l;
	uint64_t v;

	parse_ok(fmt_6_18);
	ck_assert_str_eq(fmt.name, "sched_switch");
	ck_assert_int_eq(fmt.id, 372);
	ck_assert_uint_eq(fmt.nr_fields, 11);
	assert_field("common_type", "unsigned short", 0, 2, false);
	assert_field("prev_comm", "char[16]", 8, 16, false);
	assert_field("prev_state", "long", 32, 8, true);
	assert_field("next_pid", "pid_t", 56, 4, true);
	ck_assert_uint_eq(fmt.nr_flags, 8);
	ck_assert_int_eq(tp_format__flag(&fmt, "D", &v), 0);
	ck_assert_uint_eq(v, 2);
	ck_assert_int_eq(tp_format__flag(&fmt, "I", &v), 0);
	ck_assert_uint_eq(v, 0x80);
	ck_assert_int_eq(tp_format__flag(&fmt, "R", &v), -ENOENT);

	ck_assert_int_eq(sched_switch__layout(&fmt, &l, why, sizeof(why)), 0);
	ck_assert_uint_eq(l.prev_pid_off, 24);
	ck_assert_uint_eq(l.next_pid_off, 56);
	ck_assert_uint_eq(l.prev_state_off, 32);
	ck_assert_uint_eq(l.prev_state_size, 8);
	/* The marker for "preempted" (TASK_REPORT_MAX, 0x100) is not a state bit. */
	ck_assert_uint_eq(l.state_mask, 0xff);
	ck_assert_uint_eq(l.exit_states, 0x30);
}
END_TEST

START_TEST(parses_4_9)
{
	struct sched_switch_layout l;

	parse_ok(fmt_4_9);
	ck_assert_int_eq(fmt.id, 273);
	ck_assert_uint_eq(fmt.nr_flags, 11);
	ck_assert_int_eq(sched_switch__layout(&fmt, &l, why, sizeof(why)), 0);
	ck_assert_uint_eq(l.next_pid_off, 56);
	ck_assert_uint_eq(l.prev_state_size, 8);
	/* TASK_STATE_MAX (4096) marks preemption: not a state bit. */
	ck_assert_uint_eq(l.state_mask, 0x7ff);
	/* "Z", "X" (swapped in 4.9's table) and TASK_DEAD "x". */
	ck_assert_uint_eq(l.exit_states, 0x70);
}
END_TEST

START_TEST(parses_a_4_byte_prev_state)
{
	struct sched_switch_layout l;

	parse_ok(fmt_32bit);
	ck_assert_int_eq(sched_switch__layout(&fmt, &l, why, sizeof(why)), 0);
	ck_assert_uint_eq(l.prev_state_off, 32);
	ck_assert_uint_eq(l.prev_state_size, 4);
	ck_assert_uint_eq(l.next_pid_off, 52);
	ck_assert_uint_eq(l.state_mask, 0x43);
	ck_assert_uint_eq(l.exit_states, 0x40);
}
END_TEST

START_TEST(parses_formats_without_signed_or_flags)
{
	struct sched_switch_layout l;

	parse_ok(fmt_2_6_31);
	assert_field("prev_comm", "char[TASK_COMM_LEN]", 12, 16, false);
	assert_field("prev_state", "long", 40, 8, false);
	ck_assert_uint_eq(fmt.nr_flags, 0);
	ck_assert_int_eq(sched_switch__layout(&fmt, &l, why, sizeof(why)), 0);
	ck_assert_uint_eq(l.next_pid_off, 64);
	ck_assert_uint_eq(l.state_mask, 0xff);	/* the default */
	ck_assert_uint_eq(l.exit_states, 0);
}
END_TEST

START_TEST(parses_other_declarations)
{
	static const char text[] =
		"format:\n"
		"\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:1;\n"
		"\tfield:unsigned long args[6];\toffset:16;\tsize:48;\tsigned:0;\n"
		"\tfield:const char * name;\toffset:64;\tsize:8;\tsigned:0;\n"
		"\tfield:char buf[];\toffset:72;\tsize:0;\tsigned:0;\n"
		"\tfield:int  spaced  ;  offset:80 ;\tsize:4;\tsigned:1;\n"
		"\tfield:int x;\toffset:84;\tsize:4;\tsigned:1;\tfuture:7;\n"
		"\tfield:u64 a_field_name_that_is_longer_than_sixty_four_characters_and_then_some;"
		"\toffset:88;\tsize:8;\tsigned:0;\n"
		"print fmt: \"%x\", { 0x10UL, \"A\" }, { 7, \"B\" }, { bad, \"C\" }, { 1, \"a name "
		"too long to keep\" }, { 2, \"E\" \n";

	ck_assert_int_eq(tp_format__parse(&fmt, text, strlen(text), why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, "spaced"), "%s", why);
	/* Without the space before ':' (the kernel never writes one) it parses. */
	char *fixed = strdup(text);
	char *p = strstr(fixed, "offset:80 ;");

	memmove(p + 9, p + 10, strlen(p + 10) + 1);
	parse_ok(fixed);
	free(fixed);
	ck_assert_int_eq(fmt.id, -1);
	ck_assert_str_eq(fmt.name, "");
	assert_field("filename", "__data_loc char[]", 8, 4, true);
	assert_field("args", "unsigned long[6]", 16, 48, false);
	assert_field("name", "const char *", 64, 8, false);
	assert_field("buf", "char[]", 72, 0, false);
	assert_field("spaced", "int", 80, 4, true);
	assert_field("x", "int", 84, 4, true);
	/* A name too long to store is left out, not truncated into another name. */
	ck_assert_uint_eq(fmt.nr_fields, 6);
	ck_assert_uint_eq(fmt.nr_flags, 2);
	ck_assert_uint_eq(fmt.flags[0].value, 0x10);
	ck_assert_str_eq(fmt.flags[1].name, "B");
}
END_TEST

static const struct {
	const char *text;
	int err;
	const char *reason;
} bad[] = {
	{ "", -EINVAL, "no field" },
	{ "name: x\nID: 3\nprint fmt: \"\"\n", -EINVAL, "no field" },
	{ "field:int a\n", -EINVAL, "without ';'" },
	{ "field:int a\toffset:0;\tsize:4;\n", -EINVAL, "TYPE NAME" },
	{ "field:int a;\tsize:4;\n", -EINVAL, "no offset" },
	{ "field:int a;\toffset:4;\n", -EINVAL, "no size" },
	{ "field:int a;\toffset:4;\tsize:4", -EINVAL, "not a number" },
	{ "field:int a;\toffset:;\tsize:4;\n", -EINVAL, "not a number" },
	{ "field:int a;\toffset:-4;\tsize:4;\n", -EINVAL, "not a number" },
	{ "field:int a;\toffset:4294967296;\tsize:4;\n", -EINVAL, "not a number" },
	{ "field:int a;\toffset:65535;\tsize:4;\n", -EINVAL, "beyond a record" },
	{ "field:int a;\toffset:4;\tsize:4294967295;\n", -EINVAL, "beyond a record" },
	{ "field:int a;\toffset:4;\tsize:4;\tsigned\n", -EINVAL, "key:value" },
	{ "field:a;\toffset:4;\tsize:4;\n", -EINVAL, "TYPE NAME" },
	{ "field:int ;\toffset:4;\tsize:4;\n", -EINVAL, "TYPE NAME" },
	{ "field:int a[4;\toffset:4;\tsize:4;\n", -EINVAL, "TYPE NAME" },
	{ "field:int 4a;\toffset:4;\tsize:4;\n", -EINVAL, "TYPE NAME" },
	{ "field:int a];\toffset:4;\tsize:4;\n", -EINVAL, "TYPE NAME" },
	{ "field:int a;\toffset:4;\tsize:4;\nID: x\n", -EINVAL, "ID" },
};

START_TEST(rejects_malformed_formats)
{
	int err = tp_format__parse(&fmt, bad[_i].text, strlen(bad[_i].text), why, sizeof(why));

	ck_assert_msg(err == bad[_i].err, "'%s': %d (%s)", bad[_i].text, err, why);
	ck_assert_msg(strstr(why, bad[_i].reason), "'%s': want '%s', got '%s'", bad[_i].text,
		      bad[_i].reason, why);
}
END_TEST

/* n fields of 4 bytes each into text. */
static size_t many_fields(char *text, size_t size, int n)
{
	size_t len = 0;

	for (int i = 0; i < n && len < size; i++)
		len += snprintf(text + len, size - len,
				"\tfield:int f%d;\toffset:%d;\tsize:4;\tsigned:1;\n", i, 8 + 4 * i);
	return len;
}

START_TEST(rejects_nul_bytes_in_field_lines)
{
	static const char text[] = "field:int\0\0 a;\toffset:4;\tsize:4;\n";

	ck_assert_int_eq(tp_format__parse(&fmt, text, sizeof(text) - 1, why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, "NUL byte"), "%s", why);
}
END_TEST

START_TEST(rejects_too_many_fields)
{
	char text[8192];
	size_t len;

	len = many_fields(text, sizeof(text), TP_MAX_FIELDS + 1);
	ck_assert_int_eq(tp_format__parse(&fmt, text, len, why, sizeof(why)), -E2BIG);
	ck_assert_msg(strstr(why, "more than 64 fields"), "%s", why);
	len = many_fields(text, sizeof(text), TP_MAX_FIELDS);
	parse_ok(text);
	ck_assert_uint_eq(fmt.nr_fields, TP_MAX_FIELDS);
}
END_TEST

/* Every prefix of a real format parses or fails cleanly, and never reads past its length. */
START_TEST(truncated_texts_are_handled)
{
	size_t n = strlen(fmt_6_18);

	for (size_t len = 0; len <= n; len++) {
		char *copy = malloc(len ? len : 1);
		int err;

		memcpy(copy, fmt_6_18, len);
		err = tp_format__parse(&fmt, copy, len, why, sizeof(why));
		ck_assert_msg(err == 0 || err == -EINVAL, "len %zu: %d", len, err);
		free(copy);
	}
}
END_TEST

START_TEST(layout_needs_the_fields_the_program_reads)
{
	static const struct {
		const char *text;
		const char *reason;
	} cases[] = {
		{ "field:pid_t prev_pid;\toffset:24;\tsize:4;\n"
		  "field:long prev_state;\toffset:32;\tsize:8;\n",
		  "no field next_pid" },
		{ "field:pid_t prev_pid;\toffset:24;\tsize:4;\n"
		  "field:long prev_state;\toffset:32;\tsize:2;\n"
		  "field:pid_t next_pid;\toffset:56;\tsize:4;\n",
		  "prev_state has size 2" },
		{ "field:u64 prev_pid;\toffset:24;\tsize:8;\n"
		  "field:long prev_state;\toffset:32;\tsize:8;\n"
		  "field:pid_t next_pid;\toffset:56;\tsize:4;\n",
		  "prev_pid has size 8" },
		{ "field:pid_t prev_pid;\toffset:24;\tsize:4;\n"
		  "field:long prev_state;\toffset:32;\tsize:8;\n"
		  "field:pid_t next_pid;\toffset:0;\tsize:4;\n",
		  "offset 0" },
	};
	struct sched_switch_layout l;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		parse_ok(cases[i].text);
		ck_assert_int_eq(sched_switch__layout(&fmt, &l, why, sizeof(why)), -EINVAL);
		ck_assert_msg(strstr(why, cases[i].reason), "want '%s', got '%s'", cases[i].reason,
			      why);
	}
}
END_TEST

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* tracepoint__read on a directory laid out like tracefs. */
START_TEST(reads_id_and_format_from_a_tracefs_tree)
{
	char dir[] = "/tmp/profile-tracefs-XXXXXX", path[256], cmd[300];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/events/sched/sched_switch", dir);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s", path);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/events/sched/sched_switch/id", dir);
	write_file(path, "1234\n");
	snprintf(path, sizeof(path), "%s/events/sched/sched_switch/format", dir);
	write_file(path, fmt_6_18);

	ck_assert_int_eq(tracepoint__read(dir, "sched", "sched_switch", &fmt, why, sizeof(why)), 0);
	ck_assert_int_eq(fmt.id, 1234);	/* the id file's, not the format's */
	ck_assert_uint_eq(fmt.nr_fields, 11);

	ck_assert_int_eq(tracepoint__read(dir, "sched", "sched_nope", &fmt, why, sizeof(why)),
			 -ENOENT);
	ck_assert_msg(strstr(why, "sched:sched_nope not found"), "%s", why);

	snprintf(path, sizeof(path), "%s/events/sched/sched_switch/format", dir);
	write_file(path, "field:int a;\toffset:4;\n");
	ck_assert_int_eq(tracepoint__read(dir, "sched", "sched_switch", &fmt, why, sizeof(why)),
			 -EINVAL);
	ck_assert_msg(strstr(why, "/format: field a: no size"), "%s", why);

	snprintf(path, sizeof(path), "%s/events/sched/sched_switch/id", dir);
	write_file(path, "x\n");
	ck_assert_int_eq(tracepoint__read(dir, "sched", "sched_switch", &fmt, why, sizeof(why)),
			 -EINVAL);
	ck_assert_msg(strstr(why, "not a tracepoint id"), "%s", why);

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

Suite *tracepoint_suite(void)
{
	Suite *s = suite_create("tracepoint");
	TCase *tc = tcase_create("format");

	tcase_add_test(tc, parses_6_18);
	tcase_add_test(tc, parses_4_9);
	tcase_add_test(tc, parses_a_4_byte_prev_state);
	tcase_add_test(tc, parses_formats_without_signed_or_flags);
	tcase_add_test(tc, parses_other_declarations);
	tcase_add_loop_test(tc, rejects_malformed_formats, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, rejects_nul_bytes_in_field_lines);
	tcase_add_test(tc, rejects_too_many_fields);
	tcase_add_test(tc, truncated_texts_are_handled);
	tcase_add_test(tc, layout_needs_the_fields_the_program_reads);
	tcase_add_test(tc, reads_id_and_format_from_a_tracefs_tree);
	suite_add_tcase(s, tc);
	return s;
}
