// SPDX-License-Identifier: GPL-2.0
#include "unwind/image.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unwind/cfi.h"

/* DWARF pointer encodings used by .eh_frame_hdr (LSB "Exception Frame Header"). */
#define DW_EH_PE_omit 0xff
#define DW_EH_PE_absptr 0x00
#define DW_EH_PE_udata4 0x03
#define DW_EH_PE_sdata4 0x0b
#define DW_EH_PE_udata8 0x04
#define DW_EH_PE_sdata8 0x0c
#define DW_EH_PE_pcrel 0x10
#define DW_EH_PE_datarel 0x30

/* Linkers write a dozen program headers; thousands would only be someone's allocation bait. */
#define IMAGE_MAX_PHDRS 256
/* Section names fit in far less. */
#define IMAGE_MAX_SHSTRTAB (1u << 20)

struct section_read {
	struct section_read *next;
	unsigned char *data;
	size_t size;
	char name[];
};

struct image_state {
	bool shrunk;
	struct section_read *sections;	/* what unwind_image__section handed out */
};

/* Read len bytes at file offset off: the file as it was opened, never past that size. */
static int image_pread(const struct unwind_image *img, void *buf, size_t len, uint64_t off)
{
	if (off > img->size || len > img->size - off)
		return -EFAULT;
	if (img->data) {
		memcpy(buf, img->data + off, len);
		return 0;
	}
	if (img->fd < 0 || img->state->shrunk)
		return -EFAULT;
	while (len) {
		ssize_t n = pread(img->fd, buf, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* End of file before the size it had: someone truncated it. */
			if (!n)
				img->state->shrunk = true;
			return -EFAULT;
		}
		buf = (char *)buf + n;
		off += n;
		len -= n;
	}
	return 0;
}

/* The file offset of [vaddr, vaddr + len) if one PT_LOAD holds it all in the file. */
static int file_range(const struct unwind_image *img, uint64_t vaddr, uint64_t len, uint64_t *off)
{
	for (unsigned int i = 0; i < img->nr_loads; i++) {
		const Elf64_Phdr *ph = &img->loads[i];

		if (vaddr < ph->p_vaddr || vaddr - ph->p_vaddr > ph->p_filesz ||
		    len > ph->p_filesz - (vaddr - ph->p_vaddr))
			continue;
		*off = ph->p_offset + (vaddr - ph->p_vaddr);
		return 0;
	}
	return -EFAULT;
}

/* A buffer of size bytes with zeros up to the next multiple of 8 and 8 more. */
static unsigned char *alloc_padded(size_t size)
{
	size_t n = ((size + 7) & ~(size_t)7) + 8;
	unsigned char *p = malloc(n);

	if (p)
		memset(p + size, 0, n - size);
	return p;
}

static int copy_in(const struct unwind_image *img, struct image_copy *c, uint64_t vaddr,
		   uint64_t size)
{
	uint64_t off;
	int err;

	if (size > IMAGE_MAX_TABLE || file_range(img, vaddr, size, &off))
		return -EBADMSG;
	c->data = alloc_padded(size);
	if (!c->data)
		return -ENOMEM;
	c->vaddr = vaddr;
	c->size = size;
	err = image_pread(img, c->data, size, off);
	if (err) {
		/* Shorter than fstat said: truncated meanwhile (the image is marked shrunk). */
		free(c->data);
		memset(c, 0, sizeof(*c));
		return -EBADMSG;
	}
	return 0;
}

/* The section headers, if the file has a usable table of them. */
static Elf64_Shdr *read_shdrs(const struct unwind_image *img)
{
	Elf64_Shdr *sh;

	if (!img->shnum)
		return NULL;
	sh = calloc(img->shnum, sizeof(*sh));
	if (sh && image_pread(img, sh, img->shnum * sizeof(*sh), img->shoff)) {
		free(sh);
		sh = NULL;
	}
	return sh;
}

/* The size of the allocated section at vaddr, from the section headers, or 0. */
static uint64_t section_size_at(const struct unwind_image *img, uint64_t vaddr)
{
	Elf64_Shdr *sh = read_shdrs(img);
	uint64_t size = 0;

	for (unsigned int i = 0; sh && i < img->shnum && !size; i++)
		if (sh[i].sh_addr == vaddr && (sh[i].sh_flags & SHF_ALLOC) &&
		    sh[i].sh_type != SHT_NOBITS)
			size = sh[i].sh_size;
	free(sh);
	return size;
}

static unsigned int encoded_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	default:
		return 0;	/* uleb128 and friends: not used by linkers for this header */
	}
}

/* A fixed-size pointer of .eh_frame_hdr at h + pos (vaddr hdr + pos). */
static int hdr_pointer(const unsigned char *h, uint64_t hdr, unsigned int pos, uint8_t enc,
		       uint64_t *val)
{
	unsigned int n = encoded_size(enc);
	uint64_t v = 0;

	if (!n || (enc & 0x80))
		return -EBADMSG;
	memcpy(&v, h + pos, n);	/* little-endian */
	if (n == 4 && (enc & 0x0f) == DW_EH_PE_sdata4)
		v = (uint64_t)(int64_t)(int32_t)v;
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		break;
	case DW_EH_PE_pcrel:
		v += hdr + pos;
		break;
	case DW_EH_PE_datarel:
		v += hdr;
		break;
	default:
		return -EBADMSG;
	}
	*val = v;
	return 0;
}

static void drop_table(struct unwind_image *img)
{
	free(img->hdr_copy.data);
	memset(&img->hdr_copy, 0, sizeof(img->hdr_copy));
	img->has_table = false;
	img->fde_count = 0;
	img->eh_frame = 0;
	img->eh_size = 0;
}

/*
 * libunwind's binary search compares the entries' starts as signed; so does
 * ours (unwind/fde.c). Out of order, it would find wrong FDEs or miss some.
 */
static bool table_sorted(const unsigned char *t, uint64_t count)
{
	int32_t prev = INT32_MIN, start;

	for (uint64_t i = 0; i < count; i++) {
		memcpy(&start, t + i * 8, 4);
		if (start < prev)
			return false;
		prev = start;
	}
	return true;
}

/*
 * Copy .eh_frame_hdr (through PT_GNU_EH_FRAME) and find the .eh_frame it
 * names, whose FDEs are read when looked up. Returns 0 (with or without a
 * table), -EBADMSG for tables unusable as a whole, or -ENOMEM.
 */
static int load_table(struct unwind_image *img, const Elf64_Phdr *hdr_ph)
{
	uint64_t v = hdr_ph->p_vaddr, size = hdr_ph->p_filesz, eh, eh_size, count, t, off;
	unsigned int ptr_size, count_size;
	const unsigned char *h;
	int err;

	if (size < 4)
		return size ? -EBADMSG : 0;
	err = copy_in(img, &img->hdr_copy, v, size);
	if (err)
		return err;
	h = img->hdr_copy.data;
	/* version 1; eh_frame_ptr_enc, fde_count_enc, table_enc */
	if (h[0] != 1)
		return -EBADMSG;
	if (h[2] == DW_EH_PE_omit || h[3] == DW_EH_PE_omit)
		return 0;	/* no search table: the linker could not sort it */
	if (h[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return 0;	/* one libunwind cannot search */
	ptr_size = encoded_size(h[1]);
	count_size = encoded_size(h[2]);
	t = 4 + ptr_size + count_size;
	if (!ptr_size || !count_size || t > size || (h[2] & 0x70) ||
	    hdr_pointer(h, v, 4, h[1], &eh) || hdr_pointer(h, v, 4 + ptr_size, h[2], &count))
		return -EBADMSG;
	if (count > (size - t) / 8)
		return -EBADMSG;	/* the table would run past the header */
	if (!count)
		return 0;
	img->eh_frame_hdr = v;
	img->table = v + t;
	/* .eh_frame's size from its section header, else up to the end of its segment */
	eh_size = section_size_at(img, eh);
	for (unsigned int i = 0; !eh_size && i < img->nr_loads; i++) {
		const Elf64_Phdr *ph = &img->loads[i];

		if (eh >= ph->p_vaddr && eh - ph->p_vaddr < ph->p_filesz)
			eh_size = ph->p_filesz - (eh - ph->p_vaddr);
	}
	if (!eh_size || eh_size > IMAGE_MAX_TABLE || file_range(img, eh, eh_size, &off))
		return -EBADMSG;
	/* An FDE read later over the copied table could disagree with it. */
	if (eh < v + size && v < eh + eh_size)
		return -EBADMSG;
	if (!table_sorted(h + t, count))
		return -EBADMSG;
	img->eh_frame = eh;
	img->eh_size = eh_size;
	img->fde_count = count;
	img->has_table = true;
	return 0;
}

static int parse(struct unwind_image *img)
{
	const Elf64_Phdr *hdr_ph = NULL;
	Elf64_Phdr *phdrs;
	Elf64_Ehdr eh;
	int err;

	if (image_pread(img, &eh, sizeof(eh), 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || !eh.e_phnum || eh.e_phnum > IMAGE_MAX_PHDRS)
		return -ENOEXEC;
	phdrs = calloc(eh.e_phnum, sizeof(*phdrs));
	if (!phdrs)
		return -ENOMEM;
	err = image_pread(img, phdrs, eh.e_phnum * sizeof(*phdrs), eh.e_phoff);
	if (err) {
		err = -EBADMSG;
		goto out;
	}
	for (unsigned int i = 0; i < eh.e_phnum; i++) {
		const Elf64_Phdr *ph = &phdrs[i];

		if (ph->p_type == PT_GNU_EH_FRAME) {
			hdr_ph = ph;
			continue;
		}
		if (ph->p_type != PT_LOAD)
			continue;
		/* A segment past the end of the file: it was truncated (or never whole). */
		if (ph->p_offset > img->size || ph->p_filesz > img->size - ph->p_offset ||
		    ph->p_filesz > ph->p_memsz || ph->p_vaddr > UINT64_MAX - ph->p_memsz) {
			err = -EBADMSG;
			goto out;
		}
		if (img->nr_loads < IMAGE_MAX_LOADS)
			img->loads[img->nr_loads++] = *ph;
	}
	if (!img->nr_loads) {
		err = -ENOEXEC;
		goto out;
	}
	if (eh.e_shoff && eh.e_shentsize == sizeof(Elf64_Shdr) && eh.e_shstrndx < eh.e_shnum &&
	    eh.e_shoff <= img->size &&
	    (img->size - eh.e_shoff) / sizeof(Elf64_Shdr) >= eh.e_shnum) {
		img->shoff = eh.e_shoff;
		img->shnum = eh.e_shnum;
		img->shstrndx = eh.e_shstrndx;
	}
	if (hdr_ph) {
		err = load_table(img, hdr_ph);
		if (err == -EBADMSG) {
			/* The rest is still good for frame pointers and .debug_frame. */
			img->bad_table = true;
			err = 0;
		}
		if (err || !img->has_table)
			drop_table(img);
	}
out:
	free(phdrs);
	return err;
}

int unwind_image__open_fd(struct unwind_image *img, int fd)
{
	struct stat st;
	int err;

	memset(img, 0, sizeof(*img));
	img->fd = -1;
	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr))
		return -ENOEXEC;
	img->state = calloc(1, sizeof(*img->state));
	if (!img->state)
		return -ENOMEM;
	img->size = st.st_size;
	img->dev = st.st_dev;
	img->ino = st.st_ino;
	img->fd = fd;		/* borrowed while parsing */
	err = parse(img);
	/* Our own descriptor for later reads; without one, only the copies remain. */
	img->fd = err ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (err)
		unwind_image__close(img);
	return err;
}

int unwind_image__from_memory(struct unwind_image *img, const void *data, size_t size)
{
	int err;

	memset(img, 0, sizeof(*img));
	img->fd = -1;
	img->state = calloc(1, sizeof(*img->state));
	if (!img->state)
		return -ENOMEM;
	img->data = data;
	img->size = size;
	err = parse(img);
	if (err)
		unwind_image__close(img);
	return err;
}

void unwind_image__close(struct unwind_image *img)
{
	struct section_read *s, *next;

	drop_table(img);
	if (img->fd >= 0)
		close(img->fd);
	if (img->state) {
		for (s = img->state->sections; s; s = next) {
			next = s->next;
			free(s->data);
			free(s);
		}
		free(img->state);
	}
	memset(img, 0, sizeof(*img));
	img->fd = -1;
}

bool unwind_image__shrunk(const struct unwind_image *img)
{
	return img->state && img->state->shrunk;
}

int unwind_image__bias(const struct unwind_image *img, uint64_t start, uint64_t pgoff,
		       uint64_t *bias)
{
	for (unsigned int i = 0; i < img->nr_loads; i++) {
		const Elf64_Phdr *ph = &img->loads[i];
		/* The mapping starts at pgoff, the segment's offset rounded down to a page. */
		uint64_t first = ph->p_offset & ~(uint64_t)0xfff;

		if (!(ph->p_flags & PF_X) || pgoff < first || pgoff >= ph->p_offset + ph->p_filesz)
			continue;
		*bias = start - (pgoff - ph->p_offset + ph->p_vaddr);
		return 0;
	}
	return -ENOENT;
}

/* The byte at vaddr from our checked copies, if one holds it. */
static bool copied_byte(const struct unwind_image *img, const struct image_fde *fde,
			uint64_t vaddr, unsigned char *b)
{
	const struct image_copy *copies[] = { &img->hdr_copy, fde ? &fde->fde : NULL,
					      fde ? &fde->cie : NULL };

	for (unsigned int i = 0; i < 3; i++) {
		const struct image_copy *c = copies[i];

		if (c && c->data && vaddr >= c->vaddr && vaddr - c->vaddr < c->size) {
			*b = c->data[vaddr - c->vaddr];
			return true;
		}
	}
	for (unsigned int i = 0; fde && i < fde->nr_words; i++) {
		const struct image_word *w = &fde->words[i];

		if (vaddr >= w->vaddr && vaddr - w->vaddr < 8) {
			*b = w->val >> (8 * (vaddr - w->vaddr));
			return true;
		}
	}
	return false;
}

int unwind_image__table_read(const struct unwind_image *img, const struct image_fde *fde,
			     uint64_t vaddr, uint64_t *val)
{
	const struct image_copy *copies[] = { fde ? &fde->fde : NULL, fde ? &fde->cie : NULL,
					      &img->hdr_copy };
	unsigned char b[8];
	bool any = false;

	for (unsigned int i = 0; i < 3; i++) {
		const struct image_copy *c = copies[i];

		if (c && c->data && vaddr >= c->vaddr && vaddr - c->vaddr < c->size &&
		    c->size - (vaddr - c->vaddr) >= 8) {
			memcpy(val, c->data + (vaddr - c->vaddr), 8);
			return 0;
		}
	}
	/*
	 * libunwind reads tables a byte at a time through the aligned word
	 * that holds it: the other bytes of a word astride a table's edge are
	 * not used, and read as zero.
	 */
	for (unsigned int i = 0; i < 8; i++) {
		b[i] = 0;
		any |= copied_byte(img, fde, vaddr + i, &b[i]);
	}
	if (!any)
		return -EFAULT;
	memcpy(val, b, 8);
	return 0;
}

/* Whether the 8 bytes at vaddr touch the unwind tables (beyond what was checked). */
static bool in_tables(const struct unwind_image *img, uint64_t vaddr)
{
	const struct image_copy *h = &img->hdr_copy;
	uint64_t eh = img->eh_frame;

	if (vaddr > UINT64_MAX - 8)
		return true;
	return (img->eh_size && vaddr + 8 > eh && vaddr < eh + img->eh_size) ||
	       (h->data && vaddr + 8 > h->vaddr && vaddr < h->vaddr + h->size);
}

int unwind_image__read(const struct unwind_image *img, const struct image_fde *fde,
		       uint64_t vaddr, uint64_t *val)
{
	if (!unwind_image__table_read(img, fde, vaddr, val))
		return 0;
	/* libunwind parses only what was checked: the rest of the tables is not handed out. */
	if (in_tables(img, vaddr))
		return -EFAULT;
	/*
	 * libunwind reads aligned words: the last one of a segment may stick out
	 * past its file-backed end. Those bytes read as zero, as in memory.
	 */
	for (unsigned int i = 0; i < img->nr_loads; i++) {
		const Elf64_Phdr *ph = &img->loads[i];
		uint64_t off, n;

		if (vaddr < ph->p_vaddr || vaddr - ph->p_vaddr >= ph->p_filesz)
			continue;
		off = vaddr - ph->p_vaddr + ph->p_offset;
		n = ph->p_filesz - (vaddr - ph->p_vaddr);
		if (n > 8)
			n = 8;
		*val = 0;
		return image_pread(img, val, n, off);
	}
	return -EFAULT;
}

int unwind_image__pread(const struct unwind_image *img, uint64_t vaddr, void *buf, size_t len)
{
	uint64_t off;

	if (file_range(img, vaddr, len, &off))
		return -EFAULT;
	return image_pread(img, buf, len, off);
}

/* The header of the section called name. Returns 0, -ENOENT or -ENOMEM. */
static int find_section(const struct unwind_image *img, const char *name, Elf64_Shdr *out)
{
	Elf64_Shdr *sh = read_shdrs(img), *str;
	size_t name_len = strlen(name) + 1;
	char *names = NULL;
	int err = -ENOENT;

	if (!sh)
		return -ENOENT;
	str = &sh[img->shstrndx];
	if (str->sh_type == SHT_NOBITS || str->sh_size > IMAGE_MAX_SHSTRTAB)
		goto out;
	names = malloc(str->sh_size + 1);
	if (!names) {
		err = -ENOMEM;
		goto out;
	}
	if (image_pread(img, names, str->sh_size, str->sh_offset))
		goto out;
	names[str->sh_size] = 0;
	for (unsigned int i = 0; i < img->shnum; i++) {
		if (sh[i].sh_name >= str->sh_size || sh[i].sh_type == SHT_NOBITS ||
		    str->sh_size - sh[i].sh_name < name_len ||
		    memcmp(names + sh[i].sh_name, name, name_len))
			continue;
		*out = sh[i];
		err = 0;
		break;
	}
out:
	free(names);
	free(sh);
	return err;
}

int unwind_image__section_addr(const struct unwind_image *img, const char *name,
			       uint64_t *vaddr)
{
	Elf64_Shdr sh;
	int err = find_section(img, name, &sh);

	if (err)
		return err;
	*vaddr = sh.sh_addr;
	return 0;
}

int unwind_image__section_place(const struct unwind_image *img, const char *name,
				uint64_t *off, uint64_t *size)
{
	Elf64_Shdr sh;
	struct stat st;
	int err = find_section(img, name, &sh);

	if (err)
		return err;
	if ((sh.sh_flags & SHF_COMPRESSED) || sh.sh_size > IMAGE_MAX_TABLE ||
	    sh.sh_offset > img->size || sh.sh_size > img->size - sh.sh_offset)
		return -EBADMSG;
	/* Reopened for a read after a long time: is it still the file we read before? */
	if (img->fd >= 0 && (fstat(img->fd, &st) || (uint64_t)st.st_size != img->size)) {
		img->state->shrunk |= (uint64_t)st.st_size < img->size;
		return -EBADMSG;
	}
	*off = sh.sh_offset;
	*size = sh.sh_size;
	return 0;
}

int unwind_image__copy_section(const struct unwind_image *img, const char *name,
			       unsigned char **out, size_t *size)
{
	uint64_t off, n;
	int err = unwind_image__section_place(img, name, &off, &n);

	if (err)
		return err;
	*out = alloc_padded(n);
	if (!*out)
		return -ENOMEM;
	if (image_pread(img, *out, n, off)) {
		free(*out);
		*out = NULL;
		return -EBADMSG;
	}
	*size = n;
	return 0;
}

const unsigned char *unwind_image__section(const struct unwind_image *img, const char *name,
					   size_t *size)
{
	struct section_read *s;
	unsigned char *data;
	size_t n;

	if (!img->state)
		return NULL;
	for (s = img->state->sections; s; s = s->next) {
		if (!strcmp(s->name, name)) {
			*size = s->size;
			return s->data;
		}
	}
	if (unwind_image__copy_section(img, name, &data, &n))
		return NULL;
	s = malloc(sizeof(*s) + strlen(name) + 1);
	if (!s) {
		free(data);
		return NULL;
	}
	strcpy(s->name, name);
	s->data = data;
	s->size = n;
	s->next = img->state->sections;
	img->state->sections = s;
	*size = n;
	return data;
}
