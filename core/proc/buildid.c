// SPDX-License-Identifier: GPL-2.0
#include "core/proc/buildid.h"

#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/*
 * What is looked at, at most: as the kernel does, the build-id must be in
 * a PT_NOTE segment among the first program headers, and early in it (ld
 * puts .note.gnu.build-id right after the headers). Three small reads.
 */
#define PHDRS_MAX 128
#define NOTE_SEGS_MAX 8
#define NOTES_MAX 4096

#if __BYTE_ORDER == __LITTLE_ENDIAN
#define ELFDATA_NATIVE ELFDATA2LSB
#else
#define ELFDATA_NATIVE ELFDATA2MSB
#endif

/* Reads up to len bytes at off: how many (fewer at the end), or -errno. */
typedef ssize_t (*read_at_fn)(void *ctx, void *buf, size_t len, uint64_t off);

static uint64_t align_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) & ~(a - 1);
}

/*
 * The build-id among the notes in p[0, len), laid out with the given
 * alignment (4, or 8 for a segment aligned so). Every note must lie within
 * what was read; a note cut by the end stops the walk.
 */
static bool find_in_notes(const unsigned char *p, size_t len, uint64_t align,
			  struct build_id *out)
{
	uint64_t off = 0;

	while (len - off >= sizeof(Elf32_Nhdr)) {	/* Elf64_Nhdr is the same 12 bytes */
		Elf32_Nhdr nh;
		uint64_t name, desc, next;

		memcpy(&nh, p + off, sizeof(nh));
		/* 32-bit sizes on a 64-bit offset below 4096: no sum overflows. */
		/* Each part starts aligned, counted from the note's start (itself aligned). */
		name = off + sizeof(nh);
		desc = off + align_up(sizeof(nh) + (uint64_t)nh.n_namesz, align);
		next = off + align_up(desc - off + nh.n_descsz, align);
		if (desc + nh.n_descsz > len)
			return false;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && !memcmp(p + name, "GNU", 4) &&
		    nh.n_descsz && nh.n_descsz <= BUILD_ID_MAX) {
			out->size = (uint8_t)nh.n_descsz;
			memcpy(out->data, p + desc, nh.n_descsz);
			return true;
		}
		if (next >= len)
			return false;
		off = next;
	}
	return false;
}

struct phdr_note {
	uint64_t offset, filesz, align;
};

/* The i-th program header if it is PT_NOTE, from the table read into buf. */
static bool note_header(const unsigned char *buf, size_t i, bool is64, struct phdr_note *out)
{
	if (is64) {
		Elf64_Phdr ph;

		memcpy(&ph, buf + i * sizeof(ph), sizeof(ph));
		*out = (struct phdr_note){ ph.p_offset, ph.p_filesz, ph.p_align };
		return ph.p_type == PT_NOTE;
	}
	Elf32_Phdr ph;

	memcpy(&ph, buf + i * sizeof(ph), sizeof(ph));
	*out = (struct phdr_note){ ph.p_offset, ph.p_filesz, ph.p_align };
	return ph.p_type == PT_NOTE;
}

static int read_build_id(read_at_fn rd, void *ctx, struct build_id *out)
{
	unsigned char ehdr[sizeof(Elf64_Ehdr)], phdrs[PHDRS_MAX * sizeof(Elf64_Phdr)];
	unsigned char notes[NOTES_MAX];
	size_t entsize, nr, segs = 0;
	uint64_t phoff;
	unsigned int phnum;
	bool is64;
	ssize_t n;

	out->size = 0;
	n = rd(ctx, ehdr, sizeof(ehdr), 0);
	if (n < 0)
		return (int)n;
	if ((size_t)n < EI_NIDENT || memcmp(ehdr, ELFMAG, SELFMAG) ||
	    ehdr[EI_DATA] != ELFDATA_NATIVE ||
	    (ehdr[EI_CLASS] != ELFCLASS64 && ehdr[EI_CLASS] != ELFCLASS32))
		return 0;
	is64 = ehdr[EI_CLASS] == ELFCLASS64;
	if ((size_t)n < (is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)))
		return 0;
	if (is64) {
		Elf64_Ehdr eh;

		memcpy(&eh, ehdr, sizeof(eh));
		phoff = eh.e_phoff, entsize = eh.e_phentsize, phnum = eh.e_phnum;
	} else {
		Elf32_Ehdr eh;

		memcpy(&eh, ehdr, sizeof(eh));
		phoff = eh.e_phoff, entsize = eh.e_phentsize, phnum = eh.e_phnum;
	}
	/* PN_XNUM: the count is in section 0, a layout no binary that runs has. */
	if (entsize != (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)) || !phnum ||
	    phnum >= PN_XNUM)
		return 0;
	nr = phnum < PHDRS_MAX ? phnum : PHDRS_MAX;
	n = rd(ctx, phdrs, nr * entsize, phoff);
	if (n < 0)
		return (int)n;
	nr = (size_t)n / entsize;
	for (size_t i = 0; i < nr && segs < NOTE_SEGS_MAX; i++) {
		struct phdr_note ph;
		size_t want;

		if (!note_header(phdrs, i, is64, &ph))
			continue;
		segs++;
		want = ph.filesz < NOTES_MAX ? (size_t)ph.filesz : NOTES_MAX;
		n = want ? rd(ctx, notes, want, ph.offset) : 0;
		if (n < 0)
			return (int)n;
		/* gABI says 4; a segment aligned to 8 holds notes aligned so (GNU properties). */
		if ((ph.align == 8 && find_in_notes(notes, (size_t)n, 8, out)) ||
		    find_in_notes(notes, (size_t)n, 4, out))
			return 1;
	}
	return 0;
}

static ssize_t read_fd_at(void *ctx, void *buf, size_t len, uint64_t off)
{
	ssize_t n;

	if (off > (uint64_t)INT64_MAX - len)
		return 0;	/* past any file */
	do
		n = pread(*(int *)ctx, buf, len, (off_t)off);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

int build_id__read_fd(int fd, struct build_id *out)
{
	return read_build_id(read_fd_at, &fd, out);
}

struct mem_image {
	const unsigned char *p;
	size_t size;
};

static ssize_t read_mem_at(void *ctx, void *buf, size_t len, uint64_t off)
{
	const struct mem_image *m = ctx;

	if (off >= m->size)
		return 0;
	if (len > m->size - off)
		len = m->size - (size_t)off;
	memcpy(buf, m->p + off, len);
	return (ssize_t)len;
}

int build_id__read_mem(const void *image, size_t size, struct build_id *out)
{
	struct mem_image m = { image, size };

	return read_build_id(read_mem_at, &m, out);
}

bool build_id__equal(const struct build_id *a, const struct build_id *b)
{
	return a->size == b->size && !memcmp(a->data, b->data, a->size);
}

void build_id__hex(const struct build_id *b, char *hex, size_t len)
{
	size_t i;

	if (!len)
		return;
	for (i = 0; i < b->size && 2 * i + 2 < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", b->data[i]);
	hex[2 * i] = '\0';
}
