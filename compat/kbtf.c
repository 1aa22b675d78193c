// SPDX-License-Identifier: GPL-2.0
#include "compat/kbtf.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/btf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Kinds newer than some UAPI headers (the numbers are ABI). */
#ifndef BTF_KIND_FLOAT
#define BTF_KIND_FLOAT 16	/* 5.13 */
#endif
#ifndef BTF_KIND_DECL_TAG
#define BTF_KIND_DECL_TAG 17	/* 5.16 */
#endif
#ifndef BTF_KIND_TYPE_TAG
#define BTF_KIND_TYPE_TAG 18	/* 5.17 */
#endif
#ifndef BTF_KIND_ENUM64
#define BTF_KIND_ENUM64 19	/* 6.0 */
#endif
#define ENUM64_SIZE 12		/* struct btf_enum64: name_off, val_lo32, val_hi32 */

/* Anonymous structs looked into, and typedef/qualifier links followed, at most. */
#define MAX_ANON_DEPTH 3
#define MAX_LINKS 32
#define CHUNK 65536

struct kbtf {
	const char *file;
	int fd;
	uint64_t types, types_len;	/* file offsets of the two sections, and lengths */
	uint64_t strs, strs_len;
	uint32_t *index;		/* type id -> file offset of its record (ids from 1) */
	uint32_t nr;			/* ids 1..nr - 1 */
	char *why;
	size_t len;
};

static int fail(struct kbtf *k, int err, const char *what)
{
	snprintf(k->why, k->len, "%s: %s", k->file, what);
	return err;
}

/* n bytes at off: sysfs gives at most a page a read. */
static int pread_all(const struct kbtf *k, void *buf, size_t n, uint64_t off)
{
	for (size_t done = 0; done < n;) {
		ssize_t got = pread(k->fd, (char *)buf + done, n - done, (off_t)(off + done));

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return -EINVAL;
		done += (size_t)got;
	}
	return 0;
}

/* Bytes after a type record of t's kind; -1 for a kind this does not know. */
static long extra_size(const struct btf_type *t)
{
	long vlen = BTF_INFO_VLEN(t->info);

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
		return 4;
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return 0;
	case BTF_KIND_ARRAY:
		return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return vlen * (long)sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return vlen * (long)sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO:
		return vlen * (long)sizeof(struct btf_param);
	case BTF_KIND_DATASEC:
		return vlen * (long)sizeof(struct btf_var_secinfo);
	case BTF_KIND_ENUM64:
		return vlen * ENUM64_SIZE;
	default:
		return -1;
	}
}

static int read_header(struct kbtf *k)
{
	struct btf_header h;
	struct stat st;

	if (fstat(k->fd, &st) || !S_ISREG(st.st_mode))
		return fail(k, -EINVAL, "not a regular file");
	if (pread_all(k, &h, sizeof(h), 0) || h.magic != BTF_MAGIC)
		return fail(k, -EINVAL, "no BTF header of this byte order");
	if (h.hdr_len < sizeof(h) || h.type_len % 4 ||
	    (uint64_t)h.hdr_len + h.type_off + h.type_len > (uint64_t)st.st_size ||
	    (uint64_t)h.hdr_len + h.str_off + h.str_len > (uint64_t)st.st_size)
		return fail(k, -EINVAL, "sections beyond the file's end");
	/* The index holds 32-bit file offsets. */
	if ((uint64_t)h.hdr_len + h.type_off + h.type_len > UINT32_MAX)
		return fail(k, -EINVAL, "types beyond 4 GB");
	k->types = (uint64_t)h.hdr_len + h.type_off;
	k->types_len = h.type_len;
	k->strs = (uint64_t)h.hdr_len + h.str_off;
	k->strs_len = h.str_len;
	return 0;
}

/*
 * One pass over the type records: where each starts, and the ids of the
 * structs whose name begins at one of the string offsets names[0..nr_names).
 */
static int index_types(struct kbtf *k, const uint32_t *names, unsigned int nr_names,
		       uint32_t *strct)
{
	unsigned char *buf = malloc(CHUNK);
	uint64_t pos = 0, have = 0, base = 0;	/* buf holds [base, base + have) */
	int err = 0;

	*strct = 0;
	k->index = calloc(k->types_len / sizeof(struct btf_type) + 2, sizeof(*k->index));
	if (!buf || !k->index) {
		free(buf);
		return fail(k, -ENOMEM, "out of memory");
	}
	k->nr = 1;
	while (!err && pos < k->types_len) {
		struct btf_type t;
		long extra;

		if (pos + sizeof(t) > base + have) {
			/* Refill from pos: a record's head is never split. */
			base = pos;
			have = k->types_len - pos < CHUNK ? k->types_len - pos : CHUNK;
			if (have < sizeof(t) || pread_all(k, buf, have, k->types + base)) {
				err = fail(k, -EINVAL, "a type record cut short");
				break;
			}
		}
		memcpy(&t, buf + (pos - base), sizeof(t));
		extra = extra_size(&t);
		if (extra < 0 || pos + sizeof(t) + (uint64_t)extra > k->types_len) {
			err = fail(k, -EINVAL, extra < 0 ? "a type of unknown kind" :
							   "a type record cut short");
			break;
		}
		k->index[k->nr] = (uint32_t)(k->types + pos);
		if (BTF_INFO_KIND(t.info) == BTF_KIND_STRUCT && !*strct)
			for (unsigned int i = 0; i < nr_names; i++)
				if (t.name_off == names[i])
					*strct = k->nr;
		k->nr++;
		pos += sizeof(t) + (uint64_t)extra;
	}
	free(buf);
	return err;
}

/* The string offsets where name is, at most max of them. Returns how many, or -errno. */
static int find_string(struct kbtf *k, const char *name, uint32_t *offs, unsigned int max)
{
	unsigned char *buf = malloc(CHUNK);
	size_t want = strlen(name), matched = 0;
	uint64_t start = 0;
	unsigned int n = 0;
	bool same = true;

	if (!buf)
		return fail(k, -ENOMEM, "out of memory");
	for (uint64_t base = 0; base < k->strs_len && n < max; base += CHUNK) {
		uint64_t have = k->strs_len - base < CHUNK ? k->strs_len - base : CHUNK;

		if (pread_all(k, buf, have, k->strs + base)) {
			free(buf);
			return fail(k, -EINVAL, "its strings cut short");
		}
		for (uint64_t i = 0; i < have && n < max; i++) {
			if (buf[i] == '\0') {
				if (same && matched == want)
					offs[n++] = (uint32_t)start;
				start = base + i + 1;
				matched = 0;
				same = true;
			} else if (same) {
				same = matched < want && (unsigned char)name[matched] == buf[i];
				matched++;
			}
		}
	}
	free(buf);
	return (int)n;
}

static int read_type(const struct kbtf *k, uint32_t id, struct btf_type *t)
{
	if (id == 0 || id >= k->nr)
		return -EINVAL;
	return pread_all(k, t, sizeof(*t), k->index[id]);
}

/* *id through typedefs and qualifiers to the type they name, read into t. */
static int resolve(struct kbtf *k, uint32_t *id, struct btf_type *t)
{
	for (int i = 0; i < MAX_LINKS; i++) {
		if (read_type(k, *id, t))
			return fail(k, -EINVAL, "a member's type is not in the file");
		switch (BTF_INFO_KIND(t->info)) {
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_CONST:
		case BTF_KIND_RESTRICT:
		case BTF_KIND_TYPE_TAG:
			*id = t->type;
			break;
		default:
			return 0;
		}
	}
	return fail(k, -EINVAL, "a loop of typedefs");
}

/* Whether the string at name_off is name. */
static bool name_is(const struct kbtf *k, uint32_t name_off, const char *name)
{
	size_t n = strlen(name) + 1;
	char buf[128];

	if (n > sizeof(buf) || name_off >= k->strs_len || k->strs_len - name_off < n)
		return false;
	return !pread_all(k, buf, n, k->strs + name_off) && !memcmp(buf, name, n);
}

/*
 * Member name of the struct or union *id: its bit offset added to *bits and
 * *id set to its type. Anonymous members are looked into.
 */
static int find_member(struct kbtf *k, uint32_t *id, const char *name, int depth, uint64_t *bits)
{
	struct btf_member *m = NULL;
	struct btf_type t;
	uint32_t vlen;
	bool kflag;
	int err = resolve(k, id, &t);

	if (err)
		return err;
	if (BTF_INFO_KIND(t.info) != BTF_KIND_STRUCT && BTF_INFO_KIND(t.info) != BTF_KIND_UNION)
		return fail(k, -EINVAL, "a member path through a type that is no struct");
	vlen = BTF_INFO_VLEN(t.info);
	kflag = BTF_INFO_KFLAG(t.info);
	m = calloc(vlen ? vlen : 1, sizeof(*m));
	if (!m)
		return fail(k, -ENOMEM, "out of memory");
	err = pread_all(k, m, vlen * sizeof(*m), k->index[*id] + sizeof(t)) ? -EINVAL : -ENOENT;
	for (uint32_t i = 0; err == -ENOENT && i < vlen; i++) {
		uint64_t bit = kflag ? BTF_MEMBER_BIT_OFFSET(m[i].offset) : m[i].offset, inner = 0;
		uint32_t type = m[i].type;

		if (m[i].name_off && name_is(k, m[i].name_off, name)) {
			if (kflag && BTF_MEMBER_BITFIELD_SIZE(m[i].offset))
				err = fail(k, -EINVAL, "the member is a bitfield");
			else
				err = 0;
		} else if (!m[i].name_off && depth < MAX_ANON_DEPTH) {
			struct btf_type anon;

			if (resolve(k, &type, &anon))
				err = -EINVAL;
			else if (BTF_INFO_KIND(anon.info) == BTF_KIND_STRUCT ||
				 BTF_INFO_KIND(anon.info) == BTF_KIND_UNION)
				err = find_member(k, &type, name, depth + 1, &inner);
		}
		if (!err) {
			*bits += bit + inner;
			*id = type;
		}
	}
	if (err == -EINVAL && !k->why[0])
		fail(k, err, "a struct's members cut short");
	free(m);
	return err;
}

/* The size of type id (through typedefs): integers, enums, structs, unions, pointers. */
static int type_size(struct kbtf *k, uint32_t id, uint32_t *size)
{
	struct btf_type t;
	int err = resolve(k, &id, &t);

	if (err)
		return err;
	switch (BTF_INFO_KIND(t.info)) {
	case BTF_KIND_INT:
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		*size = t.size;
		return 0;
	case BTF_KIND_PTR:
		*size = sizeof(void *);	/* the kernel's: this build's architecture */
		return 0;
	default:
		return fail(k, -EINVAL, "a member of a type whose size is not said");
	}
}

int kbtf__member(const char *file, const char *strct, const char *const *path, unsigned int nr,
		 uint32_t *offset, uint32_t *size, char *why, size_t len)
{
	struct kbtf k = { .file = file, .why = why, .len = len };
	uint32_t names[8], id = 0;
	uint64_t bits = 0;
	int err, n;

	why[0] = '\0';
	if (nr == 0 || nr > KBTF_MAX_PATH)
		return -EINVAL;
	k.fd = open(file, O_RDONLY | O_CLOEXEC);
	if (k.fd < 0) {
		err = -errno;
		snprintf(why, len, "%s: %s", file, strerror(errno));
		return err;
	}
	err = read_header(&k);
	n = err ? 0 : find_string(&k, strct, names, sizeof(names) / sizeof(names[0]));
	if (!err && n < 0)
		err = n;
	if (!err)
		err = index_types(&k, names, (unsigned int)n, &id);
	if (!err && !id)
		err = fail(&k, -ENOENT, "no such struct");
	for (unsigned int i = 0; !err && i < nr; i++) {
		err = find_member(&k, &id, path[i], 0, &bits);
		if (err == -ENOENT)
			snprintf(why, len, "%s: struct %s has no member %s", file, strct, path[i]);
	}
	if (!err && bits % 8)
		err = fail(&k, -EINVAL, "the member does not start on a byte");
	if (!err)
		err = type_size(&k, id, size);
	if (!err && bits / 8 > UINT32_MAX)
		err = fail(&k, -EINVAL, "an offset beyond 4 GB");
	if (!err)
		*offset = (uint32_t)(bits / 8);
	free(k.index);
	close(k.fd);
	return err;
}
