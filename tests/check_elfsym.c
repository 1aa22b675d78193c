// SPDX-License-Identifier: GPL-2.0
/*
 * ELF and kallsyms symbolization on real files: the symfixture workload as
 * built, stripped with its debug file found by build-id or .gnu_debuglink,
 * stripped to .dynsym, and the system's libc.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/elfsym.h"
#include "core/ksym.h"
#include "core/perfmap.h"
#include "core/symbolize.h"
#include "tests/fixture.h"
#include "tests/tests.h"

static struct sym_fixture fx;
static char tmpdir[] = "/tmp/profile-elfsym-XXXXXX";

static void setup(void)
{
	sym_fixture_load(&fx, workload("symfixture"));
}

static void teardown(void)
{
	sym_fixture_free(&fx);
}

static void sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
}

/* File offset of a run-time address of the fixture: what a mapping gives. */
static uint64_t file_offset(uint64_t addr)
{
	const struct mapping *m = addr_space__find(&fx.as, addr);

	ck_assert_ptr_nonnull(m);
	return addr - m->start + m->pgoff;
}

static void assert_names(const struct elf_symtab *st, bool with_static)
{
	uint64_t off;

	ck_assert_str_eq(elf_symtab__lookup_offset(st, file_offset(fx.alpha), &off),
			 "fixture_alpha");
	ck_assert_uint_eq(off, 0);
	ck_assert_str_eq(elf_symtab__lookup_offset(st, file_offset(fx.beta) + 3, &off),
			 "fixture_beta");
	ck_assert_uint_eq(off, 3);
	if (with_static)
		ck_assert_str_eq(elf_symtab__lookup_offset(st, file_offset(fx.gamma) + 1, &off),
				 "fixture_gamma_static");
	ck_assert_str_eq(elf_symtab__lookup_offset(st, file_offset(fx.main) + 4, &off), "main");
}

START_TEST(symtab_of_the_binary)
{
	struct elf_symtab *st = elf_symtab__load(workload("symfixture"));

	ck_assert_ptr_nonnull(st);
	ck_assert_int_eq(elf_symtab__source(st), ELF_SYM_SYMTAB);
	assert_names(st, true);
	elf_symtab__free(st);
}
END_TEST

START_TEST(stripped_binary_uses_build_id_debug_file)
{
	char build_id[128] = "", cmd[1024], path[600];
	struct elf_symtab *st;
	FILE *p;

	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	sh("objcopy --only-keep-debug %s %s/fixture.debug", workload("symfixture"), tmpdir);
	sh("strip -s -o %s/fixture %s", tmpdir, workload("symfixture"));
	snprintf(cmd, sizeof(cmd), "readelf -n %s | awk '/Build ID/{print $3}'",
		 workload("symfixture"));
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(fgets(build_id, sizeof(build_id), p));
	pclose(p);
	build_id[strcspn(build_id, "\n")] = '\0';
	ck_assert_int_gt(strlen(build_id), 8);
	sh("mkdir -p %s/.build-id/%.2s && cp %s/fixture.debug %s/.build-id/%.2s/%s.debug", tmpdir,
	   build_id, tmpdir, tmpdir, build_id, build_id + 2);

	elf_symtab__set_debug_root(tmpdir);
	snprintf(path, sizeof(path), "%s/fixture", tmpdir);
	st = elf_symtab__load(path);
	elf_symtab__set_debug_root("/usr/lib/debug");
	ck_assert_ptr_nonnull(st);
	ck_assert_int_eq(elf_symtab__source(st), ELF_SYM_DEBUG_BUILD_ID);
	assert_names(st, true);
	elf_symtab__free(st);
	sh("rm -rf %s", tmpdir);
}
END_TEST

START_TEST(stripped_binary_uses_debuglink_then_dynsym)
{
	char path[600];
	struct elf_symtab *st;

	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	sh("objcopy --only-keep-debug %s %s/fixture.debug", workload("symfixture"), tmpdir);
	/* No build-id note: only the debuglink can find the debug file. */
	sh("cd %s && strip -s --remove-section=.note.gnu.build-id -o fixture %s && "
	   "objcopy --add-gnu-debuglink=fixture.debug fixture",
	   tmpdir, workload("symfixture"));
	snprintf(path, sizeof(path), "%s/fixture", tmpdir);
	st = elf_symtab__load(path);
	ck_assert_ptr_nonnull(st);
	ck_assert_int_eq(elf_symtab__source(st), ELF_SYM_DEBUG_LINK);
	assert_names(st, true);
	elf_symtab__free(st);

	/* Debug file gone: exported functions still resolve from .dynsym. */
	sh("rm %s/fixture.debug", tmpdir);
	st = elf_symtab__load(path);
	ck_assert_ptr_nonnull(st);
	ck_assert_int_eq(elf_symtab__source(st), ELF_SYM_DYNSYM);
	assert_names(st, false);
	elf_symtab__free(st);
	sh("rm -rf %s", tmpdir);
}
END_TEST

START_TEST(not_an_elf_file_fails_cleanly)
{
	ck_assert_ptr_null(elf_symtab__load("/proc/self/status"));
	ck_assert_ptr_null(elf_symtab__load("/nonexistent/file"));
	ck_assert_int_eq(errno, ENOENT);
}
END_TEST

START_TEST(symbolizer_resolves_a_process_and_libc)
{
	struct symbolizer *s = symbolizer__new();
	struct proctrack *pt = proctrack__new();
	struct frame_sym fs;
	/* A libc function that AddressSanitizer does not intercept. */
	void *libc_getppid = dlsym(RTLD_DEFAULT, "getppid");

	symbolizer__user(s, &fx.as, fx.gamma + 2, &fs);
	ck_assert_str_eq(fs.name, "fixture_gamma_static");
	ck_assert_uint_eq(fs.offset, 2);
	ck_assert_str_eq(fs.module, "symfixture");
	symbolizer__user(s, &fx.as, 0x10, &fs);	/* unmapped */
	ck_assert_ptr_null(fs.name);

	/* libc is stripped: its names come from libc6-dbg, else .dynsym. */
	ck_assert_ptr_nonnull(libc_getppid);
	symbolizer__user(s, proctrack__addr_space(pt, getpid()), (uintptr_t)libc_getppid + 1, &fs);
	ck_assert_ptr_nonnull(fs.name);
	ck_assert_str_eq(fs.name, "getppid");
	ck_assert_str_eq(fs.module, "libc.so.6");
	proctrack__free(pt);
	symbolizer__free(s);
}
END_TEST

START_TEST(libc_debug_symbols_from_libc6_dbg)
{
	struct elf_symtab *st = elf_symtab__load("/lib/x86_64-linux-gnu/libc.so.6");

	ck_assert_ptr_nonnull(st);
	/* make check installs libc6-dbg: the local __libc_start_call_main is only there. */
	ck_assert_int_eq(elf_symtab__source(st), ELF_SYM_DEBUG_BUILD_ID);
	ck_assert_int_gt(elf_symtab__count(st), 3000);
	elf_symtab__free(st);
}
END_TEST

static const char kallsyms_text[] = "ffffffff81000000 T _stext\n"
				    "ffffffff81000100 t __pfx_k_leaf\n"
				    "ffffffff81000110 T k_leaf\n"
				    "ffffffff81000200 T k_mid\n"
				    "ffffffff81000300 d some_data\n"
				    "ffffffffc0000000 t mod_func\t[ext4]\n";

static char *write_temp(const char *text)
{
	static char path[64];
	FILE *f;
	int fd;

	strcpy(path, "/tmp/profile-kallsyms-XXXXXX");
	fd = mkstemp(path);
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	return path;
}

START_TEST(kallsyms_lookup_skips_pfx_and_names_modules)
{
	char *path = write_temp(kallsyms_text);
	struct ksyms *ks = ksyms__load(path);
	const char *mod;
	uint64_t off;

	unlink(path);
	ck_assert_ptr_nonnull(ks);
	ck_assert(!ksyms__restricted(ks));
	/* The __pfx_ padding in front of k_leaf belongs to the function before. */
	ck_assert_str_eq(ksyms__lookup(ks, 0xffffffff81000105ULL, &off, &mod), "_stext");
	ck_assert_str_eq(ksyms__lookup(ks, 0xffffffff81000114ULL, &off, &mod), "k_leaf");
	ck_assert_uint_eq(off, 4);
	ck_assert_ptr_null(mod);
	ck_assert_str_eq(ksyms__lookup(ks, 0xffffffffc0000010ULL, &off, &mod), "mod_func");
	ck_assert_str_eq(mod, "ext4");
	ck_assert_ptr_null(ksyms__lookup(ks, 0xffffffff80000000ULL, &off, &mod));
	ksyms__free(ks);
}
END_TEST

START_TEST(kallsyms_with_zero_addresses_is_restricted)
{
	char *path = write_temp("0000000000000000 T _stext\n0000000000000000 T k_leaf\n");
	struct ksyms *ks = ksyms__load(path);
	const char *mod;
	uint64_t off;

	unlink(path);
	ck_assert(ksyms__restricted(ks));
	ck_assert_ptr_null(ksyms__lookup(ks, 0xffffffff81000114ULL, &off, &mod));
	ksyms__free(ks);
}
END_TEST

START_TEST(cxx_names_demangle_without_parameters)
{
	const char *cases[][2] = {
		{ "_ZN2ns5ClassIlE6methodEv", "ns::Class<long>::method" },
		{ "_ZNK3foo3barEi", "foo::bar" },
		{ "_ZN3foo3bazEPFviE", "foo::baz" },	/* a function-pointer parameter */
		{ "_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector<int, std::allocator<int> >::push_back" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *d = elf_demangle(cases[i][0], strlen(cases[i][0]));

		ck_assert_ptr_nonnull(d);
		ck_assert_str_eq(d, cases[i][1]);
		free(d);
	}
	ck_assert_ptr_null(elf_demangle("main", 4));
	ck_assert_ptr_null(elf_demangle("_Zgarbage", 9));
}
END_TEST

START_TEST(perf_map_lines_in_both_forms)
{
	char *path = write_temp("7f0000001000 40 LazyCompile:~fib /app/x.js:3\n"
				"0x7f0000002000 0x10 Interpreted foo\n"
				"garbage line\n");
	struct perfmap *pm = perfmap__load_file(path);
	uint64_t off;

	unlink(path);
	ck_assert_ptr_nonnull(pm);
	ck_assert_str_eq(perfmap__lookup(pm, 0x7f0000001004, &off), "LazyCompile:~fib /app/x.js:3");
	ck_assert_uint_eq(off, 4);
	ck_assert_str_eq(perfmap__lookup(pm, 0x7f000000200f, &off), "Interpreted foo");
	ck_assert_ptr_null(perfmap__lookup(pm, 0x7f0000002010, &off));
	ck_assert_ptr_null(perfmap__lookup(pm, 0x7f0000000fff, &off));
	perfmap__free(pm);
}
END_TEST

Suite *elfsym_suite(void)
{
	Suite *s = suite_create("elfsym");
	TCase *tc = tcase_create("elf");
	TCase *tk = tcase_create("kallsyms");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, symtab_of_the_binary);
	tcase_add_test(tc, stripped_binary_uses_build_id_debug_file);
	tcase_add_test(tc, stripped_binary_uses_debuglink_then_dynsym);
	tcase_add_test(tc, not_an_elf_file_fails_cleanly);
	tcase_add_test(tc, symbolizer_resolves_a_process_and_libc);
	tcase_add_test(tc, libc_debug_symbols_from_libc6_dbg);
	suite_add_tcase(s, tc);
	tcase_add_test(tk, kallsyms_lookup_skips_pfx_and_names_modules);
	tcase_add_test(tk, kallsyms_with_zero_addresses_is_restricted);
	tcase_add_test(tk, cxx_names_demangle_without_parameters);
	tcase_add_test(tk, perf_map_lines_in_both_forms);
	suite_add_tcase(s, tk);
	return s;
}
