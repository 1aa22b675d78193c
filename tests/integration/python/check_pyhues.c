// SPDX-License-Identifier: GPL-2.0
/*
 * The SVG flame graph of a mixed stack draws the Python functions in a hue
 * of their own (green, flamegraph.pl's java palette's JIT hue), the native
 * frames around them in the warm palette, as issue 48 asks for interpreted
 * frames of every language (JavaScript's are the same kind of frame): a
 * mixed stack was one warm blur. shares.py for 2 s on the default
 * interpreter, both backends.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/integration/python/pyrun.h"

/* The fill of the rect titled by a frame that starts with name ("" if none): "r,g,b". */
static void fill_of(const char *svg, const char *name, unsigned int rgb[3])
{
	char want[128];
	const char *t, *f;

	rgb[0] = rgb[1] = rgb[2] = 1000;
	snprintf(want, sizeof(want), "<title>%s", name);
	t = strstr(svg, want);
	f = t ? strstr(t, "fill=\"rgb(") : NULL;
	if (f)
		sscanf(f, "fill=\"rgb(%u,%u,%u)", &rgb[0], &rgb[1], &rgb[2]);
}

static bool green(const unsigned int c[3])
{
	return c[0] < 50 && c[1] >= 190 && c[1] < 240 && c[2] < 50;
}

static bool warm(const unsigned int c[3])
{
	return c[0] >= 205 && c[0] <= 255 && c[2] < 55;
}

START_TEST(python_frames_have_a_hue_of_their_own)
{
	const char *be = test_backends[_i];
	static const char *const py_frames[] = { "share_a (shares.py:", "&lt;module&gt; (shares.py:" };
	static const char *const native[] = { "_start ", "Py_RunMain " };
	char py[512], svg[600], dir[64];
	const char *minor;
	struct run_result cat;
	unsigned int c[3];

	if (!pyt_default(py, sizeof(py), &minor))
		return;
	unsetenv("PROFILE_TRUTH");
	pyt_mkdir(dir);
	snprintf(svg, sizeof(svg), "%s/mixed.svg", dir);
	run_cmd((char *[]){ (char *)profile_bin(), "--backend", (char *)be, "-F", "299",
			    "--format", "svg", "--output", svg, "--", py,
			    (char *)pyt_workload("shares.py"), "2", NULL },
		60, 0, &pyt_r);
	ck_assert_msg(pyt_r.exit_code == 0, "%s: exit %d: %.2000s", be, pyt_r.exit_code,
		      pyt_r.err);
	run_cmd((char *[]){ "/bin/cat", svg, NULL }, 10, 0, &cat);
	for (size_t i = 0; i < sizeof(py_frames) / sizeof(py_frames[0]); i++) {
		fill_of(cat.out, py_frames[i], c);
		ck_assert_msg(green(c), "%s %s: %s drawn rgb(%u,%u,%u), not green", minor, be,
			      py_frames[i], c[0], c[1], c[2]);
	}
	for (size_t i = 0; i < sizeof(native) / sizeof(native[0]); i++) {
		fill_of(cat.out, native[i], c);
		ck_assert_msg(warm(c), "%s %s: %s drawn rgb(%u,%u,%u), not warm", minor, be,
			      native[i], c[0], c[1], c[2]);
	}
	fprintf(stderr, "pyhues: %s %s: Python frames green, native frames warm\n", minor, be);
	run_result_free(&cat);
	pyt_rmdir(dir);
}
END_TEST

Suite *pyhues_suite(void)
{
	Suite *s = suite_create("pyhues");
	TCase *tc = tcase_create("svg");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, pyt_setup, pyt_teardown);
	tcase_add_loop_test(tc, python_frames_have_a_hue_of_their_own, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
