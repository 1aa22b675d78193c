// SPDX-License-Identifier: GPL-2.0
/*
 * Source lines and inline chains from DWARF (core/sym/dwarfline.c), on real
 * files: the inlined workload (-O2 -g, clang: no .debug_aranges) and the
 * system's libc with its libc6-dbg debug file, every address of a function
 * compared with an independent DWARF reader: binutils' addr2line -f -i, and
 * LLVM's where binutils cannot read clang's DWARF 5 range lists.
 * Also: a stripped copy has no DWARF, a FIFO planted as its debug file is
 * never opened.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/sym/debugfile.h"
#include "core/sym/dwarfline.h"
#include "tests/support/tests.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
#define ADDR2LINE "/usr/bin/addr2line"
/*
 * binutils 2.40 skips an inlined call whose DW_AT_ranges is a DW_FORM_rnglistx
 * index (clang's DWARF 5 for an inlined call in several pieces): it names the
 * caller there. LLVM's addr2line reads them (package llvm, a build dependency).
 */
#define LLVM_ADDR2LINE "/usr/bin/llvm-addr2line"

/* [*start, *start + *size) of the function name in path's .symtab. */
static bool function_range(const char *path, const char *name, uint64_t *start, uint64_t *size)
{
	int fd = open(path, O_RDONLY);
	Elf_Scn *scn = NULL;
	bool found = false;
	Elf *elf;

	ck_assert_int_ge(fd, 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(elf);
	while (!found && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *data = elf_getdata(scn, NULL);
		GElf_Shdr sh;
		GElf_Sym sym;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !data)
			continue;
		for (int i = 0; !found && gelf_getsym(data, i, &sym); i++) {
			const char *n = elf_strptr(elf, sh.sh_link, sym.st_name);

			if (n && !strcmp(n, name) && GELF_ST_TYPE(sym.st_info) == STT_FUNC) {
				*start = sym.st_value;
				*size = sym.st_size;
				found = true;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return found;
}

/* The line of the workload's source that holds marker. */
static uint32_t marker_line(const char *marker)
{
	char path[700], line[512];
	const char *src = getenv("PROFILE_SRCDIR");
	uint32_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/workloads/inlined.c", src ? src : ".");
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, marker)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	ck_abort_msg("%s not in %s", marker, path);
	return 0;
}

static struct dwarf_lines *open_dwarf(const char *path)
{
	int fd = elf_dwarf_fd(path, path);
	struct dwarf_lines *dl;

	ck_assert_msg(fd >= 0, "no DWARF found for %s: %d", path, fd);
	dl = dwarf_lines__open(fd, elf_symtab__debug_root());
	ck_assert_msg(dl, "dwarf_lines__open(%s) failed", path);
	return dl;
}

static const char *base(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path ? path : "(null)";
}

/*
 * Compare every address of [start, start + size) with tool -f -i (an
 * addr2line): the same number of frames, the same inlined function names,
 * the same file (base name) and line for each. Returns how many addresses
 * had inlined frames.
 */
static unsigned int compare_with_addr2line(const char *tool, const char *bin,
					   struct dwarf_lines *dl, uint64_t start, uint64_t size)
{
	char **argv = calloc(size + 8, sizeof(*argv)), *save = NULL, *tok;
	unsigned int inlined = 0, compared = 0;
	struct run_result r;
	size_t argc = 0;

	argv[argc++] = (char *)tool;
	argv[argc++] = "-a";
	argv[argc++] = "-f";
	argv[argc++] = "-i";
	argv[argc++] = "-e";
	argv[argc++] = (char *)bin;
	for (uint64_t a = start; a < start + size; a++)
		ck_assert_int_gt(asprintf(&argv[argc++], "%#lx", (unsigned long)a), 0);
	run_cmd(argv, 60, 0, &r);
	ck_assert_msg(r.exit_code == 0, "%s: %.300s", tool, r.err);
	tok = strtok_r(r.out, "\n", &save);
	while (tok) {
		struct src_frame f[DWARF_MAX_FRAMES];
		char *func[DWARF_MAX_FRAMES], *loc[DWARF_MAX_FRAMES];
		uint64_t addr = strtoull(tok, NULL, 16);
		unsigned int n = dwarf_lines__lookup(dl, addr, f, DWARF_MAX_FRAMES), m = 0;

		while ((tok = strtok_r(NULL, "\n", &save)) && strncmp(tok, "0x", 2)) {
			ck_assert_uint_lt(m, DWARF_MAX_FRAMES);
			func[m] = tok;
			loc[m++] = strtok_r(NULL, "\n", &save);
			ck_assert_ptr_nonnull(loc[m - 1]);
		}
		ck_assert_msg(n == m, "%#lx: %u frames, %s %u (%s)", (unsigned long)addr, n, tool,
			      m, m ? func[0] : "");
		for (unsigned int i = 0; i < n; i++) {
			char *colon = strrchr(loc[i], ':');
			unsigned long line = colon ? strtoul(colon + 1, NULL, 10) : 0;

			*colon = '\0';
			/* addr2line names the outermost by its alias (__GI_...): the inlined ones match. */
			if (i + 1 < n)
				ck_assert_msg(f[i].function && !strcmp(f[i].function, func[i]),
					      "%#lx frame %u: %s, %s %s", (unsigned long)addr, i,
					      f[i].function, tool, func[i]);
			ck_assert_msg(!strcmp(base(f[i].file), base(loc[i])) && f[i].line == line,
				      "%#lx frame %u (%s): %s:%u, %s %s:%lu", (unsigned long)addr,
				      i, func[i], f[i].file, f[i].line, tool, loc[i], line);
		}
		inlined += n > 1;
		compared++;
	}
	ck_assert_uint_eq(compared, size);
	for (size_t i = 6; i < argc; i++)
		free(argv[i]);
	free(argv);
	run_result_free(&r);
	return inlined;
}

START_TEST(inline_chain_of_the_workload)
{
	const char *bin = workload("inlined");
	uint32_t leaf = marker_line("INL_LEAF_BODY"), mid = marker_line("INL_MID_CALL"),
		 outer = marker_line("INL_OUTER_CALL");
	struct dwarf_lines *dl = open_dwarf(bin);
	uint64_t start, size, found = 0;

	ck_assert(function_range(bin, "inl_outer", &start, &size));
	ck_assert_uint_ge(dwarf_lines__units(dl), 1);
	for (uint64_t a = start; a < start + size && !found; a++) {
		struct src_frame f[DWARF_MAX_FRAMES];

		if (dwarf_lines__lookup(dl, a, f, DWARF_MAX_FRAMES) == 3 && f[0].line == leaf)
			found = a;
	}
	ck_assert_msg(found, "no address of inl_outer is in inl_leaf");
	{
		struct src_frame f[DWARF_MAX_FRAMES];

		ck_assert_uint_eq(dwarf_lines__lookup(dl, found, f, DWARF_MAX_FRAMES), 3);
		ck_assert_str_eq(f[0].function, "inl_leaf");
		ck_assert_str_eq(f[1].function, "inl_mid");
		ck_assert_str_eq(f[2].function, "inl_outer");
		ck_assert_str_eq(base(f[0].file), "inlined.c");
		ck_assert_uint_eq(f[1].line, mid);
		ck_assert_uint_eq(f[2].line, outer);
		/* Where each function is defined: the line before its body's brace. */
		ck_assert_uint_lt(f[0].decl_line, leaf);
		ck_assert_uint_gt(f[0].decl_line, leaf - 4);
		ck_assert_str_eq(base(f[2].decl_file), "inlined.c");
		/* Too small a buffer keeps the innermost and the function holding the code. */
		ck_assert_uint_eq(dwarf_lines__lookup(dl, found, f, 2), 2);
		ck_assert_str_eq(f[0].function, "inl_leaf");
		ck_assert_str_eq(f[1].function, "inl_outer");
		ck_assert_uint_eq(f[1].line, outer);
	}
	ck_assert_uint_gt(compare_with_addr2line(ADDR2LINE, bin, dl, start, size), size / 4);
	ck_assert_uint_gt(compare_with_addr2line(LLVM_ADDR2LINE, bin, dl, start, size), size / 4);
	/* Outside any unit: nothing. */
	{
		struct src_frame f[2];

		ck_assert_uint_eq(dwarf_lines__lookup(dl, 0x10, f, 2), 0);
	}
	dwarf_lines__free(dl);
}
END_TEST

/* Whether a is in the now() that main's loop condition (line now_line) inlines. */
static bool in_loop_now(struct dwarf_lines *dl, uint64_t a, uint32_t now_line)
{
	struct src_frame f[DWARF_MAX_FRAMES];

	return dwarf_lines__lookup(dl, a, f, DWARF_MAX_FRAMES) == 2 && f[0].function &&
	       !strcmp(f[0].function, "now") && f[1].line == now_line;
}

/*
 * An inlined call in several pieces (DW_AT_ranges, a DW_FORM_rnglistx index
 * into .debug_rnglists): each piece is [low, high), its first address in the
 * call and the one before it not. Seen in the inline suite as a sample at the
 * start of the second piece that binutils' addr2line put in main only.
 */
START_TEST(inlined_call_in_several_pieces)
{
	const char *bin = workload("inlined");
	uint32_t now_line = marker_line("INL_NOW_LOOP");
	struct dwarf_lines *dl = open_dwarf(bin);
	unsigned int pieces = 0;
	uint64_t start, size;

	ck_assert(function_range(bin, "main", &start, &size));
	for (uint64_t a = start; a < start + size; a++) {
		struct src_frame f[DWARF_MAX_FRAMES];

		if (!in_loop_now(dl, a, now_line) || in_loop_now(dl, a - 1, now_line))
			continue;
		pieces++;
		/* The address before a piece is main's own code, at its own line. */
		ck_assert_uint_eq(dwarf_lines__lookup(dl, a - 1, f, DWARF_MAX_FRAMES), 1);
		ck_assert_str_eq(f[0].function, "main");
	}
	ck_assert_msg(pieces >= 2,
		      "now() of main's loop in %u pieces: the workload no longer has "
		      "an inlined call with DW_AT_ranges",
		      pieces);
	ck_assert_uint_gt(compare_with_addr2line(LLVM_ADDR2LINE, bin, dl, start, size), 10);
	dwarf_lines__free(dl);
}
END_TEST

START_TEST(libc_inlines_from_libc6_dbg)
{
	char debug[4096];
	uint64_t start, size;
	struct dwarf_lines *dl;

	/* libc.so.6 is stripped: the DWARF comes from the build-id debug file. */
	ck_assert_int_eq(elf_debug_file(LIBC, LIBC, debug, sizeof(debug)), 0);
	ck_assert(function_range(debug, "__libc_malloc", &start, &size));
	dl = open_dwarf(LIBC);
	ck_assert_uint_gt(dwarf_lines__units(dl), 100);
	/* malloc inlines checked_request2size, tcache_get and more. */
	ck_assert_uint_gt(compare_with_addr2line(ADDR2LINE, LIBC, dl, start, size), 10);
	dwarf_lines__free(dl);
}
END_TEST

START_TEST(stripped_copy_has_no_dwarf_and_a_fifo_is_not_opened)
{
	char dir[] = "/tmp/profile-dwarfline-XXXXXX", cmd[2048], bin[600];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(bin, sizeof(bin), "%s/inlined", dir);
	snprintf(cmd, sizeof(cmd), "strip -o %s %s", bin, workload("inlined"));
	ck_assert_int_eq(system(cmd), 0);
	/* Its build-id names no file under this debug root; a FIFO waits where one would be. */
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/debug/.build-id && "
		 "id=$(readelf -n %s | awk '/Build ID/{print $3}') && "
		 "mkdir -p %s/debug/.build-id/${id%%${id#??}} && "
		 "mkfifo %s/debug/.build-id/${id%%${id#??}}/${id#??}.debug",
		 dir, bin, dir, dir);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/debug", dir);
	elf_symtab__set_debug_root(cmd);
	ck_assert_int_eq(elf_dwarf_fd(bin, bin), -ENOENT);
	elf_symtab__set_debug_root("/usr/lib/debug");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

Suite *dwarfline_suite(void)
{
	Suite *s = suite_create("dwarfline");
	TCase *tc = tcase_create("dwarfline");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, inline_chain_of_the_workload);
	tcase_add_test(tc, inlined_call_in_several_pieces);
	tcase_add_test(tc, libc_inlines_from_libc6_dbg);
	tcase_add_test(tc, stripped_copy_has_no_dwarf_and_a_fifo_is_not_opened);
	suite_add_tcase(s, tc);
	return s;
}
