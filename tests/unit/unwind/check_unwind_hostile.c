// SPDX-License-Identifier: GPL-2.0
/*
 * The unwinder on files made hostile at test time (issue 14): copies of the
 * nofp workloads with .debug_frame, .eh_frame_hdr or .eh_frame bytes
 * patched at offsets found with libelf, and a copy truncated while the
 * unwinder holds it. Each copy is unwound as the profiler would unwind a
 * process that maps it: an address space with the file's executable
 * segment, a sample's registers and a stack copy. Any user can make such a
 * file and run it under a root profiler: none of this may crash or hang it.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/proc/proctrack.h"
#include "tests/support/tests.h"
#include "unwind/debugframe.h"
#include "unwind/fde.h"
#include "unwind/image.h"
#include "unwind/unwind.h"

#define BIAS 0x555555554000ull
#define FAKE_SP 0x7ffe00001000ull

struct section {
	uint64_t off, addr, size;
};

/* A copy of a workload that the test patches, mapped into an address space of its own. */
struct crafted {
	char dir[64];
	char path[128];
	struct addr_space as;
	bool mapped;
};

static struct crafted cr;
static struct unwinder *uw;

static void setup(void)
{
	memset(&cr, 0, sizeof(cr));
	snprintf(cr.dir, sizeof(cr.dir), "/tmp/profile-hostile-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(cr.dir));
	uw = unwinder__new();
	ck_assert_ptr_nonnull(uw);
	elf_version(EV_CURRENT);
}

static void teardown(void)
{
	unwinder__free(uw);
	for (size_t i = 0; i < cr.as.nr_maps; i++)
		free(cr.as.maps[i].path);
	free(cr.as.maps);
	if (cr.path[0])
		unlink(cr.path);
	rmdir(cr.dir);
}

static void copy_workload(const char *name)
{
	char buf[65536];
	int in, out;
	ssize_t n;

	snprintf(cr.path, sizeof(cr.path), "%s/%s", cr.dir, name);
	in = open(workload(name), O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(in, 0);
	out = open(cr.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	ck_assert_int_ge(out, 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		ck_assert_int_eq(write(out, buf, n), n);
	ck_assert_int_eq(n, 0);
	close(in);
	close(out);
}

static void patch(uint64_t off, const void *bytes, size_t n)
{
	int fd = open(cr.path, O_WRONLY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, bytes, n, off), (ssize_t)n);
	close(fd);
}

static void read_at(uint64_t off, void *bytes, size_t n)
{
	int fd = open(cr.path, O_RDONLY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, bytes, n, off), (ssize_t)n);
	close(fd);
}

static Elf *elf_open(int *fd)
{
	Elf *e;

	*fd = open(cr.path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(*fd, 0);
	e = elf_begin(*fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(e);
	return e;
}

static struct section find_section(const char *name)
{
	struct section s = { 0 };
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	int fd;
	Elf *e = elf_open(&fd);

	ck_assert_int_eq(elf_getshdrstrndx(e, &shstrndx), 0);
	while ((scn = elf_nextscn(e, scn))) {
		const char *n;

		gelf_getshdr(scn, &sh);
		n = elf_strptr(e, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name)) {
			s.off = sh.sh_offset;
			s.addr = sh.sh_addr;
			s.size = sh.sh_size;
		}
	}
	elf_end(e);
	close(fd);
	ck_assert_msg(s.size, "no section %s", name);
	return s;
}

static uint64_t find_symbol(const char *name)
{
	Elf_Scn *scn = NULL;
	uint64_t value = 0;
	GElf_Shdr sh;
	GElf_Sym sym;
	int fd;
	Elf *e = elf_open(&fd);

	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d;

		gelf_getshdr(scn, &sh);
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			gelf_getsym(d, i, &sym);
			if (!strcmp(elf_strptr(e, sh.sh_link, sym.st_name), name))
				value = sym.st_value;
		}
	}
	elf_end(e);
	close(fd);
	ck_assert_msg(value, "no symbol %s", name);
	return value;
}

/* Map the copy's executable segment at BIAS, as the kernel would for a process running it. */
static void map_copy(void)
{
	struct mapping m = { 0 };
	size_t n;
	struct stat st;
	GElf_Phdr ph;
	int fd;
	Elf *e = elf_open(&fd);

	ck_assert_int_eq(elf_getphdrnum(e, &n), 0);
	for (size_t i = 0; i < n; i++) {
		gelf_getphdr(e, i, &ph);
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		m.start = BIAS + (ph.p_vaddr & ~0xfffull);
		m.end = BIAS + ((ph.p_vaddr + ph.p_memsz + 0xfff) & ~0xfffull);
		m.pgoff = ph.p_offset & ~0xfffull;
	}
	elf_end(e);
	ck_assert_int_eq(fstat(fd, &st), 0);
	close(fd);
	m.dev = st.st_dev;
	m.ino = st.st_ino;
	m.exec = true;
	m.path = cr.path;
	ck_assert_uint_ne(m.end, 0);
	ck_assert_int_eq(addr_space__insert(&cr.as, &m), 0);
}

/* A sample at ELF address vaddr of the copy, with a stack of zeros. */
static unsigned int unwind_at(uint64_t vaddr, uint64_t *ips)
{
	unsigned char stack[512] = { 0 };
	struct unwind_regs regs = { .ip = BIAS + vaddr, .sp = FAKE_SP, .bp = 0 };
	unsigned int n;

	n = unwinder__unwind(uw, &cr.as, &regs, NULL, stack, sizeof(stack), ips, MAX_STACK_DEPTH);
	ck_assert_uint_ge(n, 1);
	ck_assert_uint_eq(ips[0], regs.ip);
	return n;
}

/* The same in a leaf function, called from ELF address ret: its return address is at sp. */
static unsigned int unwind_leaf_at(uint64_t vaddr, uint64_t ret, uint64_t *ips)
{
	unsigned char stack[512] = { 0 };
	struct unwind_regs regs = { .ip = BIAS + vaddr, .sp = FAKE_SP, .bp = 0 };
	uint64_t ra = BIAS + ret;
	unsigned int n;

	memcpy(stack, &ra, 8);
	n = unwinder__unwind(uw, &cr.as, &regs, NULL, stack, sizeof(stack), ips, MAX_STACK_DEPTH);
	ck_assert_uint_ge(n, 1);
	ck_assert_uint_eq(ips[0], regs.ip);
	return n;
}

static struct unwind_stats stats(void)
{
	struct unwind_stats st;

	unwinder__stats(uw, &st);
	return st;
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* The offset in the file of the FDE that covers vaddr in .debug_frame (32-bit DWARF). */
static uint64_t debug_frame_fde_of(const struct section *s, uint64_t vaddr)
{
	unsigned char *d = malloc(s->size);
	uint64_t off = 0, found = 0;

	ck_assert_ptr_nonnull(d);
	read_at(s->off, d, s->size);
	while (off + 24 <= s->size && !found) {
		uint32_t len = get32(d + off);
		uint64_t start;

		ck_assert_uint_ne(len, 0xffffffff);
		memcpy(&start, d + off + 8, 8);
		if (get32(d + off + 4) != 0xffffffff && start == vaddr)
			found = s->off + off;
		off += 4 + (uint64_t)len;
	}
	free(d);
	ck_assert_msg(found, "no FDE for 0x%lx in .debug_frame", (unsigned long)vaddr);
	return found;
}

/* Case 1: an FDE of .debug_frame whose CIE pointer leaves the section. */
static const uint32_t bad_cie_pointers[] = { 0x7ffffff0, 0x80000000, 0xfffffff0 };

START_TEST(a_debug_frame_cie_pointer_outside_the_section_is_not_followed)
{
	uint64_t ips[MAX_STACK_DEPTH], fde, fn;
	struct section df;

	copy_workload("nofp_debugframe");
	fn = find_symbol("nofp_b");
	df = find_section(".debug_frame");
	fde = debug_frame_fde_of(&df, fn);
	patch(fde + 4, &bad_cie_pointers[_i], 4);
	map_copy();
	/* libunwind 1.6 reads .debug_frame from our memory: the CIE was at section + pointer. */
	unwind_at(fn + 4, ips);
	ck_assert_uint_eq(stats().bad_fdes, 1);
}
END_TEST

/* The .eh_frame_hdr search table entry of vaddr: its file offset. Standard encodings only. */
static uint64_t hdr_entry_of(const struct section *hdr, uint64_t vaddr)
{
	unsigned char h[4096];
	uint32_t count;

	ck_assert_uint_le(hdr->size, sizeof(h));
	read_at(hdr->off, h, hdr->size);
	ck_assert_uint_eq(h[0], 1);
	ck_assert_uint_eq(h[1], 0x1b);	/* pcrel sdata4 */
	ck_assert_uint_eq(h[2], 0x03);	/* udata4 */
	ck_assert_uint_eq(h[3], 0x3b);	/* datarel sdata4 */
	count = get32(h + 8);
	for (uint32_t i = 0; i < count && 12 + 8 * (i + 1) <= hdr->size; i++)
		if ((int32_t)get32(h + 12 + 8 * i) == (int64_t)(vaddr - hdr->addr))
			return hdr->off + 12 + 8 * i;
	ck_abort_msg("no table entry for 0x%lx", (unsigned long)vaddr);
	return 0;
}

/*
 * The instructions of an FDE for nofp_b that libunwind 1.6 runs forever: the
 * CFA is an expression whose DW_OP_skip jumps back onto itself.
 */
static const unsigned char looping_cfi[] = {
	0x0f, 0x03,		/* DW_CFA_def_cfa_expression, 3 bytes */
	0x2f, 0xfd, 0xff,	/* DW_OP_skip -3 */
	0x00, 0x00,		/* DW_CFA_nop */
};

/* An .eh_frame FDE (32-bit, "zR" CIE with pcrel sdata4) at vaddr: its instructions' offset. */
static size_t make_fde(unsigned char *fde, uint64_t vaddr, uint64_t cie, uint64_t fn,
		       uint32_t range)
{
	uint32_t len = 4 + 4 + 4 + 1 + sizeof(looping_cfi), v;

	memcpy(fde, &len, 4);
	v = (uint32_t)(vaddr + 4 - cie);
	memcpy(fde + 4, &v, 4);
	v = (uint32_t)(fn - (vaddr + 8));
	memcpy(fde + 8, &v, 4);
	memcpy(fde + 12, &range, 4);
	fde[16] = 0;		/* augmentation data length */
	memcpy(fde + 17, looping_cfi, sizeof(looping_cfi));
	return 4 + len;
}

/* Case 1: the search table of .eh_frame_hdr sends nofp_b to an FDE outside .eh_frame. */
START_TEST(an_eh_frame_hdr_entry_outside_eh_frame_is_not_followed)
{
	uint64_t ips[MAX_STACK_DEPTH], fn, entry;
	struct section hdr, eh, text;
	unsigned char fde[64];
	int32_t fde_rel;
	size_t n;

	copy_workload("nofp");
	fn = find_symbol("nofp_b");
	hdr = find_section(".eh_frame_hdr");
	eh = find_section(".eh_frame");
	text = find_section(".text");
	/* The FDE goes over _start's code (never run), its CIE is .eh_frame's second (zR). */
	n = make_fde(fde, text.addr, eh.addr + 0x30, fn, 0x10);
	patch(text.off, fde, n);
	entry = hdr_entry_of(&hdr, fn);
	fde_rel = (int32_t)(text.addr - hdr.addr);
	patch(entry + 4, &fde_rel, 4);
	map_copy();
	unwind_at(fn + 4, ips);
	ck_assert_uint_eq(stats().bad_fdes, 1);
	ck_assert_uint_eq(stats().bad_images, 0);
	/* The other entries still unwind: nofp_c's FDE finds its caller's return address at sp. */
	ck_assert_uint_ge(unwind_leaf_at(find_symbol("nofp_c") + 2, fn + 5, ips), 2);
	ck_assert_uint_eq(ips[1], BIAS + fn + 5);
}
END_TEST

/* The file offset of the .eh_frame FDE that covers vaddr, through the search table. */
static uint64_t eh_frame_fde_of(const struct section *hdr, uint64_t vaddr)
{
	int32_t rel;

	read_at(hdr_entry_of(hdr, vaddr) + 4, &rel, 4);
	/* .eh_frame_hdr and .eh_frame share a segment: vaddr and offset differ alike. */
	return hdr->off + rel;
}

/* Case 1: nofp_b's own FDE in .eh_frame rewritten to loop, same length. */
START_TEST(an_eh_frame_expression_that_jumps_back_is_refused)
{
	uint64_t ips[MAX_STACK_DEPTH], fn, fde;
	unsigned char old[4];
	struct section hdr;
	uint32_t len;

	copy_workload("nofp");
	fn = find_symbol("nofp_b");
	hdr = find_section(".eh_frame_hdr");
	fde = eh_frame_fde_of(&hdr, fn);
	read_at(fde, old, 4);
	len = get32(old);
	/* length, CIE pointer, pc_begin, pc_range, augmentation length: 17 bytes, then CFI */
	ck_assert_uint_ge(len + 4, 17 + sizeof(looping_cfi));
	patch(fde + 17, looping_cfi, sizeof(looping_cfi));
	map_copy();
	unwind_at(fn + 4, ips);
	ck_assert_uint_eq(stats().bad_fdes, 1);
}
END_TEST

/*
 * libunwind 1.6 ends a CFI program at its DW_CFA_hi_user, 0x3c, and reads on
 * past 0x3f (the standard's hi_user) as one byte: an operand hidden behind
 * 0x3f that runs past the FDE must be seen.
 */
START_TEST(instructions_after_one_libunwind_ignores_are_checked)
{
	static const unsigned char cfi[] = { 0x3f, 0x05, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80 };
	uint64_t fde, fn;
	struct unwind_image img;
	struct debug_frame df;
	struct section s;
	size_t before;
	uint32_t len;
	int fd;

	copy_workload("nofp_debugframe");
	fd = open(cr.path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(unwind_image__open_fd(&img, fd), 0);
	close(fd);
	ck_assert_int_eq(debug_frame__load(&df, &img, NULL), 0);
	before = df.nr_index;
	debug_frame__free(&df);
	unwind_image__close(&img);

	fn = find_symbol("nofp_b");
	s = find_section(".debug_frame");
	fde = debug_frame_fde_of(&s, fn);
	read_at(fde, &len, 4);
	/* length, CIE pointer, pc_begin, pc_range: 24 bytes, then the instructions to its end */
	ck_assert_uint_eq(len + 4, 24 + sizeof(cfi));
	patch(fde + 24, cfi, sizeof(cfi));
	fd = open(cr.path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(unwind_image__open_fd(&img, fd), 0);
	close(fd);
	ck_assert_int_eq(debug_frame__load(&df, &img, NULL), 0);
	ck_assert_uint_eq(df.bad_fdes, 1);
	ck_assert_uint_eq(df.nr_index, before - 1);
	debug_frame__free(&df);
	unwind_image__close(&img);
}
END_TEST

/*
 * Found by fuzz_unwind_tables: libunwind 1.6 indexes its register locations
 * with a CIE's return address column unchecked (1.7 checks it). nofp's
 * second CIE rewritten as version 3, whose column is a ULEB128: 0xffffffff.
 */
START_TEST(a_return_address_column_outside_the_registers_is_refused)
{
	static const unsigned char cie[] = {
		0, 0, 0, 0, 3, 'z', 'R', 0,		/* id, version, augmentation */
		1, 0x78, 0xff, 0xff, 0xff, 0xff, 0x0f,	/* alignments, column */
		1, 0x1b, 0x0c, 7, 8,			/* pcrel sdata4, CFA = rsp + 8 */
	};
	uint64_t ips[MAX_STACK_DEPTH], fn;
	struct section eh;
	uint32_t len;

	copy_workload("nofp");
	fn = find_symbol("nofp_b");
	eh = find_section(".eh_frame");
	read_at(eh.off + 0x30, &len, 4);
	ck_assert_uint_eq(len, sizeof(cie));
	patch(eh.off + 0x34, cie, sizeof(cie));
	map_copy();
	unwind_at(fn + 4, ips);
	ck_assert_uint_ge(stats().bad_fdes, 1);
}
END_TEST

/* The same with the second register of DW_CFA_register: rbp is in register 0xffffffff. */
START_TEST(a_register_rule_outside_the_registers_is_refused)
{
	static const unsigned char cfi[] = { 0x09, 6, 0xff, 0xff, 0xff, 0xff, 0x0f };
	uint64_t ips[MAX_STACK_DEPTH], fn, fde;
	struct section hdr;

	copy_workload("nofp");
	fn = find_symbol("nofp_b");
	hdr = find_section(".eh_frame_hdr");
	fde = eh_frame_fde_of(&hdr, fn);
	patch(fde + 17, cfi, sizeof(cfi));
	map_copy();
	unwind_at(fn + 4, ips);
	ck_assert_uint_eq(stats().bad_fdes, 1);
}
END_TEST

/* Case 1: a 64-bit DWARF CIE whose length is shorter than its own header. */
START_TEST(a_debug_frame_cie_shorter_than_its_header_is_not_repaired)
{
	/* 64-bit length 0, CIE id, then what a version 4 CIE would hold after it */
	static const unsigned char cie64[] = {
		0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		4, 0, 8, 0, 1, 0x78, 16,
	};
	struct unwind_image img;
	struct debug_frame df;
	struct section s;
	int fd, err;

	copy_workload("nofp_debugframe");
	s = find_section(".debug_frame");
	ck_assert_uint_ge(s.size, sizeof(cie64));
	patch(s.off, cie64, sizeof(cie64));
	fd = open(cr.path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(unwind_image__open_fd(&img, fd), 0);
	close(fd);
	/* Nothing after a malformed entry can be framed: no FDE is left to index. */
	err = debug_frame__load(&df, &img, NULL);
	ck_assert_int_eq(err, -ENOENT);
	ck_assert_uint_eq(df.bad_fdes, 1);
	unwind_image__close(&img);
}
END_TEST

/* A .eh_frame_hdr whose FDE count runs past its segment into .eh_frame. */
START_TEST(an_eh_frame_hdr_count_past_its_end_is_refused)
{
	struct unwind_image img;
	struct section hdr;
	uint32_t count;
	int fd;

	copy_workload("nofp");
	hdr = find_section(".eh_frame_hdr");
	read_at(hdr.off + 8, &count, 4);
	count += 4;	/* 32 bytes more: still inside the segment, in .eh_frame */
	patch(hdr.off + 8, &count, 4);
	fd = open(cr.path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(unwind_image__open_fd(&img, fd), 0);
	close(fd);
	ck_assert(!img.has_table);
	ck_assert(img.bad_table);
	unwind_image__close(&img);
}
END_TEST

/* Entries out of order: libunwind's binary search would miss FDEs or find wrong ones. */
START_TEST(an_unsorted_eh_frame_hdr_table_is_refused)
{
	struct unwind_image img;
	struct section hdr;
	unsigned char first[8], second[8];
	int fd;

	copy_workload("nofp");
	hdr = find_section(".eh_frame_hdr");
	read_at(hdr.off + 12, first, 8);
	read_at(hdr.off + 20, second, 8);
	patch(hdr.off + 12, second, 8);
	patch(hdr.off + 20, first, 8);
	fd = open(cr.path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(unwind_image__open_fd(&img, fd), 0);
	close(fd);
	ck_assert(!img.has_table);
	ck_assert(img.bad_table);
	unwind_image__close(&img);
}
END_TEST


/* Patch the section header of name with fn. */
static void patch_shdr(const char *name, void (*fn)(Elf64_Shdr *sh))
{
	struct section want = find_section(name);
	Elf64_Ehdr ehdr;
	Elf64_Shdr sh;

	read_at(0, &ehdr, sizeof(ehdr));
	for (unsigned int i = 0; i < ehdr.e_shnum; i++) {
		uint64_t at = ehdr.e_shoff + (uint64_t)i * sizeof(sh);

		read_at(at, &sh, sizeof(sh));
		if (sh.sh_offset != want.off || sh.sh_size != want.size)
			continue;
		fn(&sh);
		patch(at, &sh, sizeof(sh));
	}
}

static void past_the_end(Elf64_Shdr *sh)
{
	sh->sh_size = 1 << 20;
}

static void huge(Elf64_Shdr *sh)
{
	sh->sh_size = 0x7fffffff0000ull;
}

/* A file whose section headers say .eh_frame is larger than its segment: nothing is read of it. */
START_TEST(an_eh_frame_larger_than_its_segment_is_refused)
{
	struct unwind_image img;
	int fd;

	copy_workload("nofp");
	patch_shdr(".eh_frame", huge);
	fd = open(cr.path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(unwind_image__open_fd(&img, fd), 0);
	close(fd);
	ck_assert(!img.has_table);
	ck_assert(img.bad_table);
	ck_assert_uint_eq(img.eh_size, 0);
	unwind_image__close(&img);
}
END_TEST

/* Found by fuzz_unwind_tables: a failed read of .debug_frame left a freed pointer in df. */
START_TEST(a_debug_frame_past_the_end_of_the_file_is_not_read)
{
	struct unwind_image img;
	struct debug_frame df;
	int fd;

	copy_workload("nofp_debugframe");
	patch_shdr(".debug_frame", past_the_end);
	fd = open(cr.path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(unwind_image__open_fd(&img, fd), 0);
	close(fd);
	ck_assert_int_eq(debug_frame__load(&df, &img, NULL), -ENOENT);
	/* What the unwinder does with every image when it is freed */
	debug_frame__free(&df);
	unwind_image__close(&img);
}
END_TEST

/* The first bytes of the line of /proc/self/maps that names file, or "". */
static const char *own_mapping(const char *file, char *path, size_t len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096], *p;

	path[0] = 0;
	while (f && fgets(line, sizeof(line), f)) {
		p = strchr(line, '/');
		if (!p || !strstr(p, file))
			continue;
		p[strcspn(p, "\n")] = 0;
		snprintf(path, len, "%s", p);
		break;
	}
	if (f)
		fclose(f);
	return path;
}

/* Every FDE of img's search table read and checked as a lookup would: how many noted words. */
static unsigned int check_every_fde(const struct unwind_image *img, const char *p)
{
	unsigned int words = 0;

	for (uint64_t i = 0; i < img->fde_count; i++) {
		struct image_fde *f;
		int err = image_fde__read(img, i, &f);

		ck_assert_msg(!err, "%s: FDE of entry %lu refused: %d", p, (unsigned long)i, err);
		words += f->nr_words;
		image_fde__free(f);
	}
	return words;
}

/* No false alarm: what compilers and linkers write passes every check. */
START_TEST(real_unwind_tables_pass_the_checks)
{
	const char *files[] = { "/proc/self/exe", "libc.so.6", "libstdc++.so.6",
				workload("nofp"), workload("cxx"), workload("nofp_debugframe") };
	struct unwind_image img;
	struct debug_frame df;
	char path[4096];
	unsigned int words;
	int fd;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		const char *p = files[i][0] == '/' ? files[i] : own_mapping(files[i], path,
									    sizeof(path));

		ck_assert_msg(p[0], "%s is not mapped", files[i]);
		fd = open(p, O_RDONLY | O_CLOEXEC);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(unwind_image__open_fd(&img, fd), 0);
		close(fd);
		ck_assert_msg(img.has_table && !img.bad_table, "%s: search table refused", p);
		ck_assert_uint_gt(img.fde_count, 1);
		words = check_every_fde(&img, p);
		/* C++ code names its personality routine through a word of .data.rel.ro. */
		if (strstr(p, "libstdc++"))
			ck_assert_uint_ge(words, 1);
		if (!debug_frame__load(&df, &img, NULL)) {
			ck_assert_uint_eq(df.bad_fdes, 0);
			ck_assert_uint_ge(df.nr_index, 7);
			debug_frame__free(&df);
		}
		unwind_image__close(&img);
	}
}
END_TEST

/* The checked FDE that a lookup of vaddr reads, or NULL (freed by the caller). */
static struct image_fde *fde_of(const struct unwind_image *img, uint64_t vaddr)
{
	struct image_fde *f = NULL;
	uint64_t index;

	if (!image_fde__search(img, vaddr, &index))
		image_fde__read(img, index, &f);
	return f;
}

/*
 * Case 2 for .eh_frame, read an FDE at a time: nofp_b's FDE rewritten to
 * loop after the image was read (its search table copied) and another FDE
 * looked up. The rewritten one is checked as it is read, not as it was.
 */
START_TEST(an_fde_rewritten_after_the_image_was_read_is_checked_as_read)
{
	uint64_t ips[MAX_STACK_DEPTH], a, b, fde;
	struct section hdr;

	copy_workload("nofp");
	a = find_symbol("nofp_a");
	b = find_symbol("nofp_b");
	hdr = find_section(".eh_frame_hdr");
	fde = eh_frame_fde_of(&hdr, b);
	map_copy();
	unwind_at(a + 4, ips);
	ck_assert_uint_eq(stats().bad_fdes, 0);
	ck_assert_uint_ge(stats().images, 1);
	patch(fde + 17, looping_cfi, sizeof(looping_cfi));
	unwind_at(b + 4, ips);
	ck_assert_uint_eq(stats().bad_fdes, 1);
	/* Refused once: not read again. */
	unwind_at(b + 5, ips);
	ck_assert_uint_eq(stats().bad_fdes, 1);
}
END_TEST

/* The image of the copy as the unwinder reads it. */
static void open_copy(struct unwind_image *img)
{
	int fd = open(cr.path, O_RDONLY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(unwind_image__open_fd(img, fd), 0);
	close(fd);
}

/* Whether the 8 bytes at vaddr touch the copy c. */
static bool touches(const struct image_copy *c, uint64_t vaddr)
{
	return vaddr < c->vaddr + c->size && vaddr + 8 > c->vaddr;
}

/* A lookup shows libunwind its FDE and CIE; no other byte of .eh_frame is handed out. */
START_TEST(only_the_fde_looked_up_is_read_of_eh_frame)
{
	struct unwind_image img;
	struct section eh;
	struct image_fde *f;
	unsigned char want[8];
	uint64_t val, fn, other;

	copy_workload("nofp");
	fn = find_symbol("nofp_b");
	eh = find_section(".eh_frame");
	open_copy(&img);
	ck_assert_uint_eq(img.eh_frame, eh.addr);
	f = fde_of(&img, fn);
	ck_assert_ptr_nonnull(f);
	/* Its FDE as in the file. */
	read_at(eh.off + (f->fde.vaddr - eh.addr), want, 8);
	ck_assert_int_eq(unwind_image__read(&img, f, f->fde.vaddr, &val), 0);
	ck_assert_mem_eq(&val, want, 8);
	ck_assert_int_eq(unwind_image__read(&img, f, f->cie.vaddr, &val), 0);
	/* An aligned word of .eh_frame in neither: refused, with or without the lookup. */
	other = (eh.addr + 7) & ~7ull;
	if (touches(&f->fde, other) || touches(&f->cie, other))
		other = (eh.addr + eh.size - 8) & ~7ull;
	ck_assert(!touches(&f->fde, other) && !touches(&f->cie, other));
	ck_assert_int_eq(unwind_image__read(&img, f, other, &val), -EFAULT);
	ck_assert_int_eq(unwind_image__read(&img, NULL, f->fde.vaddr, &val), -EFAULT);
	image_fde__free(f);
	unwind_image__close(&img);
}
END_TEST

/* Case 2: the owner of a file truncates it while the unwinder holds its image. */
START_TEST(an_image_truncated_while_held_reads_without_faulting)
{
	struct unwind_image img;
	struct image_fde *f;
	struct section text;
	uint64_t val, fn;
	int fd;

	copy_workload("nofp");
	text = find_section(".text");
	fn = find_symbol("nofp_b");
	fd = open(cr.path, O_RDWR | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(unwind_image__open_fd(&img, fd), 0);
	f = fde_of(&img, fn);
	ck_assert_ptr_nonnull(f);
	image_fde__free(f);
	ck_assert_int_eq(unwind_image__read(&img, NULL, text.addr, &val), 0);
	ck_assert_int_eq(ftruncate(fd, 0), 0);
	close(fd);
	/* Code is read from the file: gone now. */
	ck_assert_int_eq(unwind_image__read(&img, NULL, text.addr + 64, &val), -EFAULT);
	ck_assert(unwind_image__shrunk(&img));
	/* The search table was copied when it was checked; FDEs are read from the file: gone. */
	ck_assert(img.has_table);
	ck_assert_int_eq(unwind_image__read(&img, NULL, img.table, &val), 0);
	ck_assert_ptr_null(fde_of(&img, fn));
	unwind_image__close(&img);
}
END_TEST

/*
 * Truncated between samples: the next read of the file finds it shorter.
 * Case 0: the code at an ip without an FDE (the FDE of a new ip in the same
 * function was kept from before); case 1: an FDE not read before. The image
 * is skipped from then on.
 */
START_TEST(a_process_image_truncated_between_samples_does_not_fault)
{
	uint64_t ips[MAX_STACK_DEPTH];
	uint64_t a, b, c, no_fde;

	copy_workload("nofp");
	a = find_symbol("nofp_a");
	b = find_symbol("nofp_b");
	c = find_symbol("nofp_c");
	no_fde = find_symbol("deregister_tm_clones");
	map_copy();
	unwind_at(c + 2, ips);
	ck_assert_int_eq(truncate(cr.path, 0), 0);
	if (_i == 0) {
		/* A new ip, the same FDE: no cached step, libunwind reads the FDE kept. */
		unwind_at(c + 3, ips);
		ck_assert_uint_eq(stats().bad_images, 0);
		unwind_at(no_fde + 1, ips);
	} else {
		unwind_at(b + 4, ips);
		ck_assert_uint_eq(stats().bad_fdes, 0);
	}
	ck_assert_uint_eq(stats().bad_images, 1);
	ck_assert_uint_eq(unwind_at(a + 4, ips), 1);
	ck_assert_uint_eq(stats().bad_images, 1);
}
END_TEST

/* Where path's last loadable segment ends in the file (its PT_LOADs' offset + filesz). */
static off_t loads_end(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e;
	size_t n = 0;
	off_t end = 0;

	ck_assert_int_ge(fd, 0);
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(elf_getphdrnum(e, &n), 0);
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    (off_t)(ph.p_offset + ph.p_filesz) > end)
			end = (off_t)(ph.p_offset + ph.p_filesz);
	}
	elf_end(e);
	close(fd);
	return end;
}

/*
 * Case 2: opened after it shrank: its segments are not all in the file any
 * more. Cut a page inside its last loadable segment (half the file was
 * once enough, until the debug sections after the segments grew past it).
 */
START_TEST(a_file_that_shrank_is_refused_when_opened)
{
	struct unwind_image img;
	off_t end;
	int fd;

	copy_workload("nofp");
	end = loads_end(cr.path);
	ck_assert_int_gt(end, 8192);
	ck_assert_int_eq(truncate(cr.path, end - 4096), 0);
	fd = open(cr.path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_lt(unwind_image__open_fd(&img, fd), 0);
	close(fd);
}
END_TEST

Suite *unwind_hostile_suite(void)
{
	Suite *s = suite_create("unwind_hostile");
	TCase *tc = tcase_create("crafted");

	tcase_add_checked_fixture(tc, setup, teardown);
	/* A hang is a failure too: libunwind 1.6 loops forever on some tables. */
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, a_debug_frame_cie_pointer_outside_the_section_is_not_followed, 0,
			    sizeof(bad_cie_pointers) / sizeof(bad_cie_pointers[0]));
	tcase_add_test(tc, an_eh_frame_hdr_entry_outside_eh_frame_is_not_followed);
	tcase_add_test(tc, an_eh_frame_expression_that_jumps_back_is_refused);
	tcase_add_test(tc, instructions_after_one_libunwind_ignores_are_checked);
	tcase_add_test(tc, a_return_address_column_outside_the_registers_is_refused);
	tcase_add_test(tc, a_register_rule_outside_the_registers_is_refused);
	tcase_add_test(tc, a_debug_frame_cie_shorter_than_its_header_is_not_repaired);
	tcase_add_test(tc, an_eh_frame_hdr_count_past_its_end_is_refused);
	tcase_add_test(tc, an_unsorted_eh_frame_hdr_table_is_refused);
	tcase_add_test(tc, an_eh_frame_larger_than_its_segment_is_refused);
	tcase_add_test(tc, a_debug_frame_past_the_end_of_the_file_is_not_read);
	tcase_add_test(tc, real_unwind_tables_pass_the_checks);
	tcase_add_test(tc, an_fde_rewritten_after_the_image_was_read_is_checked_as_read);
	tcase_add_test(tc, only_the_fde_looked_up_is_read_of_eh_frame);
	tcase_add_test(tc, an_image_truncated_while_held_reads_without_faulting);
	tcase_add_loop_test(tc, a_process_image_truncated_between_samples_does_not_fault, 0, 2);
	tcase_add_test(tc, a_file_that_shrank_is_refused_when_opened);
	suite_add_tcase(s, tc);
	return s;
}
