// SPDX-License-Identifier: GPL-2.0
/*
 * compat/kbtf.c, the streamed BTF reader: on a file libbpf writes (a member
 * behind an anonymous struct and typedefs, a bitfield, a missing member, the
 * file cut short) and on this kernel's own BTF against libbpf's reading of
 * it, when there is one. No root needed.
 */
#include <bpf/btf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compat/kbtf.h"
#include "tests/support/tests.h"

static char path[64];

/*
 * struct inner { int a; u64 runtime; };
 * struct outer { int x; struct { long pad; const inner_t in; }; unsigned int bits:3; };
 */
static void write_fixture(size_t cut)
{
	struct btf *btf = btf__new_empty();
	int i32, u64, ul, inner, inner_t, cinner, anon, fd;
	const void *raw;
	__u32 size;

	ck_assert_ptr_nonnull(btf);
	i32 = btf__add_int(btf, "int", 4, BTF_INT_SIGNED);
	u64 = btf__add_int(btf, "long long unsigned int", 8, 0);
	ul = btf__add_typedef(btf, "u64", u64);
	inner = btf__add_struct(btf, "inner", 16);
	ck_assert_int_eq(btf__add_field(btf, "a", i32, 0, 0), 0);
	ck_assert_int_eq(btf__add_field(btf, "runtime", ul, 64, 0), 0);
	inner_t = btf__add_typedef(btf, "inner_t", inner);
	cinner = btf__add_const(btf, inner_t);
	anon = btf__add_struct(btf, NULL, 24);
	ck_assert_int_eq(btf__add_field(btf, "pad", u64, 0, 0), 0);
	ck_assert_int_eq(btf__add_field(btf, "in", cinner, 64, 0), 0);
	ck_assert_int_gt(btf__add_struct(btf, "outer", 40), 0);
	ck_assert_int_eq(btf__add_field(btf, "x", i32, 0, 0), 0);
	ck_assert_int_eq(btf__add_field(btf, NULL, anon, 64, 0), 0);
	ck_assert_int_eq(btf__add_field(btf, "bits", i32, 256, 3), 0);
	raw = btf__raw_data(btf, &size);
	ck_assert_ptr_nonnull(raw);
	snprintf(path, sizeof(path), "/tmp/check_kbtf.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, raw, cut && cut < size ? cut : size),
			 (int)(cut && cut < size ? cut : size));
	close(fd);
	btf__free(btf);
}

static void teardown(void)
{
	if (path[0])
		unlink(path);
	path[0] = '\0';
}

START_TEST(member_behind_anonymous_struct_and_typedefs)
{
	const char *const p[] = { "in", "runtime" }, *const x[] = { "x" };
	uint32_t off = 0, size = 0;
	char why[256];

	write_fixture(0);
	ck_assert_int_eq(kbtf__member(path, "outer", p, 2, &off, &size, why, sizeof(why)), 0);
	ck_assert_uint_eq(off, 8 + 8 + 8);	/* the anonymous struct at 8, in at 8 in it, runtime at 8 */
	ck_assert_uint_eq(size, 8);
	ck_assert_int_eq(kbtf__member(path, "outer", x, 1, &off, &size, why, sizeof(why)), 0);
	ck_assert_uint_eq(off, 0);
	ck_assert_uint_eq(size, 4);
}
END_TEST

START_TEST(refusals)
{
	const char *const bits[] = { "bits" }, *const none[] = { "in", "nope" };
	const char *const p[] = { "in", "runtime" };
	uint32_t off = 0, size = 0;
	char why[256];

	write_fixture(0);
	ck_assert_int_eq(kbtf__member(path, "outer", bits, 1, &off, &size, why, sizeof(why)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "bitfield"));
	ck_assert_int_eq(kbtf__member(path, "outer", none, 2, &off, &size, why, sizeof(why)),
			 -ENOENT);
	ck_assert_ptr_nonnull(strstr(why, "no member nope"));
	ck_assert_int_eq(kbtf__member(path, "missing", p, 2, &off, &size, why, sizeof(why)),
			 -ENOENT);
	teardown();
	/* Cut inside the type records: the header's lengths go past the end. */
	write_fixture(40);
	ck_assert_int_eq(kbtf__member(path, "outer", p, 2, &off, &size, why, sizeof(why)),
			 -EINVAL);
	ck_assert_int_eq(kbtf__member("/nonexistent/btf", "outer", p, 2, &off, &size, why,
				      sizeof(why)), -ENOENT);
}
END_TEST

/* What the off-CPU program reads: task_struct's se.sum_exec_runtime, as libbpf finds it. */
static long libbpf_offset(const struct btf *btf, int id, const char *name, int *type)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	const struct btf_member *m = btf_members(t);

	for (int i = 0; i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(btf, m->name_off);
		int resolved = btf__resolve_type(btf, m->type), inner;
		long off;

		if (n && n[0] && !strcmp(n, name)) {
			*type = resolved;
			return (long)btf_member_bit_offset(t, i);
		}
		if ((!n || !n[0]) && (off = libbpf_offset(btf, resolved, name, &inner)) >= 0) {
			*type = inner;
			return off + (long)btf_member_bit_offset(t, i);
		}
	}
	return -1;
}

START_TEST(this_kernels_task_struct)
{
	const char *const p[] = { "se", "sum_exec_runtime" };
	uint32_t off = 0, size = 0;
	struct btf *btf;
	char why[256];
	long se, rt;
	int id, type;

	if (access(KBTF_VMLINUX, R_OK)) {
		fprintf(stderr, "check_kbtf: no %s: skipped\n", KBTF_VMLINUX);
		return;
	}
	btf = btf__load_vmlinux_btf();
	ck_assert_ptr_nonnull(btf);
	id = btf__find_by_name_kind(btf, "task_struct", BTF_KIND_STRUCT);
	se = libbpf_offset(btf, id, "se", &type);
	rt = se < 0 ? -1 : libbpf_offset(btf, type, "sum_exec_runtime", &type);
	btf__free(btf);
	ck_assert_int_ge(rt, 0);
	ck_assert_int_eq(kbtf__member(KBTF_VMLINUX, "task_struct", p, 2, &off, &size, why,
				      sizeof(why)), 0);
	ck_assert_uint_eq(off, (se + rt) / 8);
	ck_assert_uint_eq(size, 8);
}
END_TEST

Suite *kbtf_suite(void)
{
	Suite *s = suite_create("kbtf");
	TCase *tc = tcase_create("kbtf");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, member_behind_anonymous_struct_and_typedefs);
	tcase_add_test(tc, refusals);
	tcase_add_test(tc, this_kernels_task_struct);
	suite_add_tcase(s, tc);
	return s;
}
