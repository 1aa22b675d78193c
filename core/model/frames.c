// SPDX-License-Identifier: GPL-2.0
/*
 * The resolver's frames: each distinct frame keyed (by address space and
 * address, or by file and offset), symbolized once when first met, with
 * its mapping and, from DWARF, its source line and inlined calls.
 */
#include "core/model/resolve_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/agg/stack.h"

/* The kernel's half of the address space, as pprof tools expect it. */
#define KERNEL_MAPPING_START 0xffff800000000000ULL

/* The space of vdso frames keyed by their offset: every process maps the kernel's one image. */
static const char vdso_space;

struct mapping_key {
	uint64_t space_id;	/* the address space's id + 1 (see frame_key); 0: the kernel */
	uint64_t start, end, pgoff, ino;
};

/* An address space as the resolver's keys name it: by id, never reused. */
static uint32_t space_id(const struct addr_space *as)
{
	return as ? as->id + 1 : 0;
}

struct frame_query {
	const struct resolver *r;
	const struct frame_key *key;
};

static bool frame_match(const void *ctx, uint32_t id)
{
	const struct frame_query *q = ctx;

	return !memcmp(&q->r->keys[id], q->key, sizeof(*q->key));
}

static uint64_t mapping_hash(const void *k)
{
	return hash_bytes(k, sizeof(struct mapping_key), 0);
}

static bool mapping_equal(const void *a, const void *b)
{
	return !memcmp(a, b, sizeof(struct mapping_key));
}

static void free_keys(struct hashmap *map)
{
	struct hashmap_entry *ent;
	size_t bkt;

	hashmap__for_each(map, bkt, ent)
		free((void *)ent->key);
	hashmap__clear(map);
}

void resolver__init_frames(struct resolver *r)
{
	idtable__init(&r->frames);
	hashmap__init(&r->mappings, mapping_hash, mapping_equal);
}

void resolver__forget_frames(struct resolver *r)
{
	free(r->keys);
	r->keys = NULL;
	r->cap_keys = 0;
	idtable__clear(&r->frames);
	free_keys(&r->mappings);
	memset(r->memo, 0, sizeof(r->memo));
}

/* Remember key -> idx (a copy of key). */
static void remember(struct resolver *r, struct hashmap *map, const void *key, size_t size,
		     int idx)
{
	void *copy = malloc(size);

	if (copy)
		memcpy(copy, key, size);
	if (!copy || hashmap__add(map, copy, (void *)(uintptr_t)(idx + 1))) {
		free(copy);
		r->oom = true;
	}
}

static uint64_t key_hash(const struct frame_key *key)
{
	return hash_bytes(key, sizeof(*key), 0);
}

/* Frame idx is key's from now on. */
static void remember_frame(struct resolver *r, const struct frame_key *key, int idx)
{
	if ((size_t)idx >= r->cap_keys) {
		size_t cap = r->cap_keys ? r->cap_keys : 256;
		struct frame_key *keys;

		while (cap <= (size_t)idx)
			cap *= 2;
		keys = realloc(r->keys, cap * sizeof(*keys));
		if (!keys) {
			r->oom = true;
			return;
		}
		/*
		 * Not zeroed: a key is read only through the frame index, which
		 * takes its index after the whole key is written (frame_key
		 * zeroes its padding), so the half not used yet is not resident
		 * (zeroing it held up to half the array in RSS that -v's bytes
		 * for stacks did not count).
		 */
		r->keys = keys;
		r->cap_keys = cap;
	}
	/* Padding too: keys are compared whole. */
	memcpy(&r->keys[idx], key, sizeof(*key));
	if (idtable__add(&r->frames, key_hash(key), (uint32_t)idx))
		r->oom = true;
}

const char *resolver__intern(struct resolver *r, const char *s)
{
	const char *copy;

	if (!s)
		return NULL;
	copy = profile__intern(&r->prof, s);
	r->oom |= !copy;
	return copy;
}

/*
 * The key of a profile mapping's content, in the same table as the
 * address spaces' keys: space_id all ones less the interned build-id's
 * address (above any space's id + 1), ino the interned file name's.
 */
static struct mapping_key mapping_content_key(const struct profile_mapping *pm)
{
	struct mapping_key k;

	memset(&k, 0, sizeof(k));
	k.space_id = UINT64_MAX - (uint64_t)(uintptr_t)pm->build_id;
	k.start = pm->start;
	k.end = pm->limit;
	k.pgoff = pm->offset;
	k.ino = (uint64_t)(uintptr_t)pm->file;
	return k;
}

/* 1 + the index of the profile mapping for key (created from m or as the kernel's), 0 on failure. */
static uint32_t mapping_index(struct resolver *r, const struct mapping_key *key,
			      const struct addr_space *as, const struct mapping *m)
{
	uintptr_t found = (uintptr_t)hashmap__find(&r->mappings, key);
	struct profile_mapping pm = { 0 };
	struct mapping_key content;
	int idx;

	if (found)
		return (uint32_t)found;
	if (m) {
		pm.start = m->start;
		pm.limit = m->end;
		pm.offset = m->pgoff;
		pm.file = resolver__intern(r, m->path);
		pm.build_id = resolver__intern(r, symbolizer__build_id(r->sym, as, m));
	} else {
		pm.start = KERNEL_MAPPING_START;
		pm.limit = UINT64_MAX;
		pm.file = resolver__intern(r, "[kernel.kallsyms]");
	}
	/*
	 * One profile mapping for what reads the same: a process's image
	 * before and after a change (a sample resolved by its own time's
	 * image, as the bpf backend's first stack copies are) is another
	 * address space with the same mapping, which made pprof two Mappings
	 * of one file and split its Locations between them.
	 */
	content = mapping_content_key(&pm);
	found = (uintptr_t)hashmap__find(&r->mappings, &content);
	if (found) {
		remember(r, &r->mappings, key, sizeof(*key), (int)found - 1);
		return (uint32_t)found;
	}
	idx = profile__add_mapping(&r->prof, &pm);
	if (idx < 0) {
		r->oom = true;
		return 0;
	}
	remember(r, &r->mappings, key, sizeof(*key), idx);
	remember(r, &r->mappings, &content, sizeof(content), idx);
	return (uint32_t)idx + 1;
}

static uint32_t user_mapping(struct resolver *r, const struct addr_space *as, uint64_t addr)
{
	const struct mapping *m = as ? addr_space__find(as, addr) : NULL;
	struct mapping_key key;

	if (!m)
		return 0;
	memset(&key, 0, sizeof(key));
	key.space_id = space_id(as);
	key.start = m->start;
	key.end = m->end;
	key.pgoff = m->pgoff;
	key.ino = m->ino;
	return mapping_index(r, &key, as, m);
}

static uint32_t kernel_mapping(struct resolver *r)
{
	struct mapping_key key;

	memset(&key, 0, sizeof(key));
	return mapping_index(r, &key, NULL, NULL);
}

static void set_source(struct resolver *r, struct profile_frame *f, const struct src_frame *src)
{
	f->file = resolver__intern(r, src->file);
	f->line = src->line;
	/*
	 * Code with no function DIE (assembly: glibc's string functions) has
	 * no declaration: its function is named where its lines are, as
	 * addr2line does (pprof's Function.filename was empty for it).
	 */
	f->func_file = resolver__intern(r, src->decl_file ? src->decl_file : src->file);
	f->func_line = src->decl_line;
}

/*
 * The functions inlined at a user frame's address (ip in as) go into the
 * profile just before it (see profile_frame.nr_inline); the frame gets its
 * own line.
 */
static int add_source(struct resolver *r, const struct addr_space *as, uint64_t ip, bool caller,
		      struct profile_frame *f)
{
	struct src_frame src[DWARF_MAX_FRAMES];
	unsigned int n;

	if (ip == STACK_TRUNCATED_IP || ip == STACK_GO_SWITCH_IP)
		return 0;
	n = symbolizer__user_source(r->sym, as, stack__lookup_addr(ip, caller), src,
				    DWARF_MAX_FRAMES);
	for (unsigned int i = 0; i + 1 < n; i++) {
		struct profile_frame in = { .address = f->address,
					    .kind = FRAME_INLINE,
					    .caller = f->caller,
					    .mapping = f->mapping,
					    .module = f->module };

		in.name = resolver__intern(r, src[i].function);
		set_source(r, &in, &src[i]);
		if (r->oom || profile__add_frame(&r->prof, &in) < 0)
			return -ENOMEM;
	}
	if (n) {
		set_source(r, f, &src[n - 1]);
		f->nr_inline = (uint8_t)(n - 1);
		/* A binary without symbols whose DWARF names the function. */
		if (!f->name)
			f->name = resolver__intern(r, src[n - 1].function);
	}
	return r->oom ? -ENOMEM : 0;
}

/*
 * The profile frame for key, symbolized now from ip as sampled in as (for a
 * frame keyed by its file, any process that maps the file there). Returns
 * its index, or -ENOMEM.
 */
static int resolve_frame(struct resolver *r, const struct frame_key *key,
			 const struct addr_space *as, uint64_t ip)
{
	struct profile_frame f = { .address = ip, .kind = key->kind, .caller = key->caller };
	struct frame_sym fs = { 0 };
	int idx;

	switch (key->kind) {
	case FRAME_KERNEL:
		symbolizer__kernel(r->sym, stack__lookup_addr(ip, key->caller), &fs);
		f.mapping = kernel_mapping(r);
		break;
	case FRAME_USER:
		symbolizer__user_frame(r->sym, as, ip, key->caller, &fs);
		/* Mappings are of one process: a frame of many has none (no writer shows it). */
		if (!key->by_file)
			f.mapping = user_mapping(r, as, stack__lookup_addr(ip, key->caller));
		break;
	default:
		/* A placeholder for a stack the kernel could not store. */
		fs.name = key->caller ? "[Missed Kernel Stack]" : "[Missed User Stack]";
		f.address = 0;
		break;
	}
	f.name = resolver__intern(r, fs.name);
	f.module = resolver__intern(r, fs.module);
	f.offset = fs.offset;
	if (key->kind == FRAME_USER && r->spec.source_lines &&
	    add_source(r, as, ip, key->caller, &f))
		return -ENOMEM;
	if (r->oom)
		return -ENOMEM;
	idx = profile__add_frame(&r->prof, &f);
	if (idx < 0)
		return idx;
	remember_frame(r, key, idx);
	return r->oom ? -ENOMEM : idx;
}

static void frame_key(struct frame_key *key, const void *space, uint64_t ip, enum frame_kind kind,
		      bool caller)
{
	memset(key, 0, sizeof(*key));
	key->space = space;
	key->ip = ip;
	key->kind = kind;
	key->caller = caller;
}

/* The identity of the file m maps in as (symbolizer__file_of), remembered a while. */
static const void *file_of(struct resolver *r, const struct addr_space *as,
			   const struct mapping *m)
{
	struct file_memo *fm = &r->memo[hash_u64((uint64_t)space_id(as) ^ m->start) &
					(FILE_MEMO_SLOTS - 1)];
	const void *file;

	if (fm->file && fm->space_id == space_id(as) && fm->generation == as->generation &&
	    fm->start == m->start && fm->end == m->end && fm->pgoff == m->pgoff)
		return fm->file;
	file = symbolizer__file_of(r->sym, as, m);
	if (file)
		*fm = (struct file_memo){ .space_id = space_id(as),
					  .generation = as->generation,
					  .start = m->start,
					  .end = m->end,
					  .pgoff = m->pgoff,
					  .file = file };
	return file;
}

/*
 * The key of user frame `index` (0 is the leaf) of a stack of as. With
 * frames_by_file, a frame in a file (or the vdso) is keyed by the file and
 * the offset, and the markers by themselves: they name alike in every
 * process. Anything else (JIT code, which a process's own perf map names;
 * an address no mapping holds) stays its process's.
 */
static void user_key(struct resolver *r, struct frame_key *key, const struct addr_space *as,
		     uint64_t ip, unsigned int index)
{
	const struct mapping *m;
	const void *file;

	frame_key(key, NULL, ip, FRAME_USER, index > 0);
	key->space_id = space_id(as);
	if (!r->spec.frames_by_file)
		return;
	if (ip == STACK_TRUNCATED_IP || ip == STACK_GO_SWITCH_IP) {
		key->space_id = 0;
		return;
	}
	m = as ? addr_space__find(as, stack__lookup_addr(ip, index)) : NULL;
	if (!m) {
		/*
		 * An address no mapping holds (often a frame-pointer walk through
		 * code built without them) prints [unknown] in every process: one
		 * frame, not one per process and address, unless the process's JIT
		 * map may name it.
		 */
		if (!symbolizer__has_jit_map(r->sym, as)) {
			key->space_id = 0;
			key->ip = 0;
			key->by_file = 1;
		}
		return;
	}
	if (mapping__is_file(m)) {
		file = file_of(r, as, m);
		if (!file)
			return;
		key->space = file;
		key->space_id = 0;
		key->ip = ip - m->start + m->pgoff;
		key->by_file = 1;
	} else if (!strcmp(m->path, "[vdso]")) {
		key->space = &vdso_space;
		key->space_id = 0;
		key->ip = ip - m->start;
		key->by_file = 1;
	}
}

/* Index of the frame, resolved now (from ip in as) if it has not been. */
static int frame_index(struct resolver *r, const struct frame_key *key,
		       const struct addr_space *as, uint64_t ip)
{
	int64_t found = idtable__find(&r->frames, key_hash(key), frame_match,
				      &(struct frame_query){ r, key });

	return found >= 0 ? (int)found : resolve_frame(r, key, as, ip);
}

int resolver__kernel_frame_index(struct resolver *r, uint64_t ip, unsigned int index)
{
	struct frame_key key;

	frame_key(&key, NULL, ip, FRAME_KERNEL, index > 0);
	return frame_index(r, &key, NULL, ip);
}

int resolver__user_frame_index(struct resolver *r, const struct addr_space *as, uint64_t ip,
			    unsigned int index)
{
	struct frame_key key;

	user_key(r, &key, as, ip, index);
	return frame_index(r, &key, as, ip);
}

/* The placeholder of a missed kernel or user stack. */
int resolver__missed_frame_index(struct resolver *r, bool kernel)
{
	struct frame_key key;

	/* The marker's caller flag tells the kernel's placeholder from the user's. */
	frame_key(&key, NULL, 0, FRAME_MISSED, kernel);
	return frame_index(r, &key, NULL, 0);
}

/*
 * Whether a user frame's name is final: its mapping is known and is a
 * file or the vdso. Memory without a file is JIT code, whose perf map may
 * still grow; an address without a mapping may get one from a later
 * side-band record. Neither happens to a settled image: its process ended
 * long ago.
 */
bool resolver__user_frame_final(const struct addr_space *as, uint64_t ip, unsigned int index)
{
	const struct mapping *m;

	if (ip == STACK_TRUNCATED_IP || ip == STACK_GO_SWITCH_IP || (as && as->settled))
		return true;
	m = as ? addr_space__find(as, stack__lookup_addr(ip, index)) : NULL;
	return m && (mapping__is_file(m) || !strcmp(m->path, "[vdso]"));
}

int resolver__named_frame_index(struct resolver *r, enum frame_kind kind, const char *name,
				const char *file, const char *module, uint32_t line,
				uint32_t first_line)
{
	struct profile_frame f = { .kind = kind, .line = line, .func_line = first_line };
	const char *id;
	struct frame_key key;
	int64_t found;
	char *joined;
	int idx;

	/* The key's space: one pooled string per name, file and module. */
	if (asprintf(&joined, "%s\x1f%s\x1f%s", name ? name : "", file ? file : "",
		     module ? module : "") < 0)
		return -ENOMEM;
	id = resolver__intern(r, joined);
	free(joined);
	if (!id)
		return -ENOMEM;
	frame_key(&key, id, ((uint64_t)first_line << 32) | line, kind, false);
	found = idtable__find(&r->frames, key_hash(&key), frame_match,
			      &(struct frame_query){ r, &key });
	if (found >= 0)
		return (int)found;
	f.name = resolver__intern(r, name);
	f.file = resolver__intern(r, file);
	f.func_file = f.file;
	f.module = resolver__intern(r, module);
	if (r->oom)
		return -ENOMEM;
	idx = profile__add_frame(&r->prof, &f);
	if (idx < 0)
		return idx;
	remember_frame(r, &key, idx);
	return r->oom ? -ENOMEM : idx;
}
