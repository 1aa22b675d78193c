// SPDX-License-Identifier: GPL-2.0
/*
 * unwind/tables: the tables of real Debian binaries held to elfutils'
 * reading of the same CFI (dwarf_cfi_addrframe, an independent parser and
 * interpreter), pc by pc, through unwind_table__lookup (the BPF program's
 * search). Prints each binary's figures (rows, bytes a row, compile time,
 * what cannot be stepped). Hostile sections: check_unwind_tables_hostile.c.
 */
#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/support/tests.h"
#include "unwind/tables/tables.h"

/* pcs a binary: random ones over its code, and both sides of (a sample of) its rows */
#define RANDOM_PCS 20000
#define ROW_PCS 40000

static const char *const binaries[] = {
	"/usr/lib/x86_64-linux-gnu/libc.so.6",
	"/usr/bin/python3.11",
	"/usr/bin/xz",
	"/usr/bin/gzip",
	"/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
	NULL,	/* the nofp_debugframe workload: .debug_frame only (clang's, version 4 CIEs) */
};

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/*
 * The rule elfutils gives for pc, reduced as the compiler reduces one; false:
 * no FDE. .eh_frame's first, then .debug_frame's (NULL where there is none).
 */
static bool reference(Dwarf_CFI *const cfi[2], uint64_t pc, struct unwind_rule *r,
		      uint64_t *fde_end)
{
	Dwarf_Op mem[3], *ops;
	Dwarf_Frame *frame;
	Dwarf_Addr start, end;
	size_t nops;
	bool signal;

	memset(r, 0, sizeof(*r));
	if ((!cfi[0] || dwarf_cfi_addrframe(cfi[0], pc, &frame)) &&
	    (!cfi[1] || dwarf_cfi_addrframe(cfi[1], pc, &frame)))
		return false;
	dwarf_frame_info(frame, &start, &end, &signal);
	*fde_end = end;
	r->cfa = UNWIND_CFA_STOP;
	if (signal) {
		r->cfa = UNWIND_CFA_SIGNAL;
		goto out;
	}
	if (dwarf_frame_register(frame, 16, mem, &ops, &nops))
		goto out;
	if (!nops && ops) {
		r->cfa = UNWIND_CFA_END;	/* undefined */
		goto out;
	}
	if (nops != 2 || ops[0].atom != DW_OP_call_frame_cfa || ops[1].atom != DW_OP_plus_uconst ||
	    (int64_t)ops[1].number != -8)
		goto out;
	if (dwarf_frame_cfa(frame, &ops, &nops))
		goto out;
	if (nops == 1 && ops[0].atom == DW_OP_bregx && (ops[0].number == 7 || ops[0].number == 6)) {
		r->cfa = ops[0].number == 7 ? UNWIND_CFA_RSP : UNWIND_CFA_RBP;
		r->cfa_off = ops[0].number2;
	} else if (nops == 9 && ops[0].atom == DW_OP_breg7 && ops[1].atom == DW_OP_breg16 &&
		   ops[2].atom == DW_OP_lit15 && ops[3].atom == DW_OP_and &&
		   ops[4].atom == DW_OP_lit11 && ops[5].atom == DW_OP_ge &&
		   ops[6].atom == DW_OP_lit3 && ops[7].atom == DW_OP_shl &&
		   ops[8].atom == DW_OP_plus) {
		r->cfa = UNWIND_CFA_PLT;
		r->cfa_off = ops[0].number;
	} else {
		goto out;
	}
	if (dwarf_frame_register(frame, 6, mem, &ops, &nops)) {
		r->rbp = UNWIND_RBP_LOST;
	} else if (!nops && !ops) {
		r->rbp = UNWIND_RBP_SAME;
	} else if (nops == 2 && ops[0].atom == DW_OP_call_frame_cfa &&
		   ops[1].atom == DW_OP_plus_uconst) {
		r->rbp = UNWIND_RBP_CFA;
		r->rbp_off = (int64_t)ops[1].number;
	} else {
		r->rbp = UNWIND_RBP_LOST;
	}
out:
	free(frame);
	return true;
}

struct counts {
	unsigned long pcs, no_fde, absorbed, mismatches;
};

static void compare_pc(const struct unwind_table *t, Dwarf_CFI *const cfi[2], uint64_t pc,
		       struct counts *n, const char *path)
{
	struct unwind_rule ours, ref;
	uint64_t end = 0;

	unwind_table__lookup(t, pc, &ours);
	n->pcs++;
	if (!reference(cfi, pc, &ref, &end)) {
		n->no_fde++;
		if (ours.cfa == UNWIND_CFA_NONE)
			return;
		/* Padding after a function keeps its last rule: within 16 bytes of an FDE's end. */
		for (unsigned int k = 1; k <= 16 && k <= pc; k++) {
			struct unwind_rule prev;

			if (reference(cfi, pc - k, &prev, &end) && end <= pc && pc - end < 16) {
				n->absorbed++;
				return;
			}
		}
		n->mismatches++;
		fprintf(stderr, "%s: pc %#lx: no FDE, but rule %u\n", path, (unsigned long)pc,
			ours.cfa);
		return;
	}
	if (ref.cfa == UNWIND_CFA_STOP || ref.cfa == UNWIND_CFA_END || ref.cfa == UNWIND_CFA_SIGNAL)
		ref.cfa_off = ours.cfa_off = 0;
	if (ref.cfa != ours.cfa || ref.cfa_off != ours.cfa_off ||
	    (ref.cfa >= UNWIND_CFA_RSP && ref.cfa <= UNWIND_CFA_PLT &&
	     (ref.rbp != ours.rbp || (ref.rbp == UNWIND_RBP_CFA && ref.rbp_off != ours.rbp_off)))) {
		if (n->mismatches++ < 10)
			fprintf(stderr,
				"%s: pc %#lx: ours %u%+d rbp %u%+d, elfutils %u%+d rbp %u%+d\n",
				path, (unsigned long)pc, ours.cfa, ours.cfa_off, ours.rbp,
				ours.rbp_off, ref.cfa, ref.cfa_off, ref.rbp, ref.rbp_off);
	}
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

START_TEST(real_binaries_match_elfutils)
{
	const char *path = binaries[_i] ? binaries[_i] : workload("nofp_debugframe");
	struct unwind_image img;
	struct unwind_table *t;
	struct counts n = { 0 };
	uint64_t rows_pages;
	double t0, ms;
	Dwarf_CFI *cfi[2];
	Dwarf *dw;
	Elf *elf;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0) {
		printf("unwind_tables: %s not installed: skipped\n", path);
		return;
	}
	t0 = now_ms();
	ck_assert_int_eq(unwind_image__open_fd(&img, fd), 0);
	ck_assert_int_eq(unwind_table__compile(&img, &t), 0);
	ms = now_ms() - t0;
	ck_assert_int_eq(unwind_table__verify(t), 0);
	ck_assert_uint_gt(t->nr_rows, binaries[_i] ? 100 : 2);

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(elf);
	/* Debian's are stripped: .eh_frame only; the workload's code is in .debug_frame */
	ck_assert_uint_eq(!!t->stats.fdes_debug_frame, !binaries[_i]);
	cfi[0] = dwarf_getcfi_elf(elf);
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	cfi[1] = dw ? dwarf_getcfi(dw) : NULL;
	ck_assert_ptr_nonnull(cfi[0]);
	ck_assert(binaries[_i] || cfi[1]);
	ck_assert_ptr_nonnull(cfi);
	for (uint32_t i = 0; i < ROW_PCS && t->nr_rows; i++) {
		uint32_t row = (uint64_t)i * t->nr_rows / ROW_PCS, p, lo = 0, hi = t->nr_pages;
		uint64_t pc;

		/* the row's page: the last page whose range starts at or before it */

		while (hi - lo > 1) {
			uint32_t mid = (lo + hi) / 2;

			if (t->pages[mid] <= row)
				lo = mid;
			else
				hi = mid;
		}
		p = lo;
		pc = t->base + ((uint64_t)p << UNWIND_TABLE_PAGE_SHIFT) + t->rows[row].addr;
		compare_pc(t, cfi, pc, &n, path);
		compare_pc(t, cfi, pc - 1, &n, path);
		/* and both sides of the push or pop folded into the row */
		if (t->rules[t->rows[row].rule].fold_at) {
			compare_pc(t, cfi, pc + t->rules[t->rows[row].rule].fold_at - 1, &n, path);
			compare_pc(t, cfi, pc + t->rules[t->rows[row].rule].fold_at, &n, path);
		}
	}
	for (unsigned int i = 0; i < RANDOM_PCS; i++) {
		const Elf64_Phdr *ph = NULL;

		for (unsigned int k = 0; k < 64 && !ph; k++) {
			const Elf64_Phdr *c = &img.loads[next_random() % img.nr_loads];

			if (c->p_flags & PF_X)
				ph = c;
		}
		ck_assert_ptr_nonnull(ph);
		compare_pc(t, cfi, ph->p_vaddr + next_random() % ph->p_memsz, &n, path);
	}
	rows_pages = (uint64_t)t->nr_rows * sizeof(*t->rows) + (t->nr_pages + 1) * 4;
	printf("unwind_tables: %s: %u FDEs (%u refused), %lu CFA rows, %u rows stored (pushes and "
	       "pops folded), %u rules, %u pages, %lu bytes: %.3f a CFA row (rows and pages alone "
	       "%.3f), %.1f ms; cannot step: %lu CFA rows (%.4f%%), %lu of %lu bytes of code "
	       "(%.4f%%); %lu pcs compared with elfutils, %lu without FDE (%lu in padding kept), "
	       "%lu mismatches\n",
	       path, t->stats.fdes, t->stats.fdes_refused, (unsigned long)t->stats.rows_cfa,
	       t->nr_rows, t->nr_rules, t->nr_pages, (unsigned long)t->stats.bytes,
	       (double)t->stats.bytes / t->stats.rows_cfa, (double)rows_pages / t->stats.rows_cfa,
	       ms, (unsigned long)t->stats.rows_stop,
	       100.0 * t->stats.rows_stop / t->stats.rows_cfa,
	       (unsigned long)t->stats.bytes_stop, (unsigned long)t->stats.bytes_covered,
	       100.0 * t->stats.bytes_stop / (t->stats.bytes_covered ?: 1), n.pcs, n.no_fde,
	       n.absorbed, n.mismatches);
	ck_assert_uint_eq(n.mismatches, 0);
	/* Issue 45's target, 4 bytes a row: rules are shared between binaries by the BPF side */
	ck_assert_uint_le(rows_pages, 4 * t->stats.rows_cfa);
	if (t->stats.rows_cfa > 10000)
		ck_assert_uint_le(t->stats.bytes, 4 * t->stats.rows_cfa);
	if (dw)
		dwarf_end(dw);	/* ends its CFI too */
	dwarf_cfi_end(cfi[0]);
	elf_end(elf);
	unwind_table__free(t);
	unwind_image__close(&img);
	close(fd);
}
END_TEST

/* The share of a binary's code that finds its CFA from rbp, and the verdict on it. */
static void fp_share_of(const char *path, struct unwind_fp_share *share)
{
	struct unwind_image img;
	struct unwind_table *t;
	int fd = open(path, O_RDONLY);

	ck_assert_msg(fd >= 0, "%s", path);
	ck_assert_int_eq(unwind_image__open_fd(&img, fd), 0);
	ck_assert_int_eq(unwind_table__compile(&img, &t), 0);
	unwind_table__fp_share(t, share);
	printf("unwind_tables: %s: %u frames set up in %u functions, %.3f of %llu bytes "
	       "rbp-based: %s\n", path, share->rbp_frames, share->functions,
	       share->bytes ? (double)share->rbp_bytes / share->bytes : 0.0,
	       (unsigned long long)share->bytes, share->keeps ? "keeps frame pointers" : "does not");
	unwind_table__free(t);
	unwind_image__close(&img);
	close(fd);
}

/*
 * Debian's libc, xz and python3.11 are built without frame pointers, the
 * test workloads with them (busy) and without (nofp, as distributions
 * build): the tables tell which, per binary (libc: 93 of 3,713 functions
 * set up a frame, its hand-written and alloca ones; busy: 6 of 9).
 */
START_TEST(frame_pointers_are_told_per_binary)
{
	struct unwind_fp_share share;

	fp_share_of("/usr/lib/x86_64-linux-gnu/libc.so.6", &share);
	ck_assert(!share.keeps);
	ck_assert_uint_gt(share.functions, 1000);
	fp_share_of("/usr/bin/xz", &share);
	ck_assert(!share.keeps);
	fp_share_of(workload("nofp"), &share);
	ck_assert(!share.keeps);
	fp_share_of(workload("busy"), &share);
	ck_assert(share.keeps);
	/* Every function of its own sets up a frame; crt's _start and the two PLTs' FDEs do not. */
	ck_assert_uint_ge(share.rbp_frames + 3, share.functions);
	ck_assert_uint_le(share.rbp_frames, share.functions);
	fp_share_of("/usr/bin/python3.11", &share);
	ck_assert(!share.keeps);
}
END_TEST

Suite *unwind_tables_suite(void)
{
	Suite *s = suite_create("unwind_tables");
	TCase *tc = tcase_create("real");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, real_binaries_match_elfutils, 0,
			    sizeof(binaries) / sizeof(binaries[0]));
	tcase_add_test(tc, frame_pointers_are_told_per_binary);
	suite_add_tcase(s, tc);
	return s;
}
