// SPDX-License-Identifier: GPL-2.0
/*
 * The constants, version string and soname of an ELF file that a user
 * controls. A constant is believed only where it is what V8 emits: a
 * defined 4-byte object inside the allocated section its index names (a
 * .bss one reads 0, as the loader would give it); counts come from the
 * data read, never from headers alone, names end inside their table.
 */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "core/sym/debugfile.h"
#include "interp/node/nodeint.h"

/* Longest name kept: the longest v8dbg_ name of Node 24 is 91 bytes. */
#define NAME_MAX_LEN 256
/* Longest .rodata scanned for the version string: Node 24's is 53 MB. */
#define RODATA_SCAN_MAX (128UL << 20)

static const char *const prefixes[] = { "v8dbg_", "_ZN2v88internal7Version6" };
#define REGISTER_SYM "node_module_register"

static bool wanted(const char *name, size_t avail, size_t *len)
{
	const char *end = memchr(name, '\0', avail < NAME_MAX_LEN ? avail : NAME_MAX_LEN);

	if (!end)
		return false;
	*len = (size_t)(end - name);
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* The int32 at vaddr in section shndx, where a symbol of size 4 may lie: 0 or -ENOENT. */
static int read_int(Elf *elf, size_t shndx, uint64_t vaddr, int32_t *out)
{
	Elf_Scn *scn = elf_getscn(elf, shndx);
	Elf_Data *data;
	GElf_Shdr sh;
	uint64_t off;

	if (!scn || !gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
	    vaddr < sh.sh_addr || vaddr - sh.sh_addr > sh.sh_size || sh.sh_size - (vaddr - sh.sh_addr) < 4)
		return -ENOENT;
	off = vaddr - sh.sh_addr;
	if (sh.sh_type == SHT_NOBITS) {
		*out = 0;
		return 0;
	}
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf || off > data->d_size || data->d_size - off < 4)
		return -ENOENT;
	/* x86-64 only: the file's byte order is the profiler's. */
	memcpy(out, (const char *)data->d_buf + off, sizeof(*out));
	return 0;
}

static int add(struct node_consts *c, const char *name, int32_t value)
{
	if (c->nr == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		struct node_const *v;

		if (cap > NODE_MAX_CONSTS)
			cap = NODE_MAX_CONSTS;
		if (cap == c->nr)
			return 0;
		v = realloc(c->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		c->v = v;
		c->cap = cap;
	}
	c->v[c->nr] = (struct node_const){ name, value, (uint32_t)c->nr };
	c->nr++;
	return 0;
}

struct const_scan {
	Elf *elf;
	struct node_consts *c;
};

static int note_const(void *ctx, const GElf_Sym *sym, const char *name, size_t avail)
{
	struct const_scan *cs = ctx;
	int32_t value;
	size_t len;

	if (sym->st_shndx >= SHN_LORESERVE)
		return 0;
	if (!strncmp(name, REGISTER_SYM, avail) && avail > strlen(REGISTER_SYM) &&
	    GELF_ST_TYPE(sym->st_info) == STT_FUNC) {
		cs->c->has_register = true;
		return 0;
	}
	/* V8's constants are ints: any other size is not one of them. */
	if (sym->st_size != 4 || GELF_ST_TYPE(sym->st_info) != STT_OBJECT ||
	    !wanted(name, avail, &len) || read_int(cs->elf, sym->st_shndx, sym->st_value, &value))
		return 0;
	return add(cs->c, name, value);
}

static int scan_table(Elf *elf, Elf_Scn *scn, struct node_consts *c)
{
	struct const_scan cs = { elf, c };

	return elf_file__each_symbol(elf, scn, note_const, &cs);
}

static int by_name_then_order(const void *a, const void *b)
{
	const struct node_const *x = a, *y = b;
	int d = strcmp(x->name, y->name);

	if (d)
		return d;
	return x->order < y->order ? -1 : x->order > y->order;
}

int node_consts__read(Elf *elf, struct node_consts *c, bool symtab)
{
	size_t out = 0;
	int err;

	memset(c, 0, sizeof(*c));
	err = scan_table(elf, elf_file__section(elf, SHT_DYNSYM, NULL), c);
	if (!err && symtab) {
		err = scan_table(elf, elf_file__section(elf, SHT_SYMTAB, NULL), c);
		c->symtab_read = true;
	}
	if (err) {
		node_consts__free(c);
		return err;
	}
	if (!c->nr)
		return 0;
	/* Sorted for lookups, each name once: its first definition. */
	qsort(c->v, c->nr, sizeof(*c->v), by_name_then_order);
	for (size_t i = 0; i < c->nr; i++)
		if (!out || strcmp(c->v[out - 1].name, c->v[i].name))
			c->v[out++] = c->v[i];
	c->nr = out;
	return 0;
}

void node_consts__free(struct node_consts *c)
{
	free(c->v);
	c->v = NULL;
	c->nr = c->cap = 0;
}

bool node_consts__get(const struct node_consts *c, const char *name, int32_t *v)
{
	size_t lo = 0, hi = c->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int d = strcmp(name, c->v[mid].name);

		if (!d) {
			*v = c->v[mid].value;
			return true;
		}
		if (d < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return false;
}

/* A number of 1-3 digits at s (before end): its value and the byte after it, or -1. */
static int number(const char *s, const char *end, const char **after)
{
	int v = 0, digits = 0;

	while (s < end && *s >= '0' && *s <= '9' && digits < 4) {
		v = v * 10 + (*s++ - '0');
		digits++;
	}
	*after = s;
	return digits && digits < 4 ? v : -1;
}

/*
 * Node's version is in strings built from NODE_VERSION at compile time:
 * the inspector's "node.js/vX.Y.Z" (its /json/version Browser field) and
 * process.release's "/node-vX.Y.Z.tar.gz" (official builds). NODE_VERSION
 * itself leaves no string of its own (a short std::string's initializer
 * is code, not data). Every occurrence must agree.
 */
static const char *const version_markers[] = { "node.js/v", "/node-v" };

/* X.Y.Z at p (before end), not followed by another digit or dot: 0 or -1. */
static int parse_version(const char *p, const char *end, int v[3])
{
	const char *q = p;

	for (int i = 0; i < 3; i++) {
		v[i] = number(q, end, &q);
		if (v[i] < 0 || (i < 2 && (q >= end || *q++ != '.')))
			return -1;
	}
	if (q < end && ((*q >= '0' && *q <= '9') || (*q == '.' && q + 1 < end && q[1] >= '0' &&
						      q[1] <= '9')))
		return -1;
	return v[0] >= 1 ? 0 : -1;
}

int node_elf__rodata_version(Elf *elf, int *major, int *minor, int *patch)
{
	Elf_Scn *scn = elf_file__section(elf, SHT_PROGBITS, ".rodata");
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	const char *start, *end;
	int found = 0;

	if (!data || !data->d_buf)
		return -ENOENT;
	start = data->d_buf;
	end = start + (data->d_size < RODATA_SCAN_MAX ? data->d_size : RODATA_SCAN_MAX);
	for (size_t m = 0; m < sizeof(version_markers) / sizeof(version_markers[0]); m++) {
		size_t mlen = strlen(version_markers[m]);
		const char *p = start;

		while ((p = memmem(p, (size_t)(end - p), version_markers[m], mlen))) {
			int v[3];

			p += mlen;
			if (parse_version(p, end, v))
				continue;
			if (found && (v[0] != *major || v[1] != *minor || v[2] != *patch))
				return -ENOENT;
			*major = v[0];
			*minor = v[1];
			*patch = v[2];
			found = 1;
		}
	}
	return found ? 0 : -ENOENT;
}

bool node_elf__is_libnode(Elf *elf)
{
	char soname[64];

	elf_file__soname(elf, soname, sizeof(soname));
	return !strncmp(soname, "libnode.so", 10);
}
