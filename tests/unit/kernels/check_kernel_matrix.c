// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel matrix's host side (tests/kernels/): without images it is a
 * skip with a message; the matrix it renders from the guests' result lines
 * fails only for a WRONG cell that tests/kernels/expected does not list, or
 * a kernel whose run did not finish. The guest side needs the images
 * (make check-kernels).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/tests.h"

static const char *srcdir(void)
{
	const char *d = getenv("PROFILE_SRCDIR");

	return d ? d : ".";
}

static char dir[64];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/profile-kmatrix-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void write_file(const char *name, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* matrix.awk over dir/expected and the results files given. */
static void render(struct run_result *r, const char *expected, const char *r1, const char *r2)
{
	char awk[512], exp[128], f1[128], f2[128];

	write_file("expected", expected);
	write_file("a.results", r1);
	write_file("b.results", r2);
	snprintf(awk, sizeof(awk), "%s/tests/kernels/matrix.awk", srcdir());
	snprintf(exp, sizeof(exp), "%s/expected", dir);
	snprintf(f1, sizeof(f1), "%s/a.results", dir);
	snprintf(f2, sizeof(f2), "%s/b.results", dir);
	run_cmd((char *[]){ "/usr/bin/awk", "-F|", "-v", "accel=tcg", "-v", "total_secs=9", "-f",
			    awk, exp, f1, f2, NULL },
		30, 0, r);
}

static const char k1[] = "1.0|kernel|info|one\n"
			 "1.0|fp/bpf|refused|bpf() is not available|exit 1\n"
			 "1.0|fp/perf|works||perf, 10 samples\n"
			 "1.0|off/perf|WRONG|blk-sleep: 1 us, its clock says 9 us|perf\n"
			 "1.0|done|1.0|\n";
static const char k2[] = "2.0|kernel|info|two\n"
			 "2.0|fp/bpf|refused|bpf() is not available|exit 1\n"
			 "2.0|fp/perf|other|bpf: too old|perf, 9 samples\n"
			 "2.0|off/perf|works||perf\n"
			 "2.0|done|1.0|\n";

START_TEST(no_images_is_a_skip)
{
	char script[512];
	struct run_result r;

	snprintf(script, sizeof(script), "%s/tests/kernels/run.sh", srcdir());
	run_cmd((char *[]){ script, dir, dir, NULL }, 30, 0, &r);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	ck_assert_msg(strstr(r.out, "kernel matrix skipped: no images in"), "%s", r.out);
	run_result_free(&r);
}
END_TEST

START_TEST(a_wrong_cell_fails)
{
	struct run_result r;

	render(&r, "# none\n", k1, k2);
	ck_assert_int_eq(r.exit_code, 1);
	ck_assert_msg(strstr(r.out, "| `off (perf)` | **WRONG** ["), "%s", r.out);
	ck_assert_msg(strstr(r.out, "| `fp (perf)` | works | other: perf ["), "%s", r.out);
	/* Equal reasons share one note. */
	ck_assert_msg(strstr(r.out, "| `fp (bpf)` | refused [1] | refused [1] |"), "%s", r.out);
	ck_assert_int_eq(count_lines_with(r.out, "bpf() is not available"), 1);
	run_result_free(&r);
}
END_TEST

START_TEST(an_expected_wrong_cell_passes)
{
	struct run_result r;

	render(&r, "# why\n^1\\.0$|off/perf|issue 21: no switch records before 4.3\n", k1, k2);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.out);
	ck_assert_msg(strstr(r.out, "| `off (perf)` | WRONG, expected ["), "%s", r.out);
	ck_assert_msg(strstr(r.out, "issue 21: no switch records"), "%s", r.out);
	run_result_free(&r);
}
END_TEST

/* Progress lines of a long row are no row; auto's line gives its decision and first sample. */
START_TEST(ticks_are_no_rows_and_auto_has_its_times)
{
	struct run_result r;
	char k1_more[512];

	snprintf(k1_more, sizeof(k1_more), "%.*s1.0|tick|flips=50\n"
		 "1.0|auto-decision|0.21|bpf|1.35\n1.0|done|1.0|\n",
		 (int)(strstr(k1, "1.0|done") - k1), k1);
	render(&r, "^1\\.0$|off/perf|issue 21\n", k1_more, k2);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.out);
	ck_assert_msg(!strstr(r.out, "tick"), "%s", r.out);
	ck_assert_msg(strstr(r.out, "- 1.0: one; auto chose bpf after 0.21 s, sampling from 1.35 s;"),
		      "%s", r.out);
	ck_assert_msg(strstr(r.out, "- 2.0: two; auto chose ? after ? s; run"), "%s", r.out);
	run_result_free(&r);
}
END_TEST

START_TEST(an_unfinished_kernel_fails)
{
	struct run_result r;
	char k2_unfinished[sizeof(k2)];

	snprintf(k2_unfinished, sizeof(k2_unfinished), "%.*s", (int)(strstr(k2, "2.0|done") - k2),
		 k2);
	render(&r, "^1\\.0$|off/perf|issue 21\n", k1, k2_unfinished);
	ck_assert_int_eq(r.exit_code, 1);
	ck_assert_msg(strstr(r.out, "did not finish"), "%s", r.out);
	run_result_free(&r);
}
END_TEST

/*
 * The accelerator is the one a guest boots with: a fake qemu on PATH plays
 * a KVM whose device opens and whose guest boots, one that opens and never
 * boots (nested virtualization that never enters the guest), one whose
 * qemu fails at once, and no device at all. The matrix runs in each, on
 * KVM only in the first.
 */
static const char fake_qemu[] =
	"#!/bin/sh\n"
	"accel= append=\n"
	"while [ $# -gt 0 ]; do\n"
	"\tcase $1 in -accel) accel=$2; shift ;; -append) append=$2; shift ;; esac\n"
	"\tshift\n"
	"done\n"
	"if [ \"$accel\" = kvm ]; then\n"
	"\tcase $FAKE_KVM in\n"
	"\thangs) exec sleep 120 ;;\n"
	"\tfails) echo 'qemu-system-x86_64: failed to initialize kvm' >&2; exit 1 ;;\n"
	"\tesac\n"
	"fi\n"
	"case $append in *KM_PROBE=1*) echo '@KM|alive'; exit 0 ;; esac\n"
	"echo \"@KM|kernel|info|9.9 fake on $accel\"\n"
	"echo '@KM|start|1|fp/perf'\n"
	"echo '@KM|fp/perf|works||perf, 1 s'\n"
	"echo '@KM|done|1.0'\n";

START_TEST(the_accelerator_is_the_one_a_guest_boots_with)
{
	static const char *const kvm[4] = { "boots", "hangs", "fails", "absent" };
	static const char *const chosen[4] = {
		"check-kernels: accelerator kvm (a KVM guest reached its first line in",
		"opens, but a guest printed nothing in 3 s)",
		"check-kernels: accelerator tcg,thread=single (kvm: qemu exited: qemu-system-x86_64: "
		"failed to initialize kvm)",
		"check-kernels: accelerator tcg,thread=single (kvm: no ",
	};
	char script[512], cmd[1024], path[4200], dev[128], fake[32], initramfs[160], build[160];
	char kernels[160], wait_env[] = "KM_KVM_WAIT=3";
	struct run_result r;

	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %s/bin %s/k/linux-9.9 %s/build && : >%s/k/linux-9.9/bzImage && "
		 ": >%s/initramfs && : >%s/kvm",
		 dir, dir, dir, dir, dir, dir);
	ck_assert_int_eq(system(cmd), 0);
	write_file("bin/qemu-system-x86_64", fake_qemu);
	snprintf(cmd, sizeof(cmd), "chmod +x %s/bin/qemu-system-x86_64", dir);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(script, sizeof(script), "%s/tests/kernels/run.sh", srcdir());
	snprintf(path, sizeof(path), "PATH=%s/bin:%s", dir, getenv("PATH"));
	snprintf(dev, sizeof(dev), "KM_KVM_DEV=%s/%s", dir, _i == 3 ? "none" : "kvm");
	snprintf(fake, sizeof(fake), "FAKE_KVM=%s", kvm[_i]);
	snprintf(initramfs, sizeof(initramfs), "KM_INITRAMFS=%s/initramfs", dir);
	snprintf(build, sizeof(build), "%s/build", dir);
	snprintf(kernels, sizeof(kernels), "%s/k", dir);
	run_cmd((char *[]){ "/usr/bin/env", path, dev, fake, initramfs, wait_env, "KM_DEBIAN=0",
			    script, build, kernels, NULL },
		60, 0, &r);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s%s", r.exit_code, r.out, r.err);
	ck_assert_msg(strstr(r.out, chosen[_i]), "%s", r.out);
	/* The guest ran, on the accelerator chosen, and the matrix says which. */
	ck_assert_msg(strstr(r.out, _i ? "fake on tcg,thread=single" : "fake on kvm"), "%s", r.out);
	ck_assert_msg(strstr(r.out, "| `fp (perf)` | works |"), "%s", r.out);
	ck_assert_msg(strstr(r.out, _i ? "- qemu TCG (one host thread; kvm: " : "- qemu KVM (a KVM"),
		      "%s", r.out);
	ck_assert_msg(strstr(r.out, "check-kernels: 9.9: "), "no time of the kernel: %s", r.out);
	run_result_free(&r);
}
END_TEST

Suite *kernel_matrix_suite(void)
{
	Suite *s = suite_create("kernel-matrix");
	TCase *tc = tcase_create("host");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, no_images_is_a_skip);
	tcase_add_test(tc, a_wrong_cell_fails);
	tcase_add_test(tc, an_expected_wrong_cell_passes);
	tcase_add_test(tc, an_unfinished_kernel_fails);
	tcase_add_test(tc, ticks_are_no_rows_and_auto_has_its_times);
	tcase_add_loop_test(tc, the_accelerator_is_the_one_a_guest_boots_with, 0, 4);
	suite_add_tcase(s, tc);
	return s;
}
