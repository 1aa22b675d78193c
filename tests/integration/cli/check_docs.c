// SPDX-License-Identifier: GPL-2.0
/*
 * What a packaged tool brings besides its binary, tried as a user would:
 * the man pages render without warnings and document every option --help
 * prints; `make install DESTDIR=` puts binaries, pages and completion where
 * man and bash-completion find them; the completion completes options,
 * --backend's values and running PIDs; the examples files are generated
 * from their templates by real runs; `make demo` installs no test tools.
 * No root needed.
 */
#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/tests.h"

static const char *const tools[] = { "profile", "offcputime" };

/* make, not as a child of the make running the tests (its jobserver, its flags). */
#define MAKE_ALONE "/usr/bin/env", "-u", "MAKEFLAGS", "-u", "MFLAGS", "-u", "MAKELEVEL", \
	"/usr/bin/make"

static const char *srcdir(void)
{
	const char *d = getenv("PROFILE_SRCDIR");

	return d ? d : ".";
}

/* The build directory: where PROFILE_BIN is. */
static const char *builddir(void)
{
	static char dir[512];

	snprintf(dir, sizeof(dir), "%s", profile_bin());
	*strrchr(dir, '/') = '\0';
	return dir;
}

/* build/profile or build/offcputime (the link beside it). */
static const char *tool_bin(const char *tool)
{
	static char path[600];

	snprintf(path, sizeof(path), "%s/%s", builddir(), tool);
	return path;
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf;
	size_t n;

	ck_assert_msg(f, "cannot open %s", path);
	buf = malloc(1 << 20);
	ck_assert_ptr_nonnull(buf);
	n = fread(buf, 1, (1 << 20) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* man renders a page from a file; MANWIDTH as given, hyphenation off for searching. */
static void render(const char *page, const char *width, struct run_result *r)
{
	char manwidth[32];

	snprintf(manwidth, sizeof(manwidth), "MANWIDTH=%s", width);
	ck_assert_msg(access("/usr/bin/man", X_OK) == 0,
		      "man is missing: scripts/install-deps.sh installs man-db");
	run_cmd((char *[]){ "/usr/bin/env", manwidth, "/usr/bin/man", "--warnings", "-l",
			    (char *)page, NULL },
		30, 0, r);
}

START_TEST(man_page_renders_without_warnings)
{
	char page[600];
	struct run_result r;

	snprintf(page, sizeof(page), "%s/docs/%s.8", srcdir(), tools[_i]);
	render(page, "80", &r);
	ck_assert_msg(r.exit_code == 0, "man -l %s: %d: %s", page, r.exit_code, r.err);
	ck_assert_msg(r.err[0] == '\0', "man --warnings -l %s warns:\n%s", page, r.err);
	for (const char *const *s = (const char *const[]){ "NAME", "SYNOPSIS", "DESCRIPTION",
							    "OPTIONS", "EXIT STATUS", "FILES",
							    "SEE ALSO", NULL };
	     *s; s++) {
		char heading[64];

		snprintf(heading, sizeof(heading), "\n%s\n", *s);
		ck_assert_msg(strstr(r.out, heading), "%s has no %s section", page, *s);
	}
	ck_assert_ptr_nonnull(strstr(r.out, "bpftrace(8)"));
	ck_assert_ptr_nonnull(strstr(r.out, "perf(1)"));
	run_result_free(&r);
}
END_TEST

/* The OPTIONS section of a rendered page: from its heading to the next one. */
static char *options_section(char *text)
{
	char *start = strstr(text, "\nOPTIONS\n"), *end;

	ck_assert_ptr_nonnull(start);
	for (end = start + 9; *end; end++)
		if (end[0] == '\n' && isupper((unsigned char)end[1]))
			break;
	*end = '\0';
	return start;
}

/* Whether a tag line (indented 7, not 14) of the OPTIONS section names opt. */
static bool documented(const char *options, const char *opt)
{
	size_t len = strlen(opt);

	for (const char *line = options; line; line = strchr(line + 1, '\n')) {
		const char *p = line + 1, *eol = strchrnul(p, '\n');

		if (strncmp(p, "       -", 8))
			continue;
		for (const char *m = p; (m = memmem(m, eol - m, opt, len)); m += len) {
			char before = m > p ? m[-1] : ' ', after = m[len];

			if ((before == ' ' || before == ',' || before == '/') &&
			    !(isalnum((unsigned char)after) || after == '-' || after == '_'))
				return true;
		}
	}
	return false;
}

START_TEST(man_page_documents_every_option_of_help)
{
	char page[600], opt[64];
	struct run_result help, man;
	char *options;
	int longs = 0, shorts = 0;

	snprintf(page, sizeof(page), "%s/docs/%s.8", srcdir(), tools[_i]);
	run_cmd((char *[]){ (char *)tool_bin(tools[_i]), "--help", NULL }, 10, 0, &help);
	ck_assert_int_eq(help.exit_code, 0);
	render(page, "200", &man);
	ck_assert_int_eq(man.exit_code, 0);
	options = options_section(man.out);

	/* Every --long anywhere in --help (usage, options, examples). */
	for (const char *p = help.out; (p = strstr(p, "--")); p += 2) {
		size_t n = 2;

		if (p > help.out && (isalnum((unsigned char)p[-1]) || p[-1] == '-'))
			continue;
		while (n < sizeof(opt) - 1 && (isalnum((unsigned char)p[n]) || p[n] == '-'))
			n++;
		if (n == 2 || !isalpha((unsigned char)p[2]))
			continue;
		memcpy(opt, p, n);
		opt[n] = '\0';
		ck_assert_msg(documented(options, opt), "%s --help prints %s: docs/%s.8 lacks it",
			      tools[_i], opt, tools[_i]);
		longs++;
	}
	/* Every -X that starts an option line of --help. */
	for (const char *line = help.out; line; line = strchr(line + 1, '\n')) {
		if (strncmp(line, "\n  -", 4) || line[4] == '-')
			continue;
		snprintf(opt, sizeof(opt), "-%c", line[4]);
		ck_assert_msg(documented(options, opt), "%s --help has %s: docs/%s.8 lacks it",
			      tools[_i], opt, tools[_i]);
		shorts++;
	}
	ck_assert_int_ge(longs, 15);
	ck_assert_int_ge(shorts, 10);
	run_result_free(&help);
	run_result_free(&man);
}
END_TEST

/* bash completion: the candidates for words (the last one being completed), one a line. */
static void complete(const char *script, const char *const words[], struct run_result *r)
{
	char *argv[24] = { "/bin/bash", "-c",
			   "source \"$1\" || exit 1; shift; COMP_WORDS=(\"$@\"); "
			   "COMP_CWORD=$(($# - 1)); _profile; printf '%s\\n' \"${COMPREPLY[@]}\"",
			   "bash", (char *)script };
	int n = 5;

	for (int i = 0; words[i] && n < 23; i++)
		argv[n++] = (char *)words[i];
	argv[n] = NULL;
	run_cmd(argv, 20, 0, r);
	ck_assert_msg(r->exit_code == 0, "completion script: %s", r->err);
	ck_assert_msg(r->err[0] == '\0', "completion script: %s", r->err);
}

static const char *source_completion(void)
{
	static char path[600];

	snprintf(path, sizeof(path), "%s/scripts/completion/profile.bash", srcdir());
	return path;
}

/* Whether the newline-separated list has exactly this line. */
static bool has_line(const char *list, const char *line)
{
	size_t len = strlen(line);

	for (const char *p = list; p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (!strncmp(p, line, len) && (p[len] == '\n' || !p[len]))
			return true;
	}
	return false;
}

START_TEST(completion_of_options_and_values)
{
	const char *bin = tool_bin(tools[_i]);
	struct run_result r;

	complete(source_completion(), (const char *[]){ bin, "--back", NULL }, &r);
	ck_assert_str_eq(r.out, "--backend\n");
	run_result_free(&r);

	complete(source_completion(), (const char *[]){ bin, "--backend", "", NULL }, &r);
	ck_assert_str_eq(r.out, "auto\nbpf\nperf\n");
	run_result_free(&r);

	/* bash splits "--unwind=d" at the "=". */
	complete(source_completion(), (const char *[]){ bin, "--unwind", "=", "d", NULL }, &r);
	ck_assert_str_eq(r.out, "dwarf\n");
	run_result_free(&r);

	complete(source_completion(), (const char *[]){ bin, "--format", "p", NULL }, &r);
	ck_assert_str_eq(r.out, "pprof\n");
	run_result_free(&r);

	/* A number takes no completion; neither does a duration. */
	complete(source_completion(), (const char *[]){ bin, "--stack-storage-size", "", NULL },
		 &r);
	ck_assert_str_eq(r.out, "\n");
	run_result_free(&r);
}
END_TEST

START_TEST(completion_offers_every_option_of_help)
{
	const char *bin = tool_bin(tools[_i]);
	struct run_result help, r;
	int n = 0;

	run_cmd((char *[]){ (char *)bin, "--help", NULL }, 10, 0, &help);
	complete(source_completion(), (const char *[]){ bin, "-", NULL }, &r);
	for (const char *line = help.out; line; line = strchr(line + 1, '\n')) {
		char opt[64];
		const char *p = line + 3;
		size_t len;

		if (strncmp(line, "\n  -", 4))
			continue;
		/* "-p PID, --pid PID": each spelling, up to a space or comma. */
		while (*p == '-') {
			len = strcspn(p, " ,\n");
			snprintf(opt, sizeof(opt), "%.*s", (int)len, p);
			ck_assert_msg(has_line(r.out, opt), "%s: %s is not completed", tools[_i], opt);
			n++;
			p = strstr(p, ", -");
			if (!p || p > strchrnul(line + 1, '\n'))
				break;
			p += 2;
		}
	}
	ck_assert_int_ge(n, 20);
	run_result_free(&help);
	run_result_free(&r);
}
END_TEST

START_TEST(completion_of_pids_tids_and_files)
{
	char me[32], list[48], dir[] = "/tmp/profile-comp-XXXXXX", file[64], prefix[64];
	const char *bin = tool_bin(tools[_i]);
	const char *tid_opt = _i ? "-t" : "-L";
	struct run_result r;

	snprintf(me, sizeof(me), "%d", (int)getpid());
	complete(source_completion(), (const char *[]){ bin, "-p", "", NULL }, &r);
	ck_assert_msg(has_line(r.out, me), "pid %s not among:\n%s", me, r.out);
	ck_assert_msg(!has_line(r.out, "self"), "not a pid: self");
	/* Every candidate is a PID. */
	for (const char *p = r.out; *p; p = strchr(p, '\n') + 1)
		ck_assert_msg(strspn(p, "0123456789") == strcspn(p, "\n") && isdigit((unsigned char)*p),
			      "not a pid: %s", p);
	run_result_free(&r);

	/* The last item of a comma list. */
	snprintf(list, sizeof(list), "1,%s", me);
	complete(source_completion(), (const char *[]){ bin, "--pid", list, NULL }, &r);
	ck_assert_msg(has_line(r.out, list), "%s not among:\n%s", list, r.out);
	run_result_free(&r);

	complete(source_completion(), (const char *[]){ bin, tid_opt, me, NULL }, &r);
	ck_assert_msg(has_line(r.out, me), "tid %s not among:\n%s", me, r.out);
	run_result_free(&r);

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/cpu.folded", dir);
	close(creat(file, 0600));
	snprintf(prefix, sizeof(prefix), "%s/cpu", dir);
	complete(source_completion(), (const char *[]){ bin, "--output", prefix, NULL }, &r);
	unlink(file);
	rmdir(dir);
	ck_assert_msg(has_line(r.out, file), "%s not among:\n%s", file, r.out);
	run_result_free(&r);

	/* After "--" comes a command. */
	complete(source_completion(), (const char *[]){ bin, "-f", "--", "bas", NULL }, &r);
	ck_assert_msg(has_line(r.out, "bash"), "bash not among:\n%s", r.out);
	run_result_free(&r);
}
END_TEST

/* The same files, byte for byte. */
static void assert_same_file(const char *a, const char *b)
{
	char *x = read_file(a), *y = read_file(b);

	ck_assert_msg(!strcmp(x, y), "%s differs from %s", a, b);
	free(x);
	free(y);
}

static void assert_link(const char *path, const char *target)
{
	char buf[256];
	ssize_t n = readlink(path, buf, sizeof(buf) - 1);

	ck_assert_msg(n > 0, "%s is not a symbolic link", path);
	buf[n] = '\0';
	ck_assert_str_eq(buf, target);
}

START_TEST(make_install_puts_everything_where_it_belongs)
{
	char dest[] = "/tmp/profile-install-XXXXXX", destdir[64], o[600], bin[128], path[700];
	char manpath[128], xdg[160], src[600];
	struct run_result r;
	struct stat st;

	ck_assert_ptr_nonnull(mkdtemp(dest));
	snprintf(destdir, sizeof(destdir), "DESTDIR=%s", dest);
	snprintf(o, sizeof(o), "O=%s", builddir());
	/* -o: install what was built, never rebuild it here. */
	snprintf(path, sizeof(path), "%s/profile", builddir());
	run_cmd((char *[]){ MAKE_ALONE, "--no-print-directory", "-C", (char *)srcdir(), o,
			    destdir, "-o", path, "install", NULL },
		60, 0, &r);
	ck_assert_msg(r.exit_code == 0, "make install: %s", r.err);
	run_result_free(&r);

	snprintf(bin, sizeof(bin), "%s/usr/local/bin/profile", dest);
	ck_assert_int_eq(stat(bin, &st), 0);
	ck_assert_msg(S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0755, "%s: mode %o", bin,
		      st.st_mode);
	snprintf(path, sizeof(path), "%s/usr/local/bin/offcputime", dest);
	assert_link(path, "profile");
	/* The installed link runs as offcputime. */
	run_cmd((char *[]){ path, "-h", NULL }, 10, 0, &r);
	ck_assert_int_eq(r.exit_code, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "usage: offcputime"));
	run_result_free(&r);

	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/usr/local/share/man/man8/%s.8", dest, tools[i]);
		ck_assert_int_eq(stat(path, &st), 0);
		ck_assert_int_eq(st.st_mode & 0777, 0644);
		snprintf(src, sizeof(src), "%s/docs/%s.8", srcdir(), tools[i]);
		assert_same_file(path, src);
	}
	/* man finds the pages by name where MANPATH points. */
	snprintf(manpath, sizeof(manpath), "MANPATH=%s/usr/local/share/man", dest);
	run_cmd((char *[]){ "/usr/bin/env", manpath, "/usr/bin/man", "-w", "offcputime", NULL },
		20, 0, &r);
	snprintf(path, sizeof(path), "%s/usr/local/share/man/man8/offcputime.8\n", dest);
	ck_assert_msg(r.exit_code == 0 && !strcmp(r.out, path), "man -w: %s%s", r.out, r.err);
	run_result_free(&r);

	snprintf(path, sizeof(path), "%s/usr/local/share/bash-completion/completions/profile",
		 dest);
	assert_same_file(path, source_completion());
	snprintf(path, sizeof(path),
		 "%s/usr/local/share/bash-completion/completions/offcputime", dest);
	assert_link(path, "profile");

	/*
	 * bash-completion loads it on first use, by the command's name, from
	 * XDG_DATA_DIRS; then "offcputime --back" completes, found by PATH.
	 */
	ck_assert_msg(access("/usr/share/bash-completion/bash_completion", R_OK) == 0,
		      "bash-completion is missing: scripts/install-deps.sh installs it");
	snprintf(xdg, sizeof(xdg), "XDG_DATA_DIRS=%s/usr/local/share", dest);
	snprintf(path, sizeof(path), "PATH=%s/usr/local/bin:/usr/bin:/bin", dest);
	run_cmd((char *[]){ "/usr/bin/env", xdg, path, "/bin/bash", "-c",
			    "source /usr/share/bash-completion/bash_completion; "
			    "__load_completion offcputime || exit 1; complete -p offcputime; "
			    "COMP_WORDS=(offcputime --back); COMP_CWORD=1; _profile; "
			    "printf '%s\\n' \"${COMPREPLY[@]}\"",
			    NULL },
		20, 0, &r);
	ck_assert_msg(r.exit_code == 0, "bash-completion: %s", r.err);
	ck_assert_str_eq(r.out, "complete -F _profile offcputime\n--backend\n");
	run_result_free(&r);

	snprintf(path, sizeof(path), "rm -rf '%s'", dest);
	ck_assert_int_eq(system(path), 0);
}
END_TEST

/*
 * docs/NAME_example.txt is docs/NAME_example.txt.in with each command run:
 * every prose line of the template is there, in order, every "@@ CMD" is
 * there as "# CMD" (PIDs of background workloads filled in), and the
 * output has what only a real run prints.
 */
START_TEST(examples_are_generated_from_real_runs)
{
	static const char *const markers[][4] = {
		{ "Sampling at 99 Hertz of command demo by user + kernel stack until it exits.",
		  "    compute_hash\n    parse_input\n    io_worker\n", "-                demo (",
		  "nofp;_start;__libc_start_main;__libc_start_call_main;main;nofp_a;nofp_b;nofp_c " },
		{ "Tracing off-CPU time (us) of command blocking by user + kernel stack until it exits.",
		  "offcpu tid=", "    clock_nanosleep\n", "-                blk-reader (" },
	};
	char path[600];
	char *tpl, *out, *pos;
	int commands = 0;

	snprintf(path, sizeof(path), "%s/docs/%s_example.txt.in", srcdir(), tools[_i]);
	tpl = read_file(path);
	snprintf(path, sizeof(path), "%s/docs/%s_example.txt", srcdir(), tools[_i]);
	out = read_file(path);
	pos = out;
	for (char *line = strtok(tpl, "\n"); line; line = strtok(NULL, "\n")) {
		char want[512], *bg, *found;

		if (!strcmp(line, "@stamp") || !strcmp(line, "@kill"))
			continue;
		if (!strncmp(line, "@@", 2)) {
			char *cmd = line[2] == '[' ? strchr(line, ']') + 2 : line + 3;

			snprintf(want, sizeof(want), "# %s", cmd);
			commands++;
		} else if (!strncmp(line, "@bg ", 4)) {
			snprintf(want, sizeof(want), "# %s &\n[1] ", line + 4);
		} else {
			snprintf(want, sizeof(want), "%s", line);
		}
		/* "$BGPID": the part before it, then digits, then the rest. */
		bg = strstr(want, "$BGPID");
		if (bg)
			*bg = '\0';
		found = strstr(pos, want);
		ck_assert_msg(found, "docs/%s_example.txt lacks \"%s\" (after its offset %zu): run "
			      "make examples", tools[_i], want, (size_t)(pos - out));
		pos = found + strlen(want);
		if (bg) {
			ck_assert_msg(isdigit((unsigned char)*pos), "no PID at \"%s\"", want);
			while (isdigit((unsigned char)*pos))
				pos++;
			ck_assert_msg(!strncmp(pos, bg + 6, strlen(bg + 6)), "\"%s\" after the PID",
				      bg + 6);
		}
	}
	ck_assert_int_ge(commands, 10);
	ck_assert_ptr_nonnull(strstr(out, "Written by scripts/gen-examples.sh"));
	ck_assert_ptr_null(strstr(out, "\n@"));
	for (int i = 0; i < 4; i++)
		ck_assert_msg(strstr(out, markers[_i][i]), "docs/%s_example.txt has no \"%s\"",
			      tools[_i], markers[_i][i]);
	free(tpl);
	free(out);
}
END_TEST

/* make demo installs the build's packages only; make check all of them. */
START_TEST(demo_installs_no_test_tools)
{
	static const char *const test_only[] = { "chromium", "check", "linux-perf", "man-db",
						 "bash-completion", "llvm" };
	char script[600], o[600];
	struct run_result demo, full;

	snprintf(script, sizeof(script), "%s/scripts/install-deps.sh", srcdir());
	run_cmd((char *[]){ "/bin/sh", script, "--demo", "--list", NULL }, 10, 0, &demo);
	run_cmd((char *[]){ "/bin/sh", script, "--list", NULL }, 10, 0, &full);
	ck_assert_int_eq(demo.exit_code, 0);
	ck_assert_int_eq(full.exit_code, 0);
	for (size_t i = 0; i < sizeof(test_only) / sizeof(test_only[0]); i++) {
		ck_assert_msg(!has_line(demo.out, test_only[i]), "--demo installs %s", test_only[i]);
		ck_assert_msg(has_line(full.out, test_only[i]), "the full set lacks %s",
			      test_only[i]);
	}
	ck_assert_msg(!has_line(demo.out, "nodejs") && !has_line(demo.out, "npm"),
		      "--demo installs node");
	for (const char *p = demo.out; *p; p = strchr(p, '\n') + 1) {
		char pkg[64];

		snprintf(pkg, sizeof(pkg), "%.*s", (int)strcspn(p, "\n"), p);
		ck_assert_msg(has_line(full.out, pkg), "%s: in --demo only", pkg);
	}
	ck_assert(has_line(demo.out, "clang") && has_line(demo.out, "libbpf-dev"));
	run_result_free(&demo);
	run_result_free(&full);

	/* What make demo and make check would run (-n: nothing is run). */
	snprintf(o, sizeof(o), "O=%s", builddir());
	run_cmd((char *[]){ MAKE_ALONE, "-n", "--no-print-directory", "-C", (char *)srcdir(), o,
			    "demo", NULL },
		60, 0, &demo);
	ck_assert_msg(demo.exit_code == 0, "make -n demo: %s", demo.err);
	ck_assert_msg(strstr(demo.out, "install-deps.sh --demo\n"), "make demo runs:\n%s",
		      demo.out);
	ck_assert_ptr_null(strstr(demo.out, "npm install"));
	ck_assert_ptr_nonnull(strstr(demo.out, "/workloads/demo 3"));
	run_result_free(&demo);
}
END_TEST

Suite *docs_suite(void)
{
	Suite *s = suite_create("docs");
	TCase *man = tcase_create("man"), *comp = tcase_create("completion");
	TCase *pkg = tcase_create("package");

	tcase_set_timeout(man, 60);
	tcase_add_loop_test(man, man_page_renders_without_warnings, 0, 2);
	tcase_add_loop_test(man, man_page_documents_every_option_of_help, 0, 2);
	suite_add_tcase(s, man);

	tcase_set_timeout(comp, 60);
	tcase_add_loop_test(comp, completion_of_options_and_values, 0, 2);
	tcase_add_loop_test(comp, completion_offers_every_option_of_help, 0, 2);
	tcase_add_loop_test(comp, completion_of_pids_tids_and_files, 0, 2);
	suite_add_tcase(s, comp);

	tcase_set_timeout(pkg, 120);
	tcase_add_test(pkg, make_install_puts_everything_where_it_belongs);
	tcase_add_loop_test(pkg, examples_are_generated_from_real_runs, 0, 2);
	tcase_add_test(pkg, demo_installs_no_test_tools);
	suite_add_tcase(s, pkg);
	return s;
}
