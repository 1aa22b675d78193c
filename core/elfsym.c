// SPDX-License-Identifier: GPL-2.0
#include "core/elfsym.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>
#include <zlib.h>

struct elf_sym {
	uint64_t addr;
	uint64_t size;
	const char *name;	/* points into names */
	bool global;
	uint16_t shndx;		/* section, to bound symbols without a size */
};

struct section_range {
	uint64_t start, end;
};

struct load_segment {
	uint64_t offset;
	uint64_t vaddr;
	uint64_t filesz;
};

struct elf_symtab {
	struct elf_sym *syms;	/* sorted by addr, one per address */
	size_t nr_syms;
	char *names;		/* all names, NUL separated */
	size_t names_len;
	struct load_segment *segs;
	size_t nr_segs;
	struct section_range *sections;	/* by section index */
	size_t nr_sections;
	char build_id[130];		/* hex, "" if none */
	enum elf_sym_source source;
};

static char debug_root[PATH_MAX] = "/usr/lib/debug";

void elf_symtab__set_debug_root(const char *dir)
{
	snprintf(debug_root, sizeof(debug_root), "%s", dir);
}

static bool libelf_ready(void)
{
	static int ready = -1;

	if (ready < 0)
		ready = elf_version(EV_CURRENT) != EV_NONE;
	return ready;
}

/* The C++ runtime's demangler (libstdc++), not a hand-written one. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/*
 * "_ZN2ns5ClassIlE6methodEv" -> "ns::Class<long>::method": demangled, then
 * without the parameter list (and qualifiers after it), as profilers print
 * frames. Returns a malloc'ed name, or NULL if name is not a C++ name.
 */
char *elf_demangle(const char *name, size_t len)
{
	char mangled[1024], *out;
	int status = -1, depth = 0;
	size_t n;

	if (len < 3 || strncmp(name, "_Z", 2) || len >= sizeof(mangled))
		return NULL;
	memcpy(mangled, name, len);
	mangled[len] = '\0';
	out = __cxa_demangle(mangled, NULL, NULL, &status);
	if (status || !out) {
		free(out);
		return NULL;
	}
	/* Cut at the '(' that opens the last top-level parameter list. */
	n = strlen(out);
	while (n > 0 && out[n - 1] != ')')
		n--;
	for (size_t i = n; i-- > 0;) {
		if (out[i] == ')')
			depth++;
		else if (out[i] == '(' && --depth == 0) {
			if (i > 0)
				out[i] = '\0';
			break;
		}
	}
	return out;
}

static Elf_Scn *find_section(Elf *elf, Elf64_Word type, const char *name)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *sname;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (type && sh.sh_type != type)
			continue;
		sname = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && (!sname || strcmp(sname, name)))
			continue;
		return scn;
	}
	return NULL;
}

/* Address ranges of allocated sections: a symbol without a size ends with its section. */
static int read_sections(Elf *elf, struct elf_symtab *st)
{
	size_t shnum;
	Elf_Scn *scn = NULL;

	if (elf_getshdrnum(elf, &shnum))
		return -EINVAL;
	st->sections = calloc(shnum ? shnum : 1, sizeof(*st->sections));
	if (!st->sections)
		return -ENOMEM;
	st->nr_sections = shnum;
	while ((scn = elf_nextscn(elf, scn))) {
		size_t idx = elf_ndxscn(scn);
		GElf_Shdr sh;

		if (idx < shnum && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_ALLOC))
			st->sections[idx] = (struct section_range){ sh.sh_addr,
								    sh.sh_addr + sh.sh_size };
	}
	return 0;
}

static int read_segments(Elf *elf, struct elf_symtab *st)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum))
		return -EINVAL;
	st->segs = calloc(phnum ? phnum : 1, sizeof(*st->segs));
	if (!st->segs)
		return -ENOMEM;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		st->segs[st->nr_segs++] = (struct load_segment){
			.offset = ph.p_offset, .vaddr = ph.p_vaddr, .filesz = ph.p_filesz };
	}
	return 0;
}

/* Append a name to the string pool; returns its offset or -1. */
static long pool_add(struct elf_symtab *st, size_t *cap, const char *name, size_t len)
{
	long off;

	if (st->names_len + len + 1 > *cap) {
		size_t ncap = (*cap ? *cap * 2 : 4096) + len + 1;
		char *tmp = realloc(st->names, ncap);

		if (!tmp)
			return -1;
		st->names = tmp;
		*cap = ncap;
	}
	off = st->names_len;
	memcpy(st->names + off, name, len);
	st->names[off + len] = '\0';
	st->names_len += len + 1;
	return off;
}

static int read_symbols(Elf *elf, Elf_Scn *scn, struct elf_symtab *st)
{
	GElf_Shdr sh;
	Elf_Data *data;
	size_t nr, pool_cap = st->names_len, cnt = 0;
	long *name_off;

	if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize)
		return -EINVAL;
	data = elf_getdata(scn, NULL);
	if (!data)
		return -EINVAL;
	nr = sh.sh_size / sh.sh_entsize;
	st->syms = calloc(nr ? nr : 1, sizeof(*st->syms));
	name_off = calloc(nr ? nr : 1, sizeof(*name_off));
	if (!st->syms || !name_off) {
		free(name_off);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nr; i++) {
		GElf_Sym sym;
		const char *name;
		char *demangled;
		size_t len;

		if (!gelf_getsym(data, i, &sym))
			continue;
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
		    GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC)
			continue;
		if (sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		/* "memcpy@GLIBC_2.14" and "memcpy@@GLIBC_2.14" print as "memcpy". */
		len = strcspn(name, "@");
		demangled = elf_demangle(name, len);
		if (demangled) {
			name_off[cnt] = pool_add(st, &pool_cap, demangled, strlen(demangled));
			free(demangled);
		} else {
			name_off[cnt] = pool_add(st, &pool_cap, name, len);
		}
		if (name_off[cnt] < 0) {
			free(name_off);
			return -ENOMEM;
		}
		st->syms[cnt].addr = sym.st_value;
		st->syms[cnt].size = sym.st_size;
		st->syms[cnt].global = GELF_ST_BIND(sym.st_info) != STB_LOCAL;
		st->syms[cnt].shndx = sym.st_shndx < SHN_LORESERVE ? sym.st_shndx : 0;
		cnt++;
	}
	/* Names are pointers into the pool only once it stops moving. */
	for (size_t i = 0; i < cnt; i++)
		st->syms[i].name = st->names + name_off[i];
	st->nr_syms = cnt;
	free(name_off);
	return 0;
}

static size_t leading_underscores(const char *s)
{
	return strspn(s, "_");
}

/*
 * Aliases: prefer a sized symbol, then a global one, then the plainest name
 * ("read" over "__libc_read"), then the first by name.
 */
static int cmp_sym(const void *a, const void *b)
{
	const struct elf_sym *x = a, *y = b;
	size_t ux, uy;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (!x->size != !y->size)
		return x->size ? -1 : 1;
	if (x->global != y->global)
		return x->global ? -1 : 1;
	ux = leading_underscores(x->name);
	uy = leading_underscores(y->name);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* One symbol per address; an alias starting with prefer (if any) wins. */
static void sort_symbols(struct elf_symtab *st, const char *prefer)
{
	size_t out = 0;

	qsort(st->syms, st->nr_syms, sizeof(*st->syms), cmp_sym);
	for (size_t i = 0; i < st->nr_syms; i++) {
		if (!out || st->syms[out - 1].addr != st->syms[i].addr)
			st->syms[out++] = st->syms[i];
		else if (prefer && !strncmp(st->syms[i].name, prefer, strlen(prefer)) &&
			 strncmp(st->syms[out - 1].name, prefer, strlen(prefer)))
			st->syms[out - 1] = st->syms[i];
	}
	st->nr_syms = out;
}

static bool read_build_id(Elf *elf, char *hex, size_t hex_len)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			const unsigned char *desc = (const unsigned char *)data->d_buf + desc_off;

			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((const char *)data->d_buf + name_off, "GNU", 4) ||
			    nh.n_descsz * 2 + 1 > hex_len || nh.n_descsz < 2)
				continue;
			for (size_t i = 0; i < nh.n_descsz; i++)
				sprintf(hex + 2 * i, "%02x", desc[i]);
			return true;
		}
	}
	return false;
}

static uint32_t file_crc32(const char *path)
{
	unsigned char buf[65536];
	uLong crc = crc32(0L, Z_NULL, 0);
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		crc = crc32(crc, buf, (uInt)n);
	close(fd);
	return (uint32_t)crc;
}

/* Candidates named by .gnu_debuglink, checked against its CRC. */
static bool find_debuglink(Elf *elf, const char *path, char *out, size_t out_len)
{
	Elf_Scn *scn = find_section(elf, 0, ".gnu_debuglink");
	char dir[PATH_MAX];
	const char *name, *slash;
	Elf_Data *data;
	uint32_t crc;
	size_t name_len;

	if (!scn || !(data = elf_getdata(scn, NULL)) || data->d_size < 8)
		return false;
	name = data->d_buf;
	name_len = strnlen(name, data->d_size);
	if (name_len >= data->d_size - 4)
		return false;
	/* The CRC follows the name, 4-byte aligned, in the file's byte order. */
	memcpy(&crc, (const char *)data->d_buf + ((name_len + 4) & ~3UL), 4);

	slash = strrchr(path, '/');
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
	const char *fmts[] = { "%s/%s", "%s/.debug/%s", NULL };
	for (int i = 0; fmts[i]; i++) {
		if (snprintf(out, out_len, fmts[i], dir, name) >= (int)out_len)
			continue;
		if (strcmp(out, path) && access(out, R_OK) == 0 && file_crc32(out) == crc)
			return true;
	}
	if (snprintf(out, out_len, "%s%s/%s", debug_root, dir, name) >= (int)out_len)
		return false;
	return access(out, R_OK) == 0 && file_crc32(out) == crc;
}

struct elf_handle {
	int fd;
	Elf *elf;
};

static int open_elf(const char *path, struct elf_handle *h)
{
	h->elf = NULL;
	h->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (h->fd < 0)
		return -errno;
	h->elf = elf_begin(h->fd, ELF_C_READ_MMAP, NULL);
	if (!h->elf || elf_kind(h->elf) != ELF_K_ELF) {
		if (h->elf)
			elf_end(h->elf);
		close(h->fd);
		h->elf = NULL;
		h->fd = -1;
		return -ENOEXEC;
	}
	return 0;
}

static void close_elf(struct elf_handle *h)
{
	if (h->elf)
		elf_end(h->elf);
	if (h->fd >= 0)
		close(h->fd);
}

/* .symtab of a separate debug file, if one exists for this ELF (its build-id read already). */
/* The separate debug file of elf: by build-id (hex, may be ""), else by .gnu_debuglink. */
static bool find_debug_file(Elf *elf, const char *hex, const char *path, char *out, size_t len,
			    enum elf_sym_source *src)
{
	if (hex[0]) {
		int n = snprintf(out, len, "%s/.build-id/%.2s/%s.debug", debug_root, hex, hex + 2);

		*src = ELF_SYM_DEBUG_BUILD_ID;
		if (n < (int)len && access(out, R_OK) == 0)
			return true;
	}
	*src = ELF_SYM_DEBUG_LINK;
	return path && find_debuglink(elf, path, out, len);
}

static int load_from_debug_file(Elf *elf, const char *path, struct elf_symtab *st)
{
	char debug_path[PATH_MAX];
	struct elf_handle h;
	Elf_Scn *scn;
	int err = -ENOENT;
	enum elf_sym_source src;

	if (!find_debug_file(elf, st->build_id, path, debug_path, sizeof(debug_path), &src))
		return -ENOENT;
	if (open_elf(debug_path, &h))
		return -ENOENT;
	scn = find_section(h.elf, SHT_SYMTAB, NULL);
	if (scn) {
		err = read_symbols(h.elf, scn, st);
		if (!err)
			st->source = src;
	}
	close_elf(&h);
	return err;
}

int elf_debug_file(const char *open_path, const char *path, char *out, size_t len)
{
	enum elf_sym_source src;
	char hex[2 * 64 + 1] = "";
	struct elf_handle h;
	bool found;

	if (!libelf_ready() || open_elf(open_path, &h))
		return -ENOENT;
	read_build_id(h.elf, hex, sizeof(hex));
	found = find_debug_file(h.elf, hex, path, out, len, &src);
	close_elf(&h);
	return found ? 0 : -ENOENT;
}

static struct elf_symtab *load_elf(Elf *elf, const char *path, const char *prefer)
{
	struct elf_symtab *st = calloc(1, sizeof(*st));
	Elf_Scn *scn;
	int err;

	if (!st) {
		errno = ENOMEM;
		return NULL;
	}
	err = read_segments(elf, st);
	if (!err)
		err = read_sections(elf, st);
	if (err)
		goto err_out;
	if (!read_build_id(elf, st->build_id, sizeof(st->build_id)))
		st->build_id[0] = '\0';

	scn = find_section(elf, SHT_SYMTAB, NULL);
	if (scn) {
		err = read_symbols(elf, scn, st);
		st->source = ELF_SYM_SYMTAB;
	} else {
		err = load_from_debug_file(elf, path, st);
		if (err == -ENOENT) {
			scn = find_section(elf, SHT_DYNSYM, NULL);
			err = scn ? read_symbols(elf, scn, st) : 0;
			st->source = scn ? ELF_SYM_DYNSYM : ELF_SYM_NONE;
		}
	}
	if (err)
		goto err_out;
	sort_symbols(st, prefer);
	return st;

err_out:
	elf_symtab__free(st);
	errno = -err;
	return NULL;
}

struct elf_symtab *elf_symtab__load(const char *path)
{
	return elf_symtab__load_as(path, path);
}

struct elf_symtab *elf_symtab__load_as(const char *open_path, const char *path)
{
	struct elf_handle h;
	struct elf_symtab *st;
	int err;

	if (!libelf_ready()) {
		errno = ENOSYS;
		return NULL;
	}
	err = open_elf(open_path, &h);
	if (err) {
		errno = -err;
		return NULL;
	}
	st = load_elf(h.elf, path, NULL);
	err = errno;
	close_elf(&h);
	errno = err;
	return st;
}

const void *elf_own_vdso(size_t *size)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);

	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return NULL;
	/* The section headers come last in the image. */
	*size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	return eh;
}

struct elf_symtab *elf_symtab__load_mem(const void *image, size_t size)
{
	struct elf_symtab *st;
	char *copy;
	Elf *elf;

	if (!libelf_ready()) {
		errno = ENOSYS;
		return NULL;
	}
	copy = malloc(size);
	if (!copy) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(copy, image, size);
	elf = elf_memory(copy, size);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		free(copy);
		errno = ENOEXEC;
		return NULL;
	}
	/* The vdso's own names, as perf prints them: __vdso_clock_gettime. */
	st = load_elf(elf, NULL, "__vdso_");
	elf_end(elf);
	free(copy);
	return st;
}

void elf_symtab__free(struct elf_symtab *st)
{
	if (!st)
		return;
	free(st->syms);
	free(st->names);
	free(st->segs);
	free(st->sections);
	free(st);
}

const char *elf_symtab__build_id(const struct elf_symtab *st)
{
	return st->build_id[0] ? st->build_id : NULL;
}

enum elf_sym_source elf_symtab__source(const struct elf_symtab *st)
{
	return st->source;
}

size_t elf_symtab__count(const struct elf_symtab *st)
{
	return st->nr_syms;
}

/* Debug files have the same section layout as the file they describe. */
static bool in_section(const struct elf_symtab *st, const struct elf_sym *s, uint64_t vaddr)
{
	const struct section_range *r;

	if (!s->shndx || s->shndx >= st->nr_sections)
		return false;
	r = &st->sections[s->shndx];
	return vaddr >= r->start && vaddr < r->end;
}

const char *elf_symtab__lookup_vaddr(const struct elf_symtab *st, uint64_t vaddr,
				     uint64_t *sym_off)
{
	size_t lo = 0, hi = st->nr_syms;

	/* The last symbol starting at or below vaddr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Walk back a little for a symbol that contains vaddr (nested symbols). */
	for (size_t i = lo, tries = 0; i > 0 && tries < 4; i--, tries++) {
		const struct elf_sym *s = &st->syms[i - 1];

		if (vaddr < s->addr + s->size || (!s->size && tries == 0 && in_section(st, s, vaddr))) {
			*sym_off = vaddr - s->addr;
			return s->name;
		}
	}
	return NULL;
}

const char *elf_symtab__lookup_offset(const struct elf_symtab *st, uint64_t off,
				      uint64_t *sym_off)
{
	for (size_t i = 0; i < st->nr_segs; i++) {
		const struct load_segment *seg = &st->segs[i];

		if (off >= seg->offset && off < seg->offset + seg->filesz)
			return elf_symtab__lookup_vaddr(st, off - seg->offset + seg->vaddr,
							sym_off);
	}
	return NULL;
}
