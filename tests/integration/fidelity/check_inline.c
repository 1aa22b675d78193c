// SPDX-License-Identifier: GPL-2.0
/*
 * Inlined calls and source lines on real programs, with both backends: the
 * inlined workload (-O2 -g, always_inline helpers) and libc's malloc/free
 * with libc6-dbg's DWARF. --inline shows the helpers as frames in folded and
 * bcc text; pprof (decoded by pprof-format, tests/js/pprof_lines.mjs) has a
 * Line per inlined call with the file and line LLVM's addr2line -f -i, an
 * independent DWARF reader, gives for the same address (a caller's at its
 * return address - 1). A stripped copy's frames keep mapping, build-id and
 * address, enough to symbolize them later.
 */
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/sym/elfsym.h"
#include "tests/support/tests.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
/*
 * LLVM's (package llvm, a build dependency), not binutils 2.40's, which
 * misreads DWARF 5 in two ways seen here: it skips an inlined call whose
 * DW_AT_ranges is a DW_FORM_rnglistx index, as clang states a call inlined in
 * several pieces (now() in main's loop: it says main), and it names the file
 * of a few of libc's rows wrongly (libc-start.c:58 at __libc_start_call_main's
 * call of main, where the row, llvm-dwarfdump and eu-addr2line say
 * libc_start_call_main.h:58). It finds libc6-dbg's file by build-id too.
 */
#define ADDR2LINE "/usr/bin/llvm-addr2line"
#define MAX_LOCS 4096
#define MAX_LINES 16

static struct run_result r;

struct loc_line {
	char func[128], file[256];
	unsigned int line, start;
};

struct loc {
	uint64_t addr;
	unsigned int mapping, nr;
	bool leaf;
	struct loc_line lines[MAX_LINES];
};

struct mapping_info {
	unsigned int id;
	char file[512], build[130];
	uint64_t start, limit, off;
	int fn, files, lines, inl;
};

static struct loc locs[MAX_LOCS];
static size_t nr_locs;
static struct mapping_info maps[64];
static size_t nr_maps;

static void teardown(void)
{
	run_result_free(&r);
}

static const char *srcdir(void)
{
	return getenv("PROFILE_SRCDIR") ? getenv("PROFILE_SRCDIR") : ".";
}

static const char *base(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The line of the workload's source that holds marker. */
static unsigned int marker_line(const char *marker)
{
	char path[700], line[512];
	unsigned int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/workloads/inlined.c", srcdir());
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

/*
 * "func@file:line(start)". The last '@' ends the name: names have their own
 * (a stub in libc's PLT is "*ABS*+0xa0a40@plt"), these files do not.
 */
static void parse_line(char *s, struct loc_line *l)
{
	char *at = strrchr(s, '@'), *open = strrchr(s, '('), *colon;

	ck_assert_msg(at && open, "bad line %s", s);
	*at = '\0';
	*open = '\0';
	colon = strrchr(at + 1, ':');
	ck_assert_ptr_nonnull(colon);
	*colon = '\0';
	snprintf(l->func, sizeof(l->func), "%s", s);
	snprintf(l->file, sizeof(l->file), "%s", at + 1);
	l->line = (unsigned int)strtoul(colon + 1, NULL, 10);
	l->start = (unsigned int)strtoul(open + 1, NULL, 10);
}

/* Decode the pprof file at path into maps and locs. */
static void decode(const char *path)
{
	char script[600], *save = NULL;
	struct run_result d;

	snprintf(script, sizeof(script), "%s/tests/js/pprof_lines.mjs", srcdir());
	run_cmd((char *[]){ "/usr/bin/env", "node", script, (char *)path, NULL }, 30, 0, &d);
	ck_assert_msg(d.exit_code == 0, "node: %.300s", d.err);
	nr_locs = nr_maps = 0;
	for (char *t = strtok_r(d.out, "\n", &save); t; t = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(t, "mapping ", 8)) {
			struct mapping_info *m = &maps[nr_maps];

			ck_assert_uint_lt(nr_maps, 64);
			ck_assert_int_eq(sscanf(t, "mapping %u %511s build=%129s start=%" SCNx64
						" limit=%" SCNx64 " off=%" SCNx64
						" fn=%d file=%d line=%d inline=%d",
						&m->id, m->file, m->build, &m->start, &m->limit,
						&m->off, &m->fn, &m->files, &m->lines, &m->inl),
					 10);
			if (!strcmp(m->build, "-"))
				m->build[0] = '\0';
			nr_maps++;
		} else if (!strncmp(t, "loc ", 4)) {
			struct loc *l = &locs[nr_locs];
			unsigned int id, leaf;
			char *rest, *save2 = NULL;

			ck_assert_uint_lt(nr_locs, MAX_LOCS);
			ck_assert_int_eq(sscanf(t, "loc %u %" SCNx64 " %u leaf=%u %u", &id, &l->addr,
						&l->mapping, &leaf, &l->nr),
					 5);
			l->leaf = leaf;
			ck_assert_uint_le(l->nr, MAX_LINES);
			rest = strchr(t, '\t');
			ck_assert_msg(rest || !l->nr, "bad location %s", t);
			for (unsigned int i = 0; i < l->nr; i++) {
				char *tok = strtok_r(i ? NULL : rest + 1, "\t", &save2);

				ck_assert_ptr_nonnull(tok);
				parse_line(tok, &l->lines[i]);
			}
			nr_locs++;
		}
	}
	run_result_free(&d);
}

/* The mapping of file (or of a file with its base name: /lib is /usr/lib here). */
static const struct mapping_info *mapping_named(const char *file)
{
	for (size_t i = 0; i < nr_maps; i++)
		if (!strcmp(maps[i].file, file))
			return &maps[i];
	for (size_t i = 0; i < nr_maps; i++)
		if (!strcmp(base(maps[i].file), base(file)))
			return &maps[i];
	ck_abort_msg("no mapping of %s among %zu", file, nr_maps);
	return NULL;
}

/* The address as the file states it (what addr2line takes) of file offset off. */
static uint64_t file_vaddr(const char *path, uint64_t off)
{
	int fd = open(path, O_RDONLY);
	uint64_t vaddr = 0;
	size_t nr = 0;
	Elf *elf;

	ck_assert_int_ge(fd, 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(elf);
	ck_assert_int_eq(elf_getphdrnum(elf, &nr), 0);
	for (size_t i = 0; i < nr; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && off >= ph.p_offset &&
		    off < ph.p_offset + ph.p_filesz)
			vaddr = off - ph.p_offset + ph.p_vaddr;
	}
	elf_end(elf);
	close(fd);
	ck_assert_msg(vaddr, "offset %#" PRIx64 " of %s is in no PT_LOAD", off, path);
	return vaddr;
}

/*
 * llvm-addr2line -f -i on the locations with lines of mapping m (file
 * bin), a leaf's at its address, a caller's at its return address - 1, where
 * the call is: the same frames, the same names of inlined functions (and of
 * the outermost if outer_names), files by base name and lines. Returns how
 * many leaf locations had inlined calls.
 */
static unsigned int compare_with_addr2line(const struct mapping_info *m, const char *bin,
					   bool outer_names)
{
	char *argv[MAX_LOCS + 8], *save = NULL, *tok;
	struct loc *which[MAX_LOCS];
	unsigned int inlined = 0, callers = 0;
	size_t argc = 0, n = 0;
	struct run_result a;

	argv[argc++] = ADDR2LINE;
	argv[argc++] = "-a";
	argv[argc++] = "-f";
	argv[argc++] = "-i";
	argv[argc++] = "-e";
	argv[argc++] = (char *)bin;
	for (size_t i = 0; i < nr_locs; i++) {
		if (locs[i].mapping != m->id || !locs[i].nr)
			continue;
		which[n++] = &locs[i];
		callers += !locs[i].leaf;
		ck_assert_int_gt(
		    asprintf(&argv[argc++], "%#" PRIx64,
			     file_vaddr(bin, locs[i].addr - m->start + m->off) - !locs[i].leaf),
		    0);
	}
	argv[argc] = NULL;
	ck_assert_msg(n > callers, "no leaf location with lines in %s", bin);
	run_cmd(argv, 60, 0, &a);
	ck_assert_msg(a.exit_code == 0, "%s: %.300s", ADDR2LINE, a.err);
	tok = strtok_r(a.out, "\n", &save);
	for (size_t k = 0; k < n; k++) {
		const struct loc *l = which[k];
		unsigned int i = 0;

		ck_assert_ptr_nonnull(tok);
		while ((tok = strtok_r(NULL, "\n", &save)) && strncmp(tok, "0x", 2)) {
			char *file = strtok_r(NULL, "\n", &save), *colon;

			ck_assert_ptr_nonnull(file);
			ck_assert_msg(i < l->nr,
				      "%#" PRIx64 " (leaf=%d): %s has more frames than %u (%s)",
				      l->addr, l->leaf, ADDR2LINE, l->nr, tok);
			colon = strrchr(file, ':');
			ck_assert_ptr_nonnull(colon);
			*colon = '\0';
			/* Code without line data (_start of crt1.o): "??:0" there, no file here. */
			if (!strcmp(file, "??"))
				*file = '\0';
			if (i + 1 < l->nr || outer_names)
				ck_assert_msg(!strcmp(l->lines[i].func, tok),
					      "%#" PRIx64 " (leaf=%d) line %u: %s, %s %s", l->addr,
					      l->leaf, i, l->lines[i].func, ADDR2LINE, tok);
			ck_assert_msg(!strcmp(base(l->lines[i].file), base(file)) &&
					  l->lines[i].line == strtoul(colon + 1, NULL, 10),
				      "%#" PRIx64 " (leaf=%d) line %u (%s): %s:%u, %s %s:%s",
				      l->addr, l->leaf, i, tok, l->lines[i].file, l->lines[i].line,
				      ADDR2LINE, file, colon + 1);
			i++;
		}
		ck_assert_msg(i == l->nr, "%#" PRIx64 " (leaf=%d): %u lines, %s %u", l->addr,
			      l->leaf, l->nr, ADDR2LINE, i);
		inlined += l->leaf && l->nr > 1;
	}
	for (size_t i = 6; i < argc; i++)
		free(argv[i]);
	run_result_free(&a);
	return inlined;
}

/* profile --backend B -U -F 499 --format pprof --output tmp ARGS..., decoded. */
static void profile_pprof(const char *backend, char *const *args)
{
	char path[] = "/tmp/profile-inline-XXXXXX";
	char *argv[16] = { (char *)profile_bin(), "--backend", (char *)backend, "-U", "-F", "499",
			   "--format", "pprof", "--output", path, "--" };
	size_t n = 11;

	close(mkstemp(path));
	for (; *args && n < 15; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	run_ok(&r, argv, 60);
	decode(path);
	unlink(path);
}

START_TEST(inlined_calls_in_folded_and_bcc)
{
	const char *be = test_backends[_i], *bin = workload("inlined");
	uint64_t chain, outer;

	run_ok(&r, (char *[]){ (char *)profile_bin(), "--backend", (char *)be, "-U", "-F", "499",
			       "-f", "--inline", "--", (char *)bin, "1", NULL },
	       60);
	chain = folded_count(r.out, "main;inl_outer;inl_mid;inl_leaf");
	outer = folded_count(r.out, "main;inl_outer");
	/* Nearly all the work is inl_leaf's loop. */
	ck_assert_msg(outer > 100 && chain * 10 > outer * 7, "%" PRIu64 " of %" PRIu64 ":\n%s",
		      chain, outer, r.out);
	run_result_free(&r);

	run_ok(&r, (char *[]){ (char *)profile_bin(), "--backend", (char *)be, "-U", "-F", "499",
			       "-f", "--", (char *)bin, "1", NULL },
	       60);
	ck_assert_msg(!strstr(r.out, "inl_leaf") && !strstr(r.out, "inl_mid"), "%s", r.out);
	ck_assert_uint_gt(folded_count(r.out, "main;inl_outer"), 100);
	run_result_free(&r);

	run_ok(&r, (char *[]){ (char *)profile_bin(), "--backend", (char *)be, "-U", "-F", "499",
			       "--inline", "--", (char *)bin, "1", NULL },
	       60);
	ck_assert_msg(strstr(r.out, "    inl_leaf (inlined)\n    inl_mid (inlined)\n    inl_outer\n"
				    "    main\n"),
		      "%s", r.out);
}
END_TEST

START_TEST(pprof_lines_match_addr2line)
{
	const char *bin = workload("inlined");
	unsigned int leaf = marker_line("INL_LEAF_BODY"), loop = marker_line("INL_LEAF_LOOP"),
		     mid = marker_line("INL_MID_CALL"), outer = marker_line("INL_OUTER_CALL"),
		     body = 0;
	const struct mapping_info *m;
	struct elf_symtab *st;

	profile_pprof(test_backends[_i], (char *[]){ (char *)bin, "1", NULL });
	m = mapping_named(bin);
	/*
	 * One Mapping for the file mapped once: the bpf backend's first stack
	 * copies are resolved by the process's image of their own time, and
	 * each image made a Mapping of its own, which split the Locations.
	 */
	for (size_t i = 0; i < nr_maps; i++)
		ck_assert_msg(&maps[i] == m || strcmp(maps[i].file, bin) ||
				      maps[i].start != m->start,
			      "%s: Mappings %u and %u alike", bin, m->id, maps[i].id);
	st = elf_symtab__load(bin);
	ck_assert_ptr_nonnull(st);
	ck_assert_str_eq(m->build, elf_symtab__build_id(st));
	elf_symtab__free(st);
	ck_assert(m->fn);
	/* The flags say what every Location holds (a sample in the PLT has no line). */
	{
		bool all_lines = true;

		for (size_t i = 0; i < nr_locs; i++)
			for (unsigned int k = 0; k < locs[i].nr && locs[i].mapping == m->id; k++)
				all_lines &= locs[i].lines[k].line != 0;
		ck_assert_int_eq(m->lines, all_lines);
		ck_assert_int_eq(m->inl, all_lines);
	}
	for (size_t i = 0; i < nr_locs; i++) {
		const struct loc *l = &locs[i];

		if (l->mapping != m->id || l->nr != 3 || strcmp(l->lines[0].func, "inl_leaf"))
			continue;
		ck_assert_str_eq(base(l->lines[0].file), "inlined.c");
		/*
		 * A sample lands on any instruction of the loop: its body, its
		 * counter and branch (the for line), or the padding before it,
		 * which DWARF gives line 0 (no source line).
		 */
		ck_assert_msg(l->lines[0].line == leaf || l->lines[0].line == loop ||
				  l->lines[0].line == 0,
			      "%#" PRIx64 ": inl_leaf at line %u", l->addr, l->lines[0].line);
		body += l->lines[0].line == leaf;
		ck_assert_str_eq(l->lines[1].func, "inl_mid");
		ck_assert_uint_eq(l->lines[1].line, mid);
		ck_assert_str_eq(l->lines[2].func, "inl_outer");
		ck_assert_uint_eq(l->lines[2].line, outer);
		/* start_line: where inl_leaf is declared, just above its body. */
		ck_assert(l->lines[0].start < leaf && l->lines[0].start + 4 > leaf);
	}
	/* 14 of the loop's 16 instructions are the body's: most samples are there. */
	ck_assert_uint_gt(body, 3);
	ck_assert_uint_gt(compare_with_addr2line(m, bin, true), 3);
}
END_TEST

START_TEST(libc_inlines_match_addr2line)
{
	const struct mapping_info *m;
	bool tcache = false;

	profile_pprof(test_backends[_i], (char *[]){ (char *)workload("inlined"), "malloc", "1",
						    NULL });
	m = mapping_named(LIBC);
	for (size_t i = 0; i < nr_locs; i++)
		tcache |= locs[i].mapping == m->id && locs[i].nr > 1 &&
			  (!strcmp(locs[i].lines[0].func, "tcache_get") ||
			   !strcmp(locs[i].lines[0].func, "tcache_put"));
	ck_assert_msg(tcache, "no tcache_get/tcache_put inlined in libc's leaf frames");
	/* The outermost function: ours is the symbol (malloc), DWARF's another alias. */
	ck_assert_uint_gt(compare_with_addr2line(m, LIBC, false), 2);
}
END_TEST

START_TEST(stripped_binary_keeps_mapping_build_id_and_address)
{
	char dir[] = "/tmp/profile-inline-XXXXXX", copy[600], cmd[1400];
	const char *bin = workload("inlined");
	const struct mapping_info *m;
	unsigned int bare = 0, later = 0;
	struct elf_symtab *st;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(copy, sizeof(copy), "%s/inlined", dir);
	snprintf(cmd, sizeof(cmd), "strip -o %s %s", copy, bin);
	ck_assert_int_eq(system(cmd), 0);
	profile_pprof(test_backends[_i], (char *[]){ copy, "1", NULL });
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	m = mapping_named(copy);
	st = elf_symtab__load(bin);
	ck_assert_ptr_nonnull(st);
	/* The stripped copy has the build-id of the binary with symbols: a symbol server's key. */
	ck_assert_str_eq(m->build, elf_symtab__build_id(st));
	ck_assert(!m->fn && !m->lines);
	for (size_t i = 0; i < nr_locs; i++) {
		const struct loc *l = &locs[i];
		uint64_t off, sym_off;
		const char *name;

		/* No symbol: named by its file alone ([inlined]), as pprof names such a Location. */
		if (l->mapping != m->id || l->nr > 1 ||
		    (l->nr == 1 && strcmp(l->lines[0].func, "[inlined]")))
			continue;
		bare++;
		/* What pprof -symbolize does with the binary that has symbols: it names inl_outer. */
		off = l->addr - m->start + m->off;
		name = elf_symtab__lookup_offset(st, off - !l->leaf, &sym_off);
		later += name && !strcmp(name, "inl_outer");
	}
	elf_symtab__free(st);
	ck_assert_uint_gt(bare, 3);
	ck_assert_uint_gt(later, 3);
}
END_TEST

Suite *inline_suite(void)
{
	Suite *s = suite_create("inline");
	TCase *tc = tcase_create("inline");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_loop_test(tc, inlined_calls_in_folded_and_bcc, 0, 2);
	tcase_add_loop_test(tc, pprof_lines_match_addr2line, 0, 2);
	tcase_add_loop_test(tc, libc_inlines_match_addr2line, 0, 2);
	tcase_add_loop_test(tc, stripped_binary_keeps_mapping_build_id_and_address, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
