// SPDX-License-Identifier: GPL-2.0
/*
 * ELF and kallsyms symbolization on real files: the symfixture workload as
 * built, stripped with its debug file found by build-id or .gnu_debuglink,
 * stripped to .dynsym, and the system's libc.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "core/sym/debugfile.h"
#include "core/sym/elfsym.h"
#include "core/sym/ksym.h"
#include "core/sym/perfmap.h"
#include "core/sym/symbolize.h"
#include "tests/support/fixture.h"
#include "tests/support/tests.h"

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

/*
 * Runs fn in a child that alarm() kills after a few seconds: a reader that
 * blocks on a hostile file fails the test instead of hanging it. Returns
 * fn's result, or -1 when it was killed.
 */
static int in_child_with_timeout(int (*fn)(void *), void *arg, unsigned int seconds)
{
	pid_t pid = fork();
	int status;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* check's own SIGALRM handler, inherited, would kill the whole test. */
		signal(SIGALRM, SIG_DFL);
		alarm(seconds);
		_exit(fn(arg));
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
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

/* The symfixture workload's build-id in hex (readelf's). */
static void fixture_build_id(char *hex, size_t len)
{
	char cmd[1024];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -n %s | awk '/Build ID/{print $3}'",
		 workload("symfixture"));
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(fgets(hex, (int)len, p));
	pclose(p);
	hex[strcspn(hex, "\n")] = '\0';
}

START_TEST(stripped_binary_uses_build_id_debug_file)
{
	char build_id[128] = "", path[600];
	struct elf_symtab *st;

	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	sh("objcopy --only-keep-debug %s %s/fixture.debug", workload("symfixture"), tmpdir);
	sh("strip -s -o %s/fixture %s", tmpdir, workload("symfixture"));
	fixture_build_id(build_id, sizeof(build_id));
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

/* The fixture stripped, without a build-id note unless asked, as tmpdir/bin. */
static void make_stripped_fixture(bool keep_build_id)
{
	sh("strip -s %s -o %s/bin %s", keep_build_id ? "" : "--remove-section=.note.gnu.build-id",
	   tmpdir, workload("symfixture"));
}

/* Replace bin's .gnu_debuglink section by these bytes. */
static void set_debuglink_bytes(const void *bytes, size_t len)
{
	char sec[700];
	FILE *f;

	snprintf(sec, sizeof(sec), "%s/debuglink.sec", tmpdir);
	f = fopen(sec, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(bytes, 1, len, f), len);
	fclose(f);
	sh("cd %s && objcopy --remove-section=.gnu_debuglink --add-section .gnu_debuglink=%s bin",
	   tmpdir, sec);
}

/* A debuglink to name with the CRC of the file at crc_of (0 when NULL): what objcopy writes. */
static void set_debuglink(const char *name, const char *crc_of)
{
	unsigned char buf[512] = { 0 };
	size_t len = strlen(name), off = (len + 4) & ~3UL;
	uint32_t crc = 0;

	if (crc_of) {
		unsigned char data[65536];
		FILE *f = fopen(crc_of, "r");
		size_t n;

		ck_assert_ptr_nonnull(f);
		crc = crc32(0L, Z_NULL, 0);
		while ((n = fread(data, 1, sizeof(data), f)) > 0)
			crc = crc32(crc, data, n);
		fclose(f);
	}
	ck_assert_uint_lt(off + 4, sizeof(buf));
	memcpy(buf, name, len);
	memcpy(buf + off, &crc, 4);
	set_debuglink_bytes(buf, off + 4);
}

static int load_bin_source(void *arg)
{
	char path[600];
	struct elf_symtab *st;
	int src;

	snprintf(path, sizeof(path), "%s/bin", tmpdir);
	st = elf_symtab__load(path);
	src = st ? (int)elf_symtab__source(st) : 100;
	elf_symtab__free(st);
	return src;
}

/* Where bin's symbols come from, found within a few seconds. */
static int bin_source(void)
{
	int src = in_child_with_timeout(load_bin_source, NULL, 10);

	ck_assert_msg(src != -1, "loading symbols blocked or crashed");
	return src;
}

START_TEST(debuglink_to_a_device_fifo_or_huge_file_is_refused)
{
	char path[700];

	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	make_stripped_fixture(false);
	/* A path, not a file name: here it is /dev/zero, which never ends. */
	set_debuglink("../../dev/zero", NULL);
	ck_assert_int_eq(bin_source(), ELF_SYM_DYNSYM);

	/* A FIFO without a writer blocks a plain open. */
	snprintf(path, sizeof(path), "%s/fifo.debug", tmpdir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	set_debuglink("fifo.debug", NULL);
	ck_assert_int_eq(bin_source(), ELF_SYM_DYNSYM);
	sh("mkdir %s/.debug && mkfifo %s/.debug/fifo.debug", tmpdir, tmpdir);
	ck_assert_int_eq(bin_source(), ELF_SYM_DYNSYM);

	/* 5 GiB of nothing (sparse) is no debug file: not read at all. */
	sh("truncate -s 5G %s/huge.debug", tmpdir);
	set_debuglink("huge.debug", NULL);
	ck_assert_int_eq(bin_source(), ELF_SYM_DYNSYM);
	sh("rm -rf %s", tmpdir);
}
END_TEST

START_TEST(debuglink_names_are_file_names)
{
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	make_stripped_fixture(false);
	sh("mkdir %s/sub && objcopy --only-keep-debug %s %s/sub/fixture.debug", tmpdir,
	   workload("symfixture"), tmpdir);
	/* Right CRC, but a path: refused. */
	{
		char dbg[700];

		snprintf(dbg, sizeof(dbg), "%s/sub/fixture.debug", tmpdir);
		set_debuglink("sub/fixture.debug", dbg);
		ck_assert_int_eq(bin_source(), ELF_SYM_DYNSYM);
		set_debuglink("../sub/fixture.debug", dbg);
		ck_assert_int_eq(bin_source(), ELF_SYM_DYNSYM);
		/* The same file named as a file in the directory next to bin: found. */
		sh("mv %s/sub/fixture.debug %s/fixture.debug", tmpdir, tmpdir);
		snprintf(dbg, sizeof(dbg), "%s/fixture.debug", tmpdir);
		set_debuglink("fixture.debug", dbg);
		ck_assert_int_eq(bin_source(), ELF_SYM_DEBUG_LINK);
	}
	sh("rm -rf %s", tmpdir);
}
END_TEST

START_TEST(debuglink_symlink_followed_only_in_a_private_directory)
{
	char dbg[700];

	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	make_stripped_fixture(false);
	sh("mkdir %s/real && objcopy --only-keep-debug %s %s/real/fixture.debug && "
	   "ln -s real/fixture.debug %s/link.debug",
	   tmpdir, workload("symfixture"), tmpdir, tmpdir);
	snprintf(dbg, sizeof(dbg), "%s/real/fixture.debug", tmpdir);
	set_debuglink("link.debug", dbg);
	ck_assert_int_eq(bin_source(), ELF_SYM_DEBUG_LINK);
	/* Anyone may create files in a directory like /tmp: a symlink there is not followed. */
	sh("chmod 1777 %s", tmpdir);
	ck_assert_int_eq(bin_source(), ELF_SYM_DYNSYM);
	sh("rm -rf %s", tmpdir);
}
END_TEST

/*
 * Issue 32: a debug file is the binary's only where its owner (or root)
 * put it and alone can change it. Others may replace entries of a
 * directory they can write to (not sticky), or the contents of a file
 * they can write to; in a sticky directory (/tmp) they may only add files,
 * which are theirs: ours there is still taken.
 */
START_TEST(debug_files_only_from_places_the_binary_owner_controls)
{
	char dbg[700];

	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	make_stripped_fixture(false);
	sh("mkdir -m 755 %s/.debug && objcopy --only-keep-debug %s %s/.debug/fixture.debug",
	   tmpdir, workload("symfixture"), tmpdir);
	snprintf(dbg, sizeof(dbg), "%s/.debug/fixture.debug", tmpdir);
	set_debuglink("fixture.debug", dbg);
	sh("chmod 644 %s", dbg);
	ck_assert_int_eq(bin_source(), ELF_SYM_DEBUG_LINK);
	sh("chmod 777 %s/.debug", tmpdir);
	ck_assert_int_eq(bin_source(), ELF_SYM_DYNSYM);
	sh("chmod 1777 %s/.debug", tmpdir);
	ck_assert_int_eq(bin_source(), ELF_SYM_DEBUG_LINK);
	sh("chmod 666 %s", dbg);
	ck_assert_int_eq(bin_source(), ELF_SYM_DYNSYM);
	sh("rm -rf %s", tmpdir);
}
END_TEST

START_TEST(malformed_debuglink_sections_are_ignored)
{
	static const struct {
		const char *bytes;
		size_t len;
	} cases[] = {
		{ "fixture.debug", 13 },		/* no NUL, no CRC */
		{ "abcd\0\0\0\0\1", 9 },		/* the CRC would end past the section */
		{ "abcdefg\0\1\2\3", 11 },		/* the same, aligned */
		{ "\0\0\0\0\0\0\0\0", 8 },	/* an empty name */
		{ ".\0\0\0\0\0\0\0", 8 },
		{ "..\0\0\0\0\0\0", 8 },
		{ "", 0 },
	};

	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	make_stripped_fixture(false);
	sh("objcopy --only-keep-debug %s %s/fixture.debug", workload("symfixture"), tmpdir);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		set_debuglink_bytes(cases[i].bytes, cases[i].len);
		ck_assert_int_eq(bin_source(), ELF_SYM_DYNSYM);
	}
	sh("rm -rf %s", tmpdir);
}
END_TEST

/* Point the header of section name past the end of the file at path: its data cannot be read. */
static void break_section(const char *path, const char *name)
{
	FILE *f = fopen(path, "r+");
	Elf64_Shdr *sh, *strtab;
	Elf64_Ehdr eh;
	char *names;

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fread(&eh, sizeof(eh), 1, f), 1);
	sh = calloc(eh.e_shnum, sizeof(*sh));
	ck_assert_ptr_nonnull(sh);
	fseek(f, eh.e_shoff, SEEK_SET);
	ck_assert_uint_eq(fread(sh, sizeof(*sh), eh.e_shnum, f), eh.e_shnum);
	strtab = &sh[eh.e_shstrndx];
	names = calloc(1, strtab->sh_size + 1);
	fseek(f, strtab->sh_offset, SEEK_SET);
	ck_assert_uint_eq(fread(names, 1, strtab->sh_size, f), strtab->sh_size);
	for (int i = 0; i < eh.e_shnum; i++) {
		if (sh[i].sh_name >= strtab->sh_size || strcmp(names + sh[i].sh_name, name))
			continue;
		sh[i].sh_offset = 0x7fffff00;
		fseek(f, eh.e_shoff + i * sizeof(*sh), SEEK_SET);
		ck_assert_uint_eq(fwrite(&sh[i], sizeof(*sh), 1, f), 1);
	}
	fclose(f);
	free(names);
	free(sh);
}

START_TEST(unreadable_debug_file_falls_back_to_dynsym)
{
	char dbg[700];

	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	make_stripped_fixture(false);
	snprintf(dbg, sizeof(dbg), "%s/fixture.debug", tmpdir);
	sh("objcopy --only-keep-debug %s %s", workload("symfixture"), dbg);
	break_section(dbg, ".symtab");
	set_debuglink("fixture.debug", dbg);
	ck_assert_int_eq(bin_source(), ELF_SYM_DYNSYM);
	sh("rm -rf %s", tmpdir);
}
END_TEST

START_TEST(build_id_debug_file_that_is_a_fifo_is_refused)
{
	char build_id[128] = "";

	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	make_stripped_fixture(true);
	fixture_build_id(build_id, sizeof(build_id));
	sh("mkdir -p %s/.build-id/%.2s && mkfifo %s/.build-id/%.2s/%s.debug", tmpdir, build_id,
	   tmpdir, build_id, build_id + 2);
	elf_symtab__set_debug_root(tmpdir);
	ck_assert_int_eq(bin_source(), ELF_SYM_DYNSYM);
	/* A debug file whose build-id is another one's is no debug file of this binary. */
	sh("rm %s/.build-id/%.2s/%s.debug && "
	   "objcopy --only-keep-debug %s %s/.build-id/%.2s/%s.debug",
	   tmpdir, build_id, build_id + 2, workload("busy"), tmpdir, build_id, build_id + 2);
	ck_assert_int_eq(bin_source(), ELF_SYM_DYNSYM);
	sh("objcopy --only-keep-debug %s %s/.build-id/%.2s/%s.debug", workload("symfixture"),
	   tmpdir, build_id, build_id + 2);
	ck_assert_int_eq(bin_source(), ELF_SYM_DEBUG_BUILD_ID);
	elf_symtab__set_debug_root("/usr/lib/debug");
	sh("rm -rf %s", tmpdir);
}
END_TEST

/* The address nm gives the symbol name of path, or 0. */
static uint64_t nm_addr(const char *path, const char *name)
{
	char cmd[1024], line[4096];
	uint64_t addr = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm %s", path);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p)) {
		char sym[2048], type;
		unsigned long long a;

		if (sscanf(line, "%llx %c %2047s", &a, &type, sym) == 3 && !strcmp(sym, name))
			addr = a;
	}
	pclose(p);
	ck_assert_msg(addr, "%s: no symbol %s", path, name);
	return addr;
}

/* Start and size of section name of path, from readelf. */
static void section_of(const char *path, const char *name, uint64_t *start, uint64_t *size)
{
	char cmd[1024], line[1024];
	bool found = false;
	FILE *p;

	*start = *size = 0;
	snprintf(cmd, sizeof(cmd), "readelf -SW %s", path);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p)) {
		char *b = strchr(line, ']'), sname[256], type[64];
		unsigned long long addr, off, sz;

		if (b &&
		    sscanf(b + 1, "%255s %63s %llx %llx %llx", sname, type, &addr, &off, &sz) == 5 &&
		    !strcmp(sname, name)) {
			*start = addr;
			*size = sz;
			found = true;
		}
	}
	pclose(p);
	ck_assert_msg(found, "%s: no section %s", path, name);
}

static void assert_vaddr(const struct elf_symtab *st, uint64_t vaddr, const char *name,
			 uint64_t off)
{
	uint64_t got_off = 0;
	const char *got = elf_symtab__lookup_vaddr(st, vaddr, &got_off);

	if (!name) {
		ck_assert_msg(!got, "%#llx: %s+%#llx, expected no name", (unsigned long long)vaddr,
			      got, (unsigned long long)got_off);
		return;
	}
	ck_assert_msg(got && !strcmp(got, name) && got_off == off,
		      "%#llx: %s+%#llx, expected %s+%#llx", (unsigned long long)vaddr,
		      got ? got : "(none)", (unsigned long long)got_off, name,
		      (unsigned long long)off);
}

START_TEST(asm_labels_name_their_code)
{
	const char *bin = workload("asmlabels");
	uint64_t spin = nm_addr(bin, "asm_spin"), loop = nm_addr(bin, "asm_spin_loop");
	uint64_t typed = nm_addr(bin, "asm_typed"), tail = nm_addr(bin, "asm_tail");
	uint64_t data = nm_addr(bin, "$d"), sec, sec_size;
	struct elf_symtab *st = elf_symtab__load(bin);
	char path[700];

	ck_assert_ptr_nonnull(st);
	section_of(bin, "asm_hot", &sec, &sec_size);
	/* A global label, not the mapping symbol at its address. */
	assert_vaddr(st, spin, "asm_spin", 0);
	assert_vaddr(st, spin + 2, "asm_spin", 2);
	/* A local label ends the one before; the data after it ($d) is still its. */
	assert_vaddr(st, loop + 2, "asm_spin_loop", 2);
	assert_vaddr(st, data + 1, "asm_spin_loop", data + 1 - loop);
	/* A typed symbol wins a tie, and keeps its name over a label inside it. */
	assert_vaddr(st, typed, "asm_typed", 0);
	assert_vaddr(st, nm_addr(bin, "asm_typed_inside"), "asm_typed", 4);
	assert_vaddr(st, tail + 1, "asm_tail", 1);
	assert_vaddr(st, sec + sec_size - 1, "asm_tail", sec + sec_size - 1 - tail);
	elf_symtab__free(st);

	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	/*
	 * Nothing after the section's last label (_fini removed): it ends with
	 * the section. Assembler-local labels (.L) are noise, like $a.
	 */
	snprintf(path, sizeof(path), "%s/crafted", tmpdir);
	sh("objcopy --strip-symbol=_fini --add-symbol .Lnoise=asm_hot:%#llx,local "
	   "--add-symbol '$a=asm_hot:%#llx,local' %s %s",
	   (unsigned long long)(loop + 1 - sec), (unsigned long long)(loop + 2 - sec), bin, path);
	st = elf_symtab__load(path);
	ck_assert_ptr_nonnull(st);
	assert_vaddr(st, loop + 3, "asm_spin_loop", 3);
	assert_vaddr(st, sec + sec_size - 1, "asm_tail", sec + sec_size - 1 - tail);
	assert_vaddr(st, sec + sec_size, NULL, 0);
	elf_symtab__free(st);

	/* Stripped to .dynsym (-rdynamic): the global labels remain. */
	snprintf(path, sizeof(path), "%s/stripped", tmpdir);
	sh("strip -s -o %s %s", path, bin);
	st = elf_symtab__load(path);
	ck_assert_ptr_nonnull(st);
	ck_assert_int_eq(elf_symtab__source(st), ELF_SYM_DYNSYM);
	assert_vaddr(st, loop + 2, "asm_spin", loop + 2 - spin);
	assert_vaddr(st, typed + 4, "asm_typed", 4);
	elf_symtab__free(st);
	sh("rm -rf %s", tmpdir);
}
END_TEST

START_TEST(ld_so_start_is_named)
{
	const char *ldso = "/lib64/ld-linux-x86-64.so.2";
	struct elf_symtab *st = elf_symtab__load(ldso);
	char debug[4096];
	uint64_t start;

	ck_assert_ptr_nonnull(st);
	/* _start is a label of ld.so's own assembly; its debug file (libc6-dbg) names it. */
	ck_assert_int_eq(elf_debug_file(ldso, ldso, debug, sizeof(debug)), 0);
	start = nm_addr(debug, "_start");
	assert_vaddr(st, start, "_start", 0);
	assert_vaddr(st, start + 4, "_start", 4);
	elf_symtab__free(st);
}
END_TEST

/*
 * Every stub objdump names NAME@plt has that name here too, also inside
 * it; *ABS*+ADDR@plt (an IFUNC of the file itself) is named by the IFUNC's
 * symbol, ifunc@plt. Returns the number of stubs checked; *ifuncs counts
 * the latter.
 */
static int check_plt_names(const char *path, const struct elf_symtab *st, const char *ifunc,
			   int *ifuncs)
{
	char cmd[1024], line[4096];
	int n = 0;
	FILE *p;

	*ifuncs = 0;
	snprintf(cmd, sizeof(cmd), "objdump -d %s", path);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned long long addr;
		char name[2048];
		const char *got;
		uint64_t off;
		size_t len;

		if (sscanf(line, "%llx <%2047[^>]>:", &addr, name) != 2)
			continue;
		len = strlen(name);
		if (len < 5 || strcmp(name + len - 4, "@plt"))
			continue;
		got = elf_symtab__lookup_vaddr(st, addr, &off);
		ck_assert_msg(got, "%s: %#llx %s: no name", path, addr, name);
		if (!strncmp(name, "*ABS*", 5)) {
			ck_assert_msg(strlen(got) > 4 && !strcmp(got + strlen(got) - 4, "@plt") &&
					      (!ifunc || (!strncmp(got, ifunc, strlen(ifunc)) &&
							  got[strlen(ifunc)] == '@')),
				      "%s: %#llx %s: %s", path, addr, name, got);
			(*ifuncs)++;
		} else {
			ck_assert_msg(!strcmp(got, name), "%s: %#llx: %s, objdump: %s", path, addr,
				      got, name);
		}
		ck_assert_uint_eq(off, 0);
		got = elf_symtab__lookup_vaddr(st, addr + 4, &off);
		ck_assert_msg(got && off == 4, "%s: %#llx + 4: not in the stub", path, addr);
		n++;
	}
	pclose(p);
	return n;
}

static void check_plt_file(const char *path, int min_stubs, const char *ifunc_name)
{
	struct elf_symtab *st = elf_symtab__load(path);
	uint64_t plt, plt_size, off;
	int ifuncs;

	ck_assert_ptr_nonnull(st);
	ck_assert_int_ge(check_plt_names(path, st, ifunc_name, &ifuncs), min_stubs);
	if (ifunc_name)
		ck_assert_int_eq(ifuncs, 1);
	/* The lazy resolver's header is no function's stub. */
	section_of(path, ".plt", &plt, &plt_size);
	ck_assert_ptr_null(elf_symtab__lookup_vaddr(st, plt, &off));
	elf_symtab__free(st);
}

START_TEST(plt_stubs_named_as_objdump_names_them)
{
	const char *bin = workload("pltcalls");
	struct elf_symtab *st = elf_symtab__load(bin);
	uint64_t off, plt, plt_size;
	char path[700];
	int ifuncs;

	/* clang's build as the tests run it: lazy .plt, .plt.got, an IRELATIVE stub. */
	ck_assert_ptr_nonnull(st);
	assert_vaddr(st, nm_addr(bin, "main"), "main", 0);
	elf_symtab__free(st);
	check_plt_file(bin, 6, "plt_add");

	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	/* IBT: stubs in .plt.sec, 16-byte .plt.got entries, .plt entries that only push. */
	snprintf(path, sizeof(path), "%s/ibt", tmpdir);
	sh("gcc -O1 -fcf-protection=full -Wl,-z,ibtplt -o %s %s/tests/workloads/pltcalls.c", path,
	   getenv("PROFILE_SRCDIR"));
	check_plt_file(path, 6, "plt_add");
	st = elf_symtab__load(path);
	section_of(path, ".plt", &plt, &plt_size);
	ck_assert_uint_gt(plt_size, 16);
	ck_assert_ptr_null(elf_symtab__lookup_vaddr(st, plt + 16, &off));
	elf_symtab__free(st);

	snprintf(path, sizeof(path), "%s/nopie", tmpdir);
	sh("gcc -O1 -no-pie -o %s %s/tests/workloads/pltcalls.c", path, getenv("PROFILE_SRCDIR"));
	check_plt_file(path, 5, "plt_add");
	snprintf(path, sizeof(path), "%s/now", tmpdir);
	sh("gcc -O1 -Wl,-z,now -o %s %s/tests/workloads/pltcalls.c", path,
	   getenv("PROFILE_SRCDIR"));
	check_plt_file(path, 6, "plt_add");

	/* Stripped: names from .dynsym, the IFUNC's too (-rdynamic). */
	snprintf(path, sizeof(path), "%s/stripped", tmpdir);
	sh("strip -s -o %s %s", path, bin);
	st = elf_symtab__load(path);
	ck_assert_ptr_nonnull(st);
	ck_assert_int_ge(check_plt_names(path, st, "plt_add", &ifuncs), 6);
	ck_assert_int_eq(ifuncs, 1);
	elf_symtab__free(st);
	sh("rm -rf %s", tmpdir);
}
END_TEST

START_TEST(plt_stubs_of_debian_binaries)
{
	/* Stripped, without debug files: .dynsym and the relocations are all there is. */
	check_plt_file("/usr/bin/gzip", 50, NULL);
	if (access("/usr/bin/xz", R_OK) == 0)
		check_plt_file("/usr/bin/xz", 50, NULL);
}
END_TEST

/* Names for the same thing written two ways by the two demanglers. */
static void normalize_cxx(char *s)
{
	static const char *const longer[][2] = {
		{ "std::basic_string<char, std::char_traits<char>, std::allocator<char> >",
		  "std::string" },
		{ "std::basic_ostream<char, std::char_traits<char> >", "std::ostream" },
		{ "std::basic_istream<char, std::char_traits<char> >", "std::istream" },
		{ "std::basic_iostream<char, std::char_traits<char> >", "std::iostream" },
	};
	char *p;

	for (size_t i = 0; i < sizeof(longer) / sizeof(longer[0]); i++) {
		size_t n = strlen(longer[i][0]), m = strlen(longer[i][1]);

		while ((p = strstr(s, longer[i][0]))) {
			memcpy(p, longer[i][1], m);
			memmove(p + m, p + n, strlen(p + n) + 1);
		}
	}
	/* c++filt -p keeps a thunk's parameters: we drop them as for any function. */
	if (strstr(s, "thunk to ") && (p = strchr(s, '(')))
		*p = '\0';
}

struct cxx_sym {
	uint64_t addr;
	char mangled[1024];
	char expect[2048];	/* c++filt -p */
};

/*
 * Every C++ function of bin (nm) looked up at its address: the name is what
 * c++filt -p prints for it or for an alias at the same address. Returns
 * the number checked.
 */
static int check_cxx_names(const char *bin)
{
	struct elf_symtab *st = elf_symtab__load(bin);
	struct cxx_sym *syms = calloc(4096, sizeof(*syms));
	char cmd[1024], line[4096], list[700];
	size_t nr = 0, checked = 0;
	FILE *p, *f;

	ck_assert_ptr_nonnull(st);
	ck_assert_ptr_nonnull(syms);
	snprintf(list, sizeof(list), "%s/mangled", tmpdir);
	f = fopen(list, "w");
	ck_assert_ptr_nonnull(f);
	snprintf(cmd, sizeof(cmd), "nm --defined-only %s", bin);
	p = popen(cmd, "r");
	while (fgets(line, sizeof(line), p) && nr < 4096) {
		unsigned long long a;
		char type;

		if (sscanf(line, "%llx %c %1023s", &a, &type, syms[nr].mangled) != 3 ||
		    !strchr("TtWwi", type) || strncmp(syms[nr].mangled, "_Z", 2))
			continue;
		syms[nr].addr = a;
		fprintf(f, "%s\n", syms[nr].mangled);
		nr++;
	}
	pclose(p);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "c++filt -p < %s", list);
	p = popen(cmd, "r");
	for (size_t i = 0; i < nr; i++) {
		ck_assert_ptr_nonnull(fgets(syms[i].expect, sizeof(syms[i].expect), p));
		syms[i].expect[strcspn(syms[i].expect, "\n")] = '\0';
		normalize_cxx(syms[i].expect);
	}
	pclose(p);
	for (size_t i = 0; i < nr; i++) {
		char got[2048];
		const char *name;
		uint64_t off;
		bool match = false;

		name = elf_symtab__lookup_vaddr(st, syms[i].addr, &off);
		ck_assert_msg(name, "%s: %s: no name", bin, syms[i].mangled);
		snprintf(got, sizeof(got), "%s", name);
		normalize_cxx(got);
		for (size_t j = 0; j < nr; j++)
			match |= syms[j].addr == syms[i].addr && !strcmp(got, syms[j].expect);
		ck_assert_msg(match, "%s: %s: %s, c++filt -p: %s", bin, syms[i].mangled, got,
			      syms[i].expect);
		checked++;
	}
	free(syms);
	elf_symtab__free(st);
	return checked;
}

START_TEST(cxx_names_as_cxxfilt_prints_them)
{
	static const char *const cases[][2] = {
		{ "_ZN2ns5twiceIlEET_S1_", "ns::twice<long>" },
		{ "_ZN2ns4pickIiEEPFiT_Ev", "ns::pick<int>" },
		{ "_ZN2ns3addIldEEDTplfp_fp0_ET_T0_", "ns::add<long, double>" },
		{ "_ZN2ns3sumIiJlsEEElT_DpT0_", "ns::sum<int, long, short>" },
		{ "_ZN2nsltIlEEbRKNS_3BoxIT_EES5_", "ns::operator< <long>" },
		{ "_ZNK2ns3BoxIlEcvlEv", "ns::Box<long>::operator long" },
		{ "_ZNK2ns3BoxIlE3mapIiEET_S3_", "ns::Box<long>::map<int>" },
		{ "_ZNR2ns3BoxIlE3setEl", "ns::Box<long>::set" },
		{ "_ZNK2ns5AdderclEl", "ns::Adder::operator()" },
		{ "_ZN2ns4PoolnwEm", "ns::Pool::operator new" },
		{ "_ZN2ns5applyIPFviEEEvT_i", "ns::apply<void (*)(int)>" },
		{ "_ZZN2ns11run_lambdasElENK3$_0clIiEEDaT_",
		  "ns::run_lambdas(long)::$_0::operator()<int>" },
		{ "_ZN12_GLOBAL__N_16hiddenEl", "(anonymous namespace)::hidden" },
		{ "_ZThn16_NK2ns7Derived5valueEv", "non-virtual thunk to ns::Derived::value" },
		{ "_ZN2ns5labelIlEENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEET_",
		  "ns::label<long>" },
	};
	const char *bin = workload("cxxnames");
	struct elf_symtab *st = elf_symtab__load(bin);
	char path[700];

	ck_assert_ptr_nonnull(st);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_vaddr(st, nm_addr(bin, cases[i][0]) + 1, cases[i][1], 1);
	elf_symtab__free(st);

	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	ck_assert_int_gt(check_cxx_names(bin), 40);
	/* GCC's names: {lambda(auto:1)#2}, [clone .isra.0], [clone .cold]. */
	snprintf(path, sizeof(path), "%s/cxxnames-gcc", tmpdir);
	sh("g++ -O2 -o %s %s/tests/workloads/cxxnames.cpp", path, getenv("PROFILE_SRCDIR"));
	ck_assert_int_gt(check_cxx_names(path), 30);
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

/*
 * The tables of a file idle for a while go, and with them the descriptor
 * its DWARF held; what identifies the file stays (the resolver keys frames
 * by that pointer), and the next lookup reads them again: the same names
 * and source lines. Identity and build-id lookups alone read nothing.
 */
START_TEST(idle_tables_are_dropped_and_read_again)
{
	struct symbolizer *s = symbolizer__new();
	const struct mapping *m = addr_space__find(&fx.as, fx.gamma);
	struct src_frame before, after;
	struct symbolizer_stats st;
	struct frame_sym fs;
	const void *file;
	char bid[2 * BUILD_ID_MAX + 1];
	size_t fds;

	ck_assert_ptr_nonnull(m);
	symbolizer__want_source(s);
	symbolizer__user(s, &fx.as, fx.gamma + 2, &fs);
	ck_assert_str_eq(fs.name, "fixture_gamma_static");
	ck_assert_uint_eq(symbolizer__user_source(s, &fx.as, fx.gamma + 2, &before, 1), 1);
	ck_assert_str_eq(before.function, "fixture_gamma_static");
	before.function = strdup(before.function);
	before.file = strdup(before.file);
	file = symbolizer__file_of(s, &fx.as, m);
	ck_assert_ptr_nonnull(file);
	snprintf(bid, sizeof(bid), "%s", symbolizer__build_id(s, &fx.as, m));
	ck_assert_uint_gt(strlen(bid), 0);

	ck_assert_uint_eq(symbolizer__drop_idle(s, 60000), 0);	/* just used */
	fds = open_fds();
	ck_assert_uint_eq(symbolizer__drop_idle(s, 0), 1);
	symbolizer__stats(s, &st);
	ck_assert_uint_eq(st.files, 1);
	ck_assert_uint_eq(st.loaded, 0);
	ck_assert_uint_eq(st.dropped, 1);
	ck_assert_uint_eq(open_fds(), fds - 1);
	ck_assert_ptr_eq(symbolizer__file_of(s, &fx.as, m), file);
	ck_assert_str_eq(symbolizer__build_id(s, &fx.as, m), bid);
	symbolizer__stats(s, &st);
	ck_assert_uint_eq(st.loaded, 0);

	symbolizer__user(s, &fx.as, fx.gamma + 2, &fs);
	ck_assert_ptr_nonnull(fs.name);
	ck_assert_str_eq(fs.name, "fixture_gamma_static");
	ck_assert_uint_eq(fs.offset, 2);
	ck_assert_str_eq(fs.module, "symfixture");
	ck_assert_uint_eq(symbolizer__user_source(s, &fx.as, fx.gamma + 2, &after, 1), 1);
	ck_assert_str_eq(after.function, before.function);
	ck_assert_str_eq(after.file, before.file);
	ck_assert_uint_eq(after.line, before.line);
	ck_assert_uint_eq(open_fds(), fds);
	symbolizer__stats(s, &st);
	ck_assert_uint_eq(st.loaded, 1);
	ck_assert_uint_eq(st.reloaded, 1);
	ck_assert_uint_eq(st.reload_failures, 0);
	ck_assert_ptr_eq(symbolizer__file_of(s, &fx.as, m), file);
	free((char *)before.function);
	free((char *)before.file);
	symbolizer__free(s);
}
END_TEST

/*
 * A file dropped while idle and replaced at its path since (its process
 * gone too) is not read again as whatever now has the path: its frames
 * print [unknown].
 */
START_TEST(a_dropped_file_gone_since_is_not_read_again)
{
	struct symbolizer *s = symbolizer__new();
	struct sym_fixture copy;
	struct symbolizer_stats st;
	struct frame_sym fs;
	char dir[] = "/tmp/profile-drop-XXXXXX", bin[64];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(bin, sizeof(bin), "%s/symfixture", dir);
	sh("cp %s %s", workload("symfixture"), bin);
	sym_fixture_load(&copy, bin);
	symbolizer__user(s, &copy.as, copy.gamma, &fs);
	ck_assert_str_eq(fs.name, "fixture_gamma_static");
	ck_assert_uint_eq(symbolizer__drop_idle(s, 0), 1);
	/* Another binary at its path: another inode. */
	sh("cp /bin/true %s.new && mv %s.new %s", bin, bin, bin);
	symbolizer__user(s, &copy.as, copy.gamma, &fs);
	ck_assert_ptr_null(fs.name);
	ck_assert_str_eq(fs.module, "symfixture");
	symbolizer__stats(s, &st);
	ck_assert_uint_eq(st.reloaded, 0);
	ck_assert_uint_eq(st.loaded, 0);
	sym_fixture_free(&copy);
	sh("rm -r %s", dir);
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

/* The table of a kallsyms file holding text, the file gone again. */
static struct ksyms *load_kallsyms(const char *text)
{
	char *path = write_temp(text);
	struct ksyms *ks = ksyms__load(path);

	unlink(path);
	ck_assert_ptr_nonnull(ks);
	return ks;
}

START_TEST(kallsyms_lookup_skips_pfx_and_names_modules)
{
	struct ksyms *ks = load_kallsyms(kallsyms_text);
	const char *mod;
	uint64_t off;

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

/*
 * Ties as this kernel (6.18) has them: section markers are type T like the
 * functions they share an address with, and come after them in the file.
 */
static const char kallsyms_ties[] = "ffffffff81000000 T srso_alias_untrain_ret\n"
				    "ffffffff81000000 T _stext\n"
				    "ffffffff81000000 T _text\n"
				    "ffffffff81000000 T __pi__text\n"
				    "ffffffff81000300 T irq_entries_start\n"
				    "ffffffff81000300 T __irqentry_text_start\n"
				    "ffffffff81000f70 t common_interrupt_return\n"
				    "ffffffff81000f70 T "
				    "swapgs_restore_regs_and_return_to_usermode\n"
				    "ffffffff81000f70 T __irqentry_text_end\n"
				    "ffffffff813827a0 T __pfx___x64_sys_getppid\n"
				    "ffffffff813827b0 t __do_sys_getppid\n"
				    "ffffffff813827b0 T __ia32_sys_getppid\n"
				    "ffffffff813827b0 T __x64_sys_getppid\n"
				    "ffffffff81400000 T __sched_text_start\n"
				    "ffffffff81400000 t sched_fn\n"
				    "ffffffff81400100 T __sched_text_end\n"
				    "ffffffff81da45b0 t cpu_show_not_affected\n"
				    "ffffffff81da45b0 W cpu_show_ghostwrite\n"
				    "ffffffff82260b20 T memcpy\n"
				    "ffffffff82260b20 T __memcpy\n"
				    "ffffffff82260b20 T __pi_memcpy\n"
				    "ffffffffc0000000 T __pi_mod_entry\t[mod]\n"
				    "ffffffffc0000000 t mod_entry\t[mod]\n";

START_TEST(kallsyms_ties_prefer_functions_to_markers)
{
	struct ksyms *ks = load_kallsyms(kallsyms_ties);
	const char *mod;
	uint64_t off;

	ck_assert_str_eq(ksyms__lookup(ks, 0xffffffff81000004ULL, &off, &mod),
			 "srso_alias_untrain_ret");
	ck_assert_str_eq(ksyms__lookup(ks, 0xffffffff81000300ULL, &off, &mod),
			 "irq_entries_start");
	/* Global over local, as perf ranks aliases; never the marker. */
	ck_assert_str_eq(ksyms__lookup(ks, 0xffffffff81000f71ULL, &off, &mod),
			 "swapgs_restore_regs_and_return_to_usermode");
	ck_assert_uint_eq(off, 1);
	/* The plainest name, not the __pi_ alias that comes last. */
	ck_assert_str_eq(ksyms__lookup(ks, 0xffffffff82260b28ULL, &off, &mod), "memcpy");
	/* Equal rank: the last in the file, perf's choice. */
	ck_assert_str_eq(ksyms__lookup(ks, 0xffffffff813827b4ULL, &off, &mod),
			 "__x64_sys_getppid");
	ck_assert_str_eq(ksyms__lookup(ks, 0xffffffff81400010ULL, &off, &mod), "sched_fn");
	/* A marker alone still ends the function before it. */
	ck_assert_str_eq(ksyms__lookup(ks, 0xffffffff81400104ULL, &off, &mod),
			 "__sched_text_end");
	/* Not weak over weak. */
	ck_assert_str_eq(ksyms__lookup(ks, 0xffffffff81da45b0ULL, &off, &mod),
			 "cpu_show_not_affected");
	ck_assert_str_eq(ksyms__lookup(ks, 0xffffffffc0000000ULL, &off, &mod), "mod_entry");
	ck_assert_str_eq(mod, "mod");
	ksyms__free(ks);
}
END_TEST

/*
 * The kernel's symbols come by address, then each module's and BPF's in
 * their own order: those are sorted into the kernel's, aliases among them.
 */
static const char kallsyms_tail[] = "ffffffff81000000 T _stext\n"
				    "ffffffff81000100 T k_one\n"
				    "ffffffff81000300 T k_three\n"
				    "ffffffffc0000200 t mod_b\t[m1]\n"
				    "ffffffffc0000100 T __mod_a\t[m1]\n"
				    "ffffffffc0000100 T mod_a\t[m1]\n"
				    "ffffffff81000200 t between\t[m2]\n"
				    "ffffffffa0000000 t bpf_prog_1_f\t[bpf]\n";

START_TEST(kallsyms_sorts_the_modules_into_the_kernel)
{
	struct ksyms *ks = load_kallsyms(kallsyms_tail);
	const char *mod;
	uint64_t off;

	ck_assert_str_eq(ksyms__lookup(ks, 0xffffffff81000110ULL, &off, &mod), "k_one");
	ck_assert_str_eq(ksyms__lookup(ks, 0xffffffff81000210ULL, &off, &mod), "between");
	ck_assert_str_eq(mod, "m2");
	ck_assert_uint_eq(off, 0x10);
	ck_assert_str_eq(ksyms__lookup(ks, 0xffffffff81000310ULL, &off, &mod), "k_three");
	ck_assert_str_eq(ksyms__lookup(ks, 0xffffffffa0000010ULL, &off, &mod), "bpf_prog_1_f");
	/* Fewer underscores win, wherever the alias stood. */
	ck_assert_str_eq(ksyms__lookup(ks, 0xffffffffc0000110ULL, &off, &mod), "mod_a");
	ck_assert_str_eq(mod, "m1");
	ck_assert_str_eq(ksyms__lookup(ks, 0xffffffffc0000210ULL, &off, &mod), "mod_b");
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

/* What c++filt -p (binutils' demangler, without parameters) prints for mangled. */
static void cxxfilt_p(const char *mangled, char *out, size_t len)
{
	char cmd[1200];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "echo '%s' | c++filt -p", mangled);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(fgets(out, (int)len, p));
	pclose(p);
	out[strcspn(out, "\n")] = '\0';
	normalize_cxx(out);
}

START_TEST(cxx_names_without_return_type_as_cxxfilt_p)
{
	static const char *const names[] = {
		"_Z1fIiEvT_",					/* void f<int>(int) */
		"_Z3foov.cold", "_Z3foov.isra.0",		/* GCC's clones */
		"_ZN2ns1BIiE1fIiEEvv.part.0.constprop.1",
		"_ZN2nsltIiEEbRKNS_1AIT_EES5_",			/* operator< <int> */
		"_ZN2ns1AcvbEv", "_ZN1AcvT_IiEEv", "_ZNK1AcvPKcEv", "_ZN1AcvPFivEEv",
		"_ZN1AcvPFiiEEv",				/* operator int (*)(int) */
		"_ZNK2ns1AclEi", "_ZNKSt8functionIFviEEclEi",
		"_ZZN2ns1fEvENKUliE_clEi",			/* GCC's {lambda(int)#1} */
		"_ZZ4mainENKUlT_E_clIiEEDaS_",			/* a generic lambda */
		"_Z5getfpIiEPFiiEv",				/* returns a function pointer */
		"_ZN1A1fIiEEPFPFivEvEv", "_ZN2ns1hIiEEPFvvEPFiT_E",
		"_ZN2ns1gIPFviEEEvT_",				/* g<void (*)(int)> */
		"_Z1fIXgtLi1ELi2EEEvv",				/* f<((1)>(2))> */
		"_ZN2ns1fIiEEDTplfp_fp0_ET_S1_",		/* decltype return type */
		"_ZN2ns1fIJEEEvDpT_",
		"_Znwm", "_ZdaPv", "_ZN1AnaEm", "_ZplRK1AS1_", "_ZN1AaSERKS_", "_ZN1AixEi",
		"_ZN1AptEv", "_ZN1AcoEv", "_Zli3_kmPKc",
		"_Z3fooB5cxx11v", "_ZN12_GLOBAL__N_11fEv",
		"_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE9_M_createERmm",
		"_ZNSt6vectorIiSaIiEEixEm",
		"_ZThn8_N1B1fEv",				/* non-virtual thunk to B::f */
		"_ZGVZ4mainE1x", "_ZTV1A",			/* data: as they are */
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *d = elf_demangle(names[i], strlen(names[i]));
		char want[1024];

		cxxfilt_p(names[i], want, sizeof(want));
		ck_assert_msg(d, "%s: not demangled", names[i]);
		normalize_cxx(d);
		ck_assert_msg(!strcmp(d, want), "%s: %s, c++filt -p: %s", names[i], d, want);
		free(d);
	}
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

/* A process to own a perf map: the pid is what profile would have sampled. */
static pid_t start_sleeper(void)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

static void stop_sleeper(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static int load_perf_map_of(void *arg)
{
	const char *warning;
	char path[128];
	struct perfmap *pm = perfmap__load(*(pid_t *)arg, &warning, path, sizeof(path));

	/* 0: refused; 1: loaded. */
	perfmap__free(pm);
	return pm ? 1 : 0;
}

START_TEST(perf_map_fifo_is_refused_without_blocking)
{
	pid_t pid = start_sleeper();
	char path[64];
	int ret;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	unlink(path);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ret = in_child_with_timeout(load_perf_map_of, &pid, 5);
	unlink(path);
	stop_sleeper(pid);
	ck_assert_msg(ret != -1, "perfmap__load blocked on a FIFO");
	ck_assert_int_eq(ret, 0);
}
END_TEST

static int load_kallsyms_at(void *arg)
{
	struct ksyms *ks = ksyms__load(arg);

	ksyms__free(ks);
	return ks ? 1 : 0;
}

START_TEST(kallsyms_path_that_is_a_fifo_is_refused_without_blocking)
{
	char dir[] = "/tmp/profile-kallsyms-XXXXXX", path[64];
	int ret;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ret = in_child_with_timeout(load_kallsyms_at, path, 5);
	unlink(path);
	rmdir(dir);
	ck_assert_msg(ret != -1, "ksyms__load blocked on a FIFO");
	ck_assert_int_eq(ret, 0);
}
END_TEST

START_TEST(perf_map_bounds_lines_and_rejects_malformed_ones)
{
	size_t long_len = 100000;
	char *text = malloc(long_len + 4096);
	struct perfmap *pm;
	uint64_t off;
	char *path;
	int n;

	ck_assert_ptr_nonnull(text);
	/* A name longer than any real one, then lines that must not parse or wrap around. */
	n = sprintf(text, "1000 10 ");
	memset(text + n, 'x', long_len);
	n += long_len;
	n += sprintf(text + n, "\n"
			       "2000 10 after_long\n"
			       "ffffffffffffff00 1000 wraps_around\n"
			       "-3000 10 negative\n"
			       " 4000 10 leading_space\n"
			       "5000 0 empty\n"
			       "6000 10\n"
			       "7000 zz bad_size\n"
			       "8000 10 \n"
			       "9000 10 no_newline");
	path = write_temp(text);
	free(text);
	pm = perfmap__load_file(path);
	unlink(path);
	ck_assert_ptr_nonnull(pm);
	ck_assert_ptr_null(perfmap__lookup(pm, 0x1004, &off));
	ck_assert_str_eq(perfmap__lookup(pm, 0x2004, &off), "after_long");
	ck_assert_ptr_null(perfmap__lookup(pm, 0x10, &off));
	ck_assert_ptr_null(perfmap__lookup(pm, 0xffffffffffffff80ULL, &off));
	ck_assert_ptr_null(perfmap__lookup(pm, (uint64_t)-0x3000 + 4, &off));
	ck_assert_ptr_null(perfmap__lookup(pm, 0x4004, &off));
	ck_assert_ptr_null(perfmap__lookup(pm, 0x6004, &off));
	ck_assert_ptr_null(perfmap__lookup(pm, 0x8004, &off));
	ck_assert_str_eq(perfmap__lookup(pm, 0x9004, &off), "no_newline");
	perfmap__free(pm);
}
END_TEST

/*
 * A stripped binary with a build-id takes only a debug file with the same
 * one: not one without the note at its build-id's path (gdb takes that on
 * trust), not another build's named by .gnu_debuglink with a CRC that
 * matches. Either would name the fixture's code after another program's
 * functions; it gets its .dynsym names instead, and says why.
 */
START_TEST(a_debug_file_of_another_build_is_ignored)
{
	char build_id[128] = "", cmd[1024], path[600];
	struct elf_symtab *st;

	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	make_stripped_fixture(true);
	fixture_build_id(build_id, sizeof(build_id));
	/* Another program's debug file, its note removed, at the fixture's build-id. */
	sh("mkdir -p %s/.build-id/%.2s && objcopy --only-keep-debug "
	   "--remove-section=.note.gnu.build-id %s %s/.build-id/%.2s/%s.debug",
	   tmpdir, build_id, workload("busy"), tmpdir, build_id, build_id + 2);
	elf_symtab__set_debug_root(tmpdir);
	snprintf(path, sizeof(path), "%s/bin", tmpdir);
	st = elf_symtab__load(path);
	ck_assert_ptr_nonnull(st);
	ck_assert_int_eq(elf_symtab__source(st), ELF_SYM_DYNSYM);
	ck_assert(elf_symtab__debug_of_other_build(st));
	assert_names(st, false);
	elf_symtab__free(st);

	/* Another build's debug file by .gnu_debuglink, with its own (right) CRC. */
	sh("rm -rf %s/.build-id && objcopy --only-keep-debug %s %s/other.debug", tmpdir,
	   workload("busy"), tmpdir);
	snprintf(cmd, sizeof(cmd), "%s/other.debug", tmpdir);
	set_debuglink("other.debug", cmd);
	st = elf_symtab__load(path);
	elf_symtab__set_debug_root("/usr/lib/debug");
	ck_assert_ptr_nonnull(st);
	ck_assert_int_eq(elf_symtab__source(st), ELF_SYM_DYNSYM);
	ck_assert(elf_symtab__debug_of_other_build(st));
	elf_symtab__free(st);
	sh("rm -rf %s", tmpdir);
}
END_TEST

Suite *elfsym_suite(void)
{
	Suite *s = suite_create("elfsym");
	TCase *tc = tcase_create("elf");
	TCase *tk = tcase_create("kallsyms");
	TCase *th = tcase_create("hostile");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, symtab_of_the_binary);
	tcase_add_test(tc, stripped_binary_uses_build_id_debug_file);
	tcase_add_test(tc, stripped_binary_uses_debuglink_then_dynsym);
	tcase_add_test(tc, a_debug_file_of_another_build_is_ignored);
	tcase_add_test(tc, not_an_elf_file_fails_cleanly);
	tcase_add_test(tc, symbolizer_resolves_a_process_and_libc);
	tcase_add_test(tc, idle_tables_are_dropped_and_read_again);
	tcase_add_test(tc, a_dropped_file_gone_since_is_not_read_again);
	tcase_add_test(tc, libc_debug_symbols_from_libc6_dbg);
	tcase_add_test(tc, asm_labels_name_their_code);
	tcase_add_test(tc, ld_so_start_is_named);
	tcase_add_test(tc, plt_stubs_named_as_objdump_names_them);
	tcase_add_test(tc, plt_stubs_of_debian_binaries);
	tcase_add_test(tc, cxx_names_as_cxxfilt_prints_them);
	suite_add_tcase(s, tc);
	tcase_add_test(tk, kallsyms_lookup_skips_pfx_and_names_modules);
	tcase_add_test(tk, kallsyms_with_zero_addresses_is_restricted);
	tcase_add_test(tk, kallsyms_ties_prefer_functions_to_markers);
	tcase_add_test(tk, kallsyms_sorts_the_modules_into_the_kernel);
	tcase_add_test(tk, cxx_names_demangle_without_parameters);
	tcase_add_test(tk, cxx_names_without_return_type_as_cxxfilt_p);
	tcase_add_test(tk, perf_map_lines_in_both_forms);
	suite_add_tcase(s, tk);
	tcase_set_timeout(th, 30);
	tcase_add_test(th, perf_map_fifo_is_refused_without_blocking);
	tcase_add_test(th, perf_map_bounds_lines_and_rejects_malformed_ones);
	tcase_add_test(th, kallsyms_path_that_is_a_fifo_is_refused_without_blocking);
	tcase_add_test(th, debuglink_to_a_device_fifo_or_huge_file_is_refused);
	tcase_add_test(th, debuglink_names_are_file_names);
	tcase_add_test(th, debuglink_symlink_followed_only_in_a_private_directory);
	tcase_add_test(th, debug_files_only_from_places_the_binary_owner_controls);
	tcase_add_test(th, malformed_debuglink_sections_are_ignored);
	tcase_add_test(th, build_id_debug_file_that_is_a_fifo_is_refused);
	tcase_add_test(th, unreadable_debug_file_falls_back_to_dynsym);
	suite_add_tcase(s, th);
	return s;
}
