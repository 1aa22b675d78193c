// SPDX-License-Identifier: GPL-2.0
#include "core/model/resolve.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/agg/stack.h"
#include "core/lib/clock.h"
#include "core/lib/interrupt.h"

/* Frames of one stack at most: kernel (and a marker), user with their inlined calls. */
#define MAX_RESOLVED_FRAMES (2 * MAX_STACK_DEPTH + 3 + MAX_STACK_DEPTH * (DWARF_MAX_FRAMES - 1))

/* The kernel's half of the address space, as pprof tools expect it. */
#define KERNEL_MAPPING_START 0xffff800000000000ULL

/*
 * One distinct frame: a Location in pprof's terms. Zeroed whole: padding is
 * hashed. A user frame is one per address of an address space, or, where
 * no writer prints addresses (spec.frames_by_file), one per offset into a
 * file, whatever the process: every compiler process maps cc1 and libc at
 * its own addresses, but names them alike.
 */
struct frame_key {
	/*
	 * A user frame's file's identity (by_file, from the symbolizer) or
	 * &vdso_space; NULL for other frames.
	 */
	const void *space;
	uint64_t ip;		/* as sampled; by_file: its offset into the file (or the vdso) */
	uint8_t kind;
	uint8_t caller;
	uint8_t by_file;
	uint8_t zero;		/* keys are hashed and compared whole: no unnamed padding */
	/*
	 * A user frame not by_file: its address space's id + 1 (not its
	 * address: images of ended processes are freed, and another may take
	 * the address); 0 for other frames.
	 */
	uint32_t space_id;
};

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

/*
 * The file identity of recently seen mappings, so that keying a frame by
 * its file costs a look here rather than the symbolizer's file check (a
 * stat) each time. Direct-mapped: bounded, whatever the number of processes.
 */
#define FILE_MEMO_SLOTS 1024

struct file_memo {
	uint32_t space_id;		/* space_id() of the address space */
	unsigned int generation;	/* of its maps */
	uint64_t start, end, pgoff;
	const void *file;		/* NULL: a free slot */
};

struct resolver {
	struct symbolizer *sym;
	struct resolve_spec spec;
	struct profile prof;		/* frames, mappings, stacks and strings so far */
	struct frame_key *keys;		/* frame i's key (inlined calls have none) */
	size_t cap_keys;
	struct idtable frames;		/* frame indexes by key */
	struct hashmap mappings;	/* struct mapping_key * -> index + 1 */
	/*
	 * Stacks by the frames they hold, so that the many stacks that differ
	 * only by pid (a new process each) share one run of stack_frames.
	 */
	struct idtable runs;
	struct file_memo memo[FILE_MEMO_SLOTS];
	/* Ids of the agg entries prepare left raw: their names were not final yet. */
	size_t *pending;
	size_t nr_pending, cap_pending;
	bool oom;
};

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

struct resolver *resolver__new(struct symbolizer *sym, const struct resolve_spec *spec)
{
	struct resolver *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->sym = sym;
	r->spec = *spec;
	r->spec.source_lines |= spec->inline_frames;
	if (r->spec.source_lines)
		symbolizer__want_source(sym);
	profile__init(&r->prof);
	idtable__init(&r->frames);
	hashmap__init(&r->mappings, mapping_hash, mapping_equal);
	idtable__init(&r->runs);
	return r;
}

static void free_keys(struct hashmap *map)
{
	struct hashmap_entry *ent;
	size_t bkt;

	hashmap__for_each(map, bkt, ent)
		free((void *)ent->key);
	hashmap__clear(map);
}

/* What the resolver keeps to build the profile, once it has moved out. */
static void forget_all(struct resolver *r)
{
	free(r->keys);
	r->keys = NULL;
	r->cap_keys = 0;
	idtable__clear(&r->frames);
	free_keys(&r->mappings);
	idtable__clear(&r->runs);
	memset(r->memo, 0, sizeof(r->memo));
	free(r->pending);
	r->pending = NULL;
	r->nr_pending = r->cap_pending = 0;
}

void resolver__free(struct resolver *r)
{
	if (!r)
		return;
	forget_all(r);
	profile__fini(&r->prof);
	free(r);
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

static const char *intern(struct resolver *r, const char *s)
{
	const char *copy;

	if (!s)
		return NULL;
	copy = profile__intern(&r->prof, s);
	r->oom |= !copy;
	return copy;
}

/* 1 + the index of the profile mapping for key (created from m or as the kernel's), 0 on failure. */
static uint32_t mapping_index(struct resolver *r, const struct mapping_key *key,
			      const struct addr_space *as, const struct mapping *m)
{
	uintptr_t found = (uintptr_t)hashmap__find(&r->mappings, key);
	struct profile_mapping pm = { 0 };
	int idx;

	if (found)
		return (uint32_t)found;
	if (m) {
		pm.start = m->start;
		pm.limit = m->end;
		pm.offset = m->pgoff;
		pm.file = intern(r, m->path);
		pm.build_id = intern(r, symbolizer__build_id(r->sym, as, m));
	} else {
		pm.start = KERNEL_MAPPING_START;
		pm.limit = UINT64_MAX;
		pm.file = intern(r, "[kernel.kallsyms]");
	}
	idx = profile__add_mapping(&r->prof, &pm);
	if (idx < 0) {
		r->oom = true;
		return 0;
	}
	remember(r, &r->mappings, key, sizeof(*key), idx);
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
	f->file = intern(r, src->file);
	f->line = src->line;
	f->func_file = intern(r, src->decl_file);
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

		in.name = intern(r, src[i].function);
		set_source(r, &in, &src[i]);
		if (r->oom || profile__add_frame(&r->prof, &in) < 0)
			return -ENOMEM;
	}
	if (n) {
		set_source(r, f, &src[n - 1]);
		f->nr_inline = (uint8_t)(n - 1);
		/* A binary without symbols whose DWARF names the function. */
		if (!f->name)
			f->name = intern(r, src[n - 1].function);
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
	f.name = intern(r, fs.name);
	f.module = intern(r, fs.module);
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

static int kernel_frame_index(struct resolver *r, uint64_t ip, unsigned int index)
{
	struct frame_key key;

	frame_key(&key, NULL, ip, FRAME_KERNEL, index > 0);
	return frame_index(r, &key, NULL, ip);
}

static int user_frame_index(struct resolver *r, const struct addr_space *as, uint64_t ip,
			    unsigned int index)
{
	struct frame_key key;

	user_key(r, &key, as, ip, index);
	return frame_index(r, &key, as, ip);
}

/* The placeholder of a missed kernel or user stack. */
static int missed_frame_index(struct resolver *r, bool kernel)
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
static bool user_frame_final(const struct addr_space *as, uint64_t ip, unsigned int index)
{
	const struct mapping *m;

	if (ip == STACK_TRUNCATED_IP || ip == STACK_GO_SWITCH_IP || (as && as->settled))
		return true;
	m = as ? addr_space__find(as, stack__lookup_addr(ip, index)) : NULL;
	return m && (mapping__is_file(m) || !strcmp(m->path, "[vdso]"));
}

/* The columns of a kind of profile, and each stack's values in them. */
static void set_columns(struct profile *p, const struct resolve_spec *spec)
{
	switch (spec->kind) {
	case PROFILE_OFF_CPU:
		p->columns[0] = (struct profile_column){ "off-cpu", "microseconds", true };
		p->nr_columns = 1;
		break;
	case PROFILE_WALL:
		p->columns[0] = (struct profile_column){ "cpu", "microseconds", true };
		p->columns[1] = (struct profile_column){ "off-cpu", "microseconds", true };
		p->nr_columns = 2;
		p->period = spec->period_ns / 1000;
		break;
	default:
		/* cpu-clock counts nanoseconds: a sample stands for its period. */
		p->columns[0] = (struct profile_column){ "samples", "count", true };
		p->columns[1] = (struct profile_column){ "cpu", "nanoseconds", false };
		p->nr_columns = 2;
		p->period_column = 1;
		p->period = spec->period_ns;
		break;
	}
}

static void set_values(struct profile_stack *s, const struct agg_entry *e,
		       const struct resolve_spec *spec)
{
	uint64_t samples = e->weights[WEIGHT_SAMPLES];
	uint64_t off = (e->weights[WEIGHT_OFFCPU_NS] + 500) / 1000;	/* µs */

	switch (spec->kind) {
	case PROFILE_OFF_CPU:
		s->values[0] = off;
		break;
	case PROFILE_WALL:
		s->values[0] = samples * spec->period_ns / 1000;
		s->values[1] = off;
		break;
	default:
		s->values[0] = samples;
		s->values[1] = samples * spec->period_ns;
		break;
	}
}

/*
 * Whether a user stack whose root frame is name stopped at a Go stack
 * switch: these functions move to the system stack (g0) and call on it,
 * so what called them is on the goroutine's stack. A rule on names, hence
 * here and not with the other ends of stacks in core/agg/stack.c.
 */
static bool go_stack_switch(const char *name)
{
	static const char *const fns[] = { "runtime.systemstack", "runtime.morestack",
					   "runtime.mcall" };

	for (size_t i = 0; name && i < sizeof(fns) / sizeof(fns[0]); i++) {
		size_t n = strlen(fns[i]);

		if (!strncmp(name, fns[i], n) && (!name[n] || !strcmp(name + n, ".abi0")))
			return true;
	}
	return false;
}

/* Frames of st (kernel leaf..root, then user leaf..root) into idx; returns how many or -ENOMEM. */
static int stack_of(struct resolver *r, const struct agg_stack *st,
		    const struct resolve_spec *spec, struct profile_stack *s, uint32_t *idx)
{
	unsigned int n = 0;
	int i;

	if (spec->kernel_frames) {
		if (st->kernel_err) {
			if ((i = missed_frame_index(r, true)) < 0)
				return i;
			idx[n++] = (uint32_t)i;
			s->kernel_missed = true;
			s->kernel_withheld = st->kernel_err == -EACCES;
			s->collision |= st->kernel_err == -EEXIST;
			s->map_full |= st->kernel_err == -ENOMEM;
		}
		for (unsigned int k = 0; k < st->nr_kernel && !st->kernel_err; k++) {
			if ((i = kernel_frame_index(r, st->ips[k], k)) < 0)
				return i;
			idx[n++] = (uint32_t)i;
		}
	}
	s->nr_kernel = (uint16_t)n;
	if (spec->user_frames) {
		if (st->user_err) {
			if ((i = missed_frame_index(r, false)) < 0)
				return i;
			idx[n++] = (uint32_t)i;
			s->user_missed = true;
			s->user_withheld = st->user_err == -EACCES;
			s->collision |= st->user_err == -EEXIST;
			s->map_full |= st->user_err == -ENOMEM;
		}
		for (unsigned int u = 0; u < st->nr_user && !st->user_err; u++) {
			if ((i = user_frame_index(r, st->as, st->ips[st->nr_kernel + u], u)) < 0)
				return i;
			/* --inline: the inlined calls, innermost first, then the frame holding them. */
			if (spec->inline_frames)
				for (int k = r->prof.frames[i].nr_inline; k > 0; k--)
					idx[n++] = (uint32_t)(i - k);
			idx[n++] = (uint32_t)i;
		}
		if (n > s->nr_kernel && go_stack_switch(r->prof.frames[idx[n - 1]].name)) {
			if ((i = user_frame_index(r, st->as, STACK_GO_SWITCH_IP, 1)) < 0)
				return i;
			idx[n++] = (uint32_t)i;
		}
	}
	s->nr_user = (uint16_t)(n - s->nr_kernel);
	return (int)n;
}

struct run_query {
	const struct profile *p;
	const uint32_t *idx;
	unsigned int nr, nr_kernel;
};

static bool run_match(const void *ctx, uint32_t id)
{
	const struct run_query *q = ctx;
	const struct profile_stack *s = &q->p->stacks[id];

	return s->nr_kernel == q->nr_kernel && s->nr_kernel + s->nr_user == q->nr &&
	       !memcmp(q->p->stack_frames + s->first, q->idx, q->nr * sizeof(*q->idx));
}

/*
 * s with its nr frames idx; stacks of the same frames (other pids, other
 * comms) share their run. Returns the stack's index or -ENOMEM.
 */
static int add_run(struct resolver *r, struct profile_stack *s, const uint32_t *idx,
		   unsigned int nr)
{
	struct run_query q = { &r->prof, idx, nr, s->nr_kernel };
	uint64_t hash = hash_bytes(idx, nr * sizeof(*idx), s->nr_kernel);
	int64_t found = idtable__find(&r->runs, hash, run_match, &q);
	int i;

	if (found >= 0) {
		s->first = r->prof.stacks[found].first;
		return profile__add_stack_run(&r->prof, s);
	}
	i = profile__add_stack(&r->prof, s, idx, nr);
	/* Out of memory here only costs the sharing. */
	if (i >= 0)
		idtable__add(&r->runs, hash, (uint32_t)i);
	return i;
}

/* e as a profile stack (values left zero); returns its index or -ENOMEM. */
static int add_stack(struct resolver *r, const struct agg_entry *e)
{
	uint32_t idx[MAX_RESOLVED_FRAMES];
	struct profile_stack s = { 0 };
	const struct agg_stack *st = e->raw;
	int n;

	if (!st)
		return -EINVAL;	/* released, by another resolver */
	n = stack_of(r, st, &r->spec, &s, idx);
	if (n < 0)
		return n;
	s.comm = intern(r, st->comm);
	s.pid = st->pid;
	s.tid = st->tid;
	if (r->oom)
		return -ENOMEM;
	return add_run(r, &s, idx, (unsigned int)n);
}

/* Whether every frame of st has its final name now (see user_frame_final). */
static bool stack_final(const struct resolver *r, const struct agg_stack *st)
{
	if (!r->spec.user_frames || st->user_err)
		return true;
	for (unsigned int i = 0; i < st->nr_user; i++)
		if (!user_frame_final(st->as, st->ips[st->nr_kernel + i], i))
			return false;
	return true;
}

/*
 * A stack whose names are final becomes a profile stack, and its raw form
 * goes; of the others, the final frames resolve.
 */
static bool prepare_entry(struct resolver *r, struct agg *agg, struct agg_entry *e)
{
	const struct agg_stack *st = e->raw;
	int i;

	if (!st || e->model)
		return true;
	if (stack_final(r, st)) {
		i = add_stack(r, e);
		if (i < 0) {
			r->oom = true;
			return false;
		}
		e->model = (uint32_t)i + 1;
		agg__release(agg, e);
		return true;
	}
	for (unsigned int k = 0; k < st->nr_kernel && r->spec.kernel_frames; k++)
		kernel_frame_index(r, st->ips[k], k);
	for (unsigned int u = 0; u < st->nr_user; u++) {
		uint64_t ip = st->ips[st->nr_kernel + u];

		if (user_frame_final(st->as, ip, u))
			user_frame_index(r, st->as, ip, u);
	}
	return false;
}

static void add_pending(struct resolver *r, size_t id)
{
	if (r->nr_pending == r->cap_pending) {
		size_t cap = r->cap_pending ? 2 * r->cap_pending : 1024;
		size_t *p = realloc(r->pending, cap * sizeof(*p));

		if (!p) {
			r->oom = true;
			return;
		}
		r->pending = p;
		r->cap_pending = cap;
	}
	r->pending[r->nr_pending++] = id;
}

void resolver__prepare(struct resolver *r, struct agg *agg, int budget_ms)
{
	int64_t t0 = mono_ms();
	size_t done = 0;

	/* What is left waits for the next call, or for the end. */
	while (agg->nr_seen < agg->nr && !r->oom) {
		size_t id = agg->nr_seen++;

		if (!prepare_entry(r, agg, agg__entry(agg, id)) && !r->oom)
			add_pending(r, id);
		/* Checking the clock every 64 entries is cheap enough. */
		if (!(++done % 64) && mono_ms() - t0 >= budget_ms)
			break;
	}
}

bool resolver__caught_up(const struct resolver *r, const struct agg *agg)
{
	return agg->nr_seen == agg->nr && !r->oom;
}

bool resolver__finish_settled(struct resolver *r, struct agg *agg)
{
	size_t kept = 0;

	for (size_t i = 0; i < r->nr_pending && !r->oom; i++) {
		size_t id = r->pending[i];
		struct agg_entry *e;

		if (id >= agg->nr)
			continue;	/* not this agg's: it was emptied since */
		e = agg__entry(agg, id);
		if (!e->raw || e->model)
			continue;
		if (!e->raw->as || !e->raw->as->settled || !prepare_entry(r, agg, e))
			r->pending[kept++] = id;
	}
	if (r->oom)
		return false;
	r->nr_pending = kept;
	return true;
}

size_t resolver__stack_bytes(const struct resolver *r)
{
	/*
	 * What is in use, not what was reserved: the arrays double, and the
	 * half not written yet is not resident (a one-hour soak counted 740 MB
	 * "held" in a process of 640 MB). The frames are the stacks' too: each
	 * is a code address first seen in one of them, and a busy host's
	 * compilers keep showing new ones (about 1 MB a minute under make
	 * bench's compile loop).
	 */
	return r->prof.nr_stacks * sizeof(*r->prof.stacks) +
	       r->prof.nr_stack_frames * sizeof(*r->prof.stack_frames) +
	       r->runs.nr_slots * sizeof(*r->runs.slots) + r->nr_pending * sizeof(*r->pending) +
	       r->prof.nr_frames * (sizeof(*r->prof.frames) + sizeof(*r->keys)) +
	       r->frames.nr_slots * sizeof(*r->frames.slots);
}

int resolver__build(struct resolver *r, const struct agg *agg, const struct resolve_meta *meta,
		    struct profile *out)
{
	struct agg_entry *e;
	size_t id;
	int err = 0;

	/* A failure while preparing may have been a large allocation: the build tries again. */
	r->oom = false;
	set_columns(&r->prof, &r->spec);
	r->prof.start_ns = meta->start_ns;
	r->prof.duration_ns = meta->duration_ns;
	r->prof.title = intern(r, meta->title ? meta->title : "");
	r->prof.comment = intern(r, meta->comment);
	agg__for_each(agg, id, e) {
		int i = e->model ? (int)e->model - 1 : add_stack(r, e);

		if (i < 0 || r->oom || (size_t)i >= r->prof.nr_stacks) {
			err = i == -EINVAL ? -EINVAL : -ENOMEM;
			break;
		}
		set_values(&r->prof.stacks[i], e, &r->spec);
		/* A signal while the report is built stops it within a stack's time. */
		if (interrupt__pending()) {
			err = -EINTR;
			break;
		}
	}
	/* The profile moves out; the resolver keeps nothing that points into it. */
	*out = r->prof;
	profile__init(&r->prof);
	forget_all(r);
	return err;
}
