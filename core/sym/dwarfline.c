// SPDX-License-Identifier: GPL-2.0
#include "core/sym/dwarfline.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/lib/hashmap.h"
#include "core/lib/log.h"
#include "core/lib/userfile.h"
#include "core/sym/demangle.h"

/* Deepest DIE nesting followed: a hostile file must not take the stack. */
#define MAX_DIE_DEPTH 64
/*
 * Compressed DWARF sections are inflated only up to this much in all, and
 * DWARF_INFLATE_RATIO times the file's size: zlib and zstd compress DWARF 3
 * to 8 times, and a file whose sections claim more (1 MB that would inflate
 * to 2 GB) is read as one without DWARF, with a warning.
 */
#define DWARF_INFLATE_MAX (512ULL << 20)
#define DWARF_INFLATE_RATIO 32
/*
 * libdw's line-table reader keeps thousands of rows on the stack (alloca)
 * and recurses through DIEs: it runs on a thread with a stack of this size,
 * whatever the profiler's own (ulimit -s 64 crashed it).
 */
#define DWARF_STACK_SIZE (16UL << 20)

/* One address range of a compilation unit. */
struct cu_range {
	uint64_t low, high;	/* [low, high) */
	size_t unit;
};

/* A function, or a call inlined into one, with code. */
struct func {
	Dwarf_Die die;
	int32_t parent;		/* the function or inlined call it is in; -1 for none */
	uint16_t depth;		/* how many are around it */
	bool inlined;
};

struct func_range {
	uint64_t low, high;
	uint32_t func;
	uint16_t depth;
};

/*
 * A unit's functions and inlined calls by address, built at its first
 * lookup: dwarf_getscopes() walks the unit's whole DIE tree at every call
 * (about 0.7 ms per address in libc's larger units).
 */
struct unit {
	Dwarf_Die cu;
	bool indexed;
	struct func *funcs;
	size_t nr_funcs, cap_funcs;
	struct func_range *ranges;	/* sorted by low, then depth */
	size_t nr_ranges, cap_ranges;
};

struct dwarf_lines {
	int fd, alt_fd;
	Elf *elf, *alt_elf;
	Dwarf *dw, *alt;
	struct cu_range *ranges;	/* sorted by low */
	size_t nr_ranges;
	struct unit *units;
	size_t nr_units, cap_units;
	struct hashmap names;		/* mangled name (libdw's pointer) -> demangled copy */
	void **pads;			/* the padded copies of sections' data */
	size_t nr_pads;
};

static uint64_t ptr_hash(const void *k)
{
	return hash_u64((uint64_t)(uintptr_t)k);
}

static bool ptr_equal(const void *a, const void *b)
{
	return a == b;
}

static int cmp_range(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	if (x->low != y->low)
		return x->low < y->low ? -1 : 1;
	return x->high < y->high ? -1 : x->high > y->high;
}

/* Room for one more element of *arr (elem bytes each). */
static int grow(void **arr, size_t nr, size_t *cap, size_t elem)
{
	size_t ncap;
	void *tmp;

	if (nr < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 64;
	tmp = realloc(*arr, ncap * elem);
	if (!tmp)
		return -ENOMEM;
	*arr = tmp;
	*cap = ncap;
	return 0;
}

static int add_range(struct dwarf_lines *dl, size_t *cap, uint64_t low, uint64_t high, size_t unit)
{
	if (high <= low)
		return 0;
	if (grow((void **)&dl->ranges, dl->nr_ranges, cap, sizeof(*dl->ranges)))
		return -ENOMEM;
	dl->ranges[dl->nr_ranges++] = (struct cu_range){ low, high, unit };
	return 0;
}

static int cmp_func_range(const void *a, const void *b)
{
	const struct func_range *x = a, *y = b;

	if (x->low != y->low)
		return x->low < y->low ? -1 : 1;
	return (int)x->depth - (int)y->depth;
}

/* A function or inlined call of u and its ranges. */
static int add_func(struct unit *u, Dwarf_Die *die, int32_t parent, bool inlined)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	struct func *f;

	if (u->nr_funcs >= INT32_MAX ||
	    grow((void **)&u->funcs, u->nr_funcs, &u->cap_funcs, sizeof(*u->funcs)))
		return -ENOMEM;
	f = &u->funcs[u->nr_funcs];
	*f = (struct func){ .die = *die, .parent = parent, .inlined = inlined };
	f->depth = parent >= 0 ? u->funcs[parent].depth + 1 : 0;
	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		if (end <= start)
			continue;
		if (grow((void **)&u->ranges, u->nr_ranges, &u->cap_ranges, sizeof(*u->ranges)))
			return -ENOMEM;
		u->ranges[u->nr_ranges++] = (struct func_range){ start, end, (uint32_t)u->nr_funcs,
								 f->depth };
	}
	return (int)u->nr_funcs++;
}

/* Every function and inlined call of the unit, once, each knowing what it is in. */
static int index_unit(struct unit *u)
{
	struct {
		Dwarf_Die die;
		int32_t parent;
	} stack[MAX_DIE_DEPTH];
	int sp = 0;
	Dwarf_Die child;

	u->indexed = true;
	if (dwarf_child(&u->cu, &child) == 0)
		stack[sp++] = (typeof(stack[0])){ child, -1 };
	while (sp > 0) {
		Dwarf_Die die = stack[sp - 1].die, next;
		int32_t self = stack[sp - 1].parent;
		int tag = dwarf_tag(&die);

		/* The entry moves on to the next sibling before die's children go on top. */
		if (dwarf_siblingof(&die, &next) == 0)
			stack[sp - 1].die = next;
		else
			sp--;
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
			int idx = add_func(u, &die, self, tag == DW_TAG_inlined_subroutine);

			if (idx < 0)
				return idx;
			self = idx;
		}
		if (dwarf_haschildren(&die) && sp < MAX_DIE_DEPTH && dwarf_child(&die, &child) == 0)
			stack[sp++] = (typeof(stack[0])){ child, self };
	}
	if (u->nr_ranges)
		qsort(u->ranges, u->nr_ranges, sizeof(*u->ranges), cmp_func_range);
	return 0;
}

/* The innermost function or inlined call of u at vaddr, or NULL. */
static const struct func *func_at(struct unit *u, uint64_t vaddr)
{
	size_t lo = 0, hi;

	if (!u->indexed && index_unit(u))
		return NULL;
	hi = u->nr_ranges;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (u->ranges[mid].low <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/*
	 * Nested ranges start no earlier than those around them, and sort after
	 * them when they start together: the first range back that holds vaddr
	 * is the innermost.
	 */
	while (lo > 0) {
		const struct func_range *r = &u->ranges[--lo];

		if (vaddr < r->high)
			return &u->funcs[r->func];
	}
	return NULL;
}

/*
 * The address ranges of every compilation unit, from the units themselves:
 * libdw 0.188 finds a unit by .debug_aranges only, which clang does not
 * emit. Skeleton units (split DWARF) are left out: libdw would open the
 * .dwo file they name, a path the binary chooses.
 */
static int read_units(struct dwarf_lines *dl)
{
	Dwarf_CU *cu = NULL, *next;
	size_t cap = 0;
	uint8_t type;
	Dwarf_Die cudie;
	int err;

	while (dwarf_get_units(dl->dw, cu, &next, NULL, &type, &cudie, NULL) == 0) {
		Dwarf_Addr base, start, end;
		ptrdiff_t off = 0;

		cu = next;
		if (type != DW_UT_compile || dwarf_tag(&cudie) != DW_TAG_compile_unit ||
		    dwarf_hasattr(&cudie, DW_AT_dwo_name) || dwarf_hasattr(&cudie, DW_AT_GNU_dwo_name))
			continue;
		if (grow((void **)&dl->units, dl->nr_units, &dl->cap_units, sizeof(*dl->units)))
			return -ENOMEM;
		dl->units[dl->nr_units] = (struct unit){ .cu = cudie };
		while ((off = dwarf_ranges(&cudie, off, &base, &start, &end)) > 0) {
			err = add_range(dl, &cap, start, end, dl->nr_units);
			if (err)
				return err;
		}
		dl->nr_units++;
	}
	if (dl->nr_ranges)
		qsort(dl->ranges, dl->nr_ranges, sizeof(*dl->ranges), cmp_range);
	return 0;
}

/* The name of the file open as fd, for a warning. */
static const char *fd_name(int fd, char *buf, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, len - 1);
	if (n <= 0)
		return "a file";
	buf[n] = '\0';
	return buf;
}

/*
 * What the compressed .debug_* sections of elf (the file open as fd) claim
 * to inflate to, checked against DWARF_INFLATE_MAX and DWARF_INFLATE_RATIO
 * before any is inflated: -EFBIG, with a warning, past either.
 */
static int check_inflated_size(Elf *elf, size_t shstrndx, int fd)
{
	unsigned long long total = 0, max = DWARF_INFLATE_MAX;
	Elf_Scn *scn = NULL;
	struct stat st;
	char buf[PATH_MAX];

	if (!fstat(fd, &st) && (unsigned long long)st.st_size < max / DWARF_INFLATE_RATIO)
		max = (unsigned long long)st.st_size * DWARF_INFLATE_RATIO;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		GElf_Chdr ch;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_COMPRESSED))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strncmp(name, ".debug_", 7))
			continue;
		if (!gelf_getchdr(scn, &ch))
			return -EINVAL;
		total += ch.ch_size;
		if (total > max || total < ch.ch_size) {
			pr_warn("warning: %s: its DWARF claims to inflate to more than %llu bytes "
				"(%d times its size, at most %llu MiB): read as without DWARF\n",
				fd_name(fd, buf, sizeof(buf)), max, DWARF_INFLATE_RATIO,
				DWARF_INFLATE_MAX >> 20);
			return -EFBIG;
		}
	}
	return 0;
}

/* Zero bytes after each DWARF section's data: see pad_sections. */
#define SECTION_PAD 64

/*
 * libdw 0.188 trusts what it reads: a string section without its final NUL,
 * or a string offset at the very end of its section, sends strlen (libdw's
 * own, and ours on the names it returns) past the end of the section's
 * buffer; fuzz_dwarfline found both. So every .debug_* section's data,
 * decompressed first as libdw would, is copied into a buffer with zero
 * bytes after it, where any such string ends. GNU's old .zdebug sections,
 * which libdw would decompress into buffers of its own, are refused.
 * Returns 0 or -errno.
 */
static int pad_sections(struct dwarf_lines *dl, Elf *elf, int fd)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int err;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -EINVAL;
	err = check_inflated_size(elf, shstrndx, fd);
	if (err)
		return err;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		Elf_Data *data;
		GElf_Shdr sh;
		void **pads;
		char *copy;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strncmp(name, ".zdebug", 7))
			return -EOPNOTSUPP;
		if (!name || strncmp(name, ".debug_", 7))
			continue;
		if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
			return -EINVAL;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf || !data->d_size)
			continue;
		if (data->d_size > SIZE_MAX - SECTION_PAD)
			return -EFBIG;
		pads = realloc(dl->pads, (dl->nr_pads + 1) * sizeof(*pads));
		if (!pads)
			return -ENOMEM;
		dl->pads = pads;
		copy = calloc(1, data->d_size + SECTION_PAD);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, data->d_buf, data->d_size);
		dl->pads[dl->nr_pads++] = copy;
		data->d_buf = copy;
	}
	return 0;
}

/*
 * A dwz supplement (.gnu_debugaltlink) opened here by its build-id under the
 * debug root, as gdb finds it, from a place root or the file's owner
 * controls; libdw would otherwise open it by a path the file names. -ENOENT when the file needs one that is not there.
 */
static int set_alt(struct dwarf_lines *dl, const char *debug_root)
{
	const unsigned char *id;
	const char *name;
	char rel[200];
	uint64_t size;
	struct stat st;
	ssize_t len = dwelf_dwarf_gnu_debugaltlink(dl->dw, &name, (const void **)&id);
	size_t n;

	if (len == 0)
		return 0;
	if (len < 2 || len > 64)
		return -ENOENT;
	n = (size_t)snprintf(rel, sizeof(rel), ".build-id/%02x/", id[0]);
	for (ssize_t i = 1; i < len; i++)
		n += (size_t)snprintf(rel + n, sizeof(rel) - n, "%02x", id[i]);
	snprintf(rel + n, sizeof(rel) - n, ".debug");
	/* Of root's or of whoever may give the binary its DWARF (the owner of dl's file). */
	dl->alt_fd = userfile__open_owned(debug_root, rel, fstat(dl->fd, &st) ? 0 : st.st_uid,
					  USERFILE_MAX_SIZE, &size);
	if (dl->alt_fd < 0)
		return -ENOENT;
	dl->alt_elf = elf_begin(dl->alt_fd, ELF_C_READ, NULL);
	dl->alt = dl->alt_elf && !pad_sections(dl, dl->alt_elf, dl->alt_fd)
			  ? dwarf_begin_elf(dl->alt_elf, DWARF_C_READ, NULL) : NULL;
	if (!dl->alt)
		return -ENOENT;
	dwarf_setalt(dl->dw, dl->alt);
	return 0;
}

/* fn(arg) on a thread whose stack is DWARF_STACK_SIZE; here if no thread can be made. */
static void on_dwarf_stack(void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	pthread_t t;
	bool ran = false;

	if (!pthread_attr_init(&attr)) {
		if (!pthread_attr_setstacksize(&attr, DWARF_STACK_SIZE) &&
		    !pthread_create(&t, &attr, fn, arg)) {
			pthread_join(t, NULL);
			ran = true;
		}
		pthread_attr_destroy(&attr);
	}
	if (!ran)
		fn(arg);
}

static struct dwarf_lines *open_dwarf(int fd, const char *debug_root)
{
	struct dwarf_lines *dl;
	int err = -ENOENT;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		close(fd);
		errno = ENOSYS;
		return NULL;
	}
	dl = calloc(1, sizeof(*dl));
	if (!dl) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	dl->fd = fd;
	dl->alt_fd = -1;
	hashmap__init(&dl->names, ptr_hash, ptr_equal);
	/* Read, not mapped: a file its owner truncates must not end the profiler with SIGBUS. */
	dl->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!dl->elf || elf_kind(dl->elf) != ELF_K_ELF || pad_sections(dl, dl->elf, fd))
		goto err_out;
	dl->dw = dwarf_begin_elf(dl->elf, DWARF_C_READ, NULL);
	if (!dl->dw)
		goto err_out;
	err = set_alt(dl, debug_root);
	if (!err)
		err = read_units(dl);
	if (!err && !dl->nr_ranges)
		err = -ENOENT;
	if (err)
		goto err_out;
	return dl;

err_out:
	dwarf_lines__free(dl);
	errno = -err;
	return NULL;
}

struct open_call {
	int fd;
	const char *debug_root;
	struct dwarf_lines *dl;
	int err;
};

static void *open_thread(void *arg)
{
	struct open_call *c = arg;

	c->dl = open_dwarf(c->fd, c->debug_root);
	c->err = errno;
	return NULL;
}

struct dwarf_lines *dwarf_lines__open(int fd, const char *debug_root)
{
	struct open_call c = { fd, debug_root, NULL, 0 };

	on_dwarf_stack(open_thread, &c);
	errno = c.err;
	return c.dl;
}

void dwarf_lines__free(struct dwarf_lines *dl)
{
	struct hashmap_entry *ent;
	size_t bkt;

	if (!dl)
		return;
	hashmap__for_each(&dl->names, bkt, ent)
		free(ent->value);
	hashmap__clear(&dl->names);
	free(dl->ranges);
	for (size_t i = 0; i < dl->nr_units; i++) {
		free(dl->units[i].funcs);
		free(dl->units[i].ranges);
	}
	free(dl->units);
	/* The supplement outlives the file that refers to it. */
	if (dl->dw)
		dwarf_end(dl->dw);
	if (dl->alt)
		dwarf_end(dl->alt);
	if (dl->alt_elf)
		elf_end(dl->alt_elf);
	if (dl->alt_fd >= 0)
		close(dl->alt_fd);
	if (dl->elf)
		elf_end(dl->elf);
	close(dl->fd);
	/* After elf_end: the sections' data points at these to the end. */
	for (size_t i = 0; i < dl->nr_pads; i++)
		free(dl->pads[i]);
	free(dl->pads);
	free(dl);
}

size_t dwarf_lines__units(const struct dwarf_lines *dl)
{
	return dl->nr_units;
}

/* The unit whose ranges hold vaddr, or NULL. */
static struct unit *unit_at(struct dwarf_lines *dl, uint64_t vaddr)
{
	size_t lo = 0, hi = dl->nr_ranges;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (dl->ranges[mid].low <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Ranges of units may nest (a unit around another's code): look back a little. */
	for (size_t i = lo, tries = 0; i > 0 && tries < 8; i--, tries++)
		if (vaddr < dl->ranges[i - 1].high)
			return &dl->units[dl->ranges[i - 1].unit];
	return NULL;
}

/* The function's name as perf prints it: the linkage name demangled and short, else DW_AT_name. */
static const char *function_name(struct dwarf_lines *dl, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *mangled, *name;
	char *demangled;

	mangled = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!mangled)
		mangled = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (mangled) {
		name = hashmap__find(&dl->names, mangled);
		if (name)
			return name;
		demangled = demangle_cxx(mangled, strlen(mangled));
		if (demangled) {
			if (!hashmap__add(&dl->names, mangled, demangled))
				return demangled;
			free(demangled);
		}
	}
	return dwarf_diename(die);
}

/*
 * The file a DW_AT_decl_file or DW_AT_call_file names, in the file table of
 * the unit the attribute is in. Not dwarf_decl_file(): libdw 0.188 takes
 * index 0 for "none", which DWARF 5 made the unit's primary file.
 */
static const char *file_attr(Dwarf_Attribute *attr)
{
	Dwarf_Files *files;
	Dwarf_Die cudie;
	Dwarf_Word idx;
	const char *name;
	size_t nr;

	if (!attr || dwarf_formudata(attr, &idx) ||
	    !dwarf_cu_die(attr->cu, &cudie, NULL, NULL, NULL, NULL, NULL, NULL) ||
	    dwarf_getsrcfiles(&cudie, &files, &nr) || idx >= nr)
		return NULL;
	name = dwarf_filesrc(files, idx, NULL, NULL);
	/* libdw's placeholder for entry 0 of DWARF 4 tables, which means none. */
	return name && strcmp(name, "???") ? name : NULL;
}

static void set_function(struct dwarf_lines *dl, struct src_frame *f, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	int line = 0;

	f->function = function_name(dl, die);
	f->decl_file = file_attr(dwarf_attr_integrate(die, DW_AT_decl_file, &attr));
	f->decl_line = dwarf_decl_line(die, &line) == 0 && line > 0 ? (uint32_t)line : 0;
}

static unsigned int lookup(struct dwarf_lines *dl, uint64_t vaddr, struct src_frame *out,
			   unsigned int max)
{
	struct unit *u = unit_at(dl, vaddr);
	const struct func *fn;
	const char *file = NULL;
	unsigned int n = 0;
	Dwarf_Line *row;
	int line = 0;

	if (!u || !max)
		return 0;
	row = dwarf_getsrc_die(&u->cu, vaddr);
	if (row) {
		file = dwarf_linesrc(row, NULL, NULL);
		if (dwarf_lineno(row, &line) || line < 0)
			line = 0;
	}
	/* From the innermost inlined call out to the function that holds the code. */
	for (fn = func_at(u, vaddr); fn; fn = fn->parent >= 0 ? &u->funcs[fn->parent] : NULL) {
		/* Past max, the middle of the chain goes: the last slot is the function's. */
		struct src_frame *f = &out[n < max ? n : max - 1];
		Dwarf_Die die = fn->die;
		Dwarf_Attribute attr;
		Dwarf_Word v;

		if (n < max)
			n++;
		f->file = file;
		f->line = (uint32_t)line;
		set_function(dl, f, &die);
		if (!fn->inlined)
			break;
		/* The caller stands at the call site of this inlined instance. */
		file = file_attr(dwarf_attr(&die, DW_AT_call_file, &attr));
		line = 0;
		if (!dwarf_formudata(dwarf_attr(&die, DW_AT_call_line, &attr), &v) && v <= INT32_MAX)
			line = (int)v;
	}
	if (!n) {
		/* Code outside any function DIE (assembly): its line still says something. */
		out[0] = (struct src_frame){ .file = file, .line = (uint32_t)line };
		n = file || line;
	}
	return n;
}

struct lookup_call {
	struct dwarf_lines *dl;
	uint64_t vaddr;
	struct src_frame *out;
	unsigned int max, n;
};

static void *lookup_thread(void *arg)
{
	struct lookup_call *c = arg;

	c->n = lookup(c->dl, c->vaddr, c->out, c->max);
	return NULL;
}

unsigned int dwarf_lines__lookup(struct dwarf_lines *dl, uint64_t vaddr, struct src_frame *out,
				 unsigned int max)
{
	struct lookup_call c = { dl, vaddr, out, max, 0 };

	on_dwarf_stack(lookup_thread, &c);
	return c.n;
}
