// SPDX-License-Identifier: GPL-2.0
#include "core/model/resolve.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/agg/stack.h"
#include "core/lib/clock.h"
#include "core/lib/interrupt.h"

/* Frames of one stack at most: kernel (and a marker), user with their inlined calls. */
#define MAX_RESOLVED_FRAMES (2 * MAX_STACK_DEPTH + 3 + MAX_STACK_DEPTH * (DWARF_MAX_FRAMES - 1))

/* The kernel's half of the address space, as pprof tools expect it. */
#define KERNEL_MAPPING_START 0xffff800000000000ULL

/* One distinct frame: a Location in pprof's terms. Zeroed whole: padding is hashed. */
struct frame_key {
	const void *space;	/* the address space of a user frame; NULL otherwise */
	uint64_t ip;
	uint8_t kind;
	uint8_t caller;
};

struct mapping_key {
	const struct addr_space *as;	/* NULL: the kernel */
	uint64_t start, end, pgoff, ino;
};

struct resolver {
	struct symbolizer *sym;
	struct resolve_spec spec;
	struct profile prof;		/* frames, mappings, stacks and strings so far */
	struct hashmap frames;		/* struct frame_key * -> index + 1 */
	struct hashmap mappings;	/* struct mapping_key * -> index + 1 */
	struct hashmap stacks;		/* struct agg_entry * -> index + 1 */
	bool oom;
};

static uint64_t frame_hash(const void *k)
{
	return hash_bytes(k, sizeof(struct frame_key), 0);
}

static bool frame_equal(const void *a, const void *b)
{
	return !memcmp(a, b, sizeof(struct frame_key));
}

static uint64_t ptr_hash(const void *k)
{
	return hash_u64((uint64_t)(uintptr_t)k);
}

static bool ptr_equal(const void *a, const void *b)
{
	return a == b;
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
	hashmap__init(&r->frames, frame_hash, frame_equal);
	hashmap__init(&r->mappings, mapping_hash, mapping_equal);
	hashmap__init(&r->stacks, ptr_hash, ptr_equal);
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

void resolver__free(struct resolver *r)
{
	if (!r)
		return;
	free_keys(&r->frames);
	free_keys(&r->mappings);
	hashmap__clear(&r->stacks);
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
			      const struct mapping *m)
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
		pm.build_id = intern(r, symbolizer__build_id(r->sym, key->as, m));
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
	key.as = as;
	key.start = m->start;
	key.end = m->end;
	key.pgoff = m->pgoff;
	key.ino = m->ino;
	return mapping_index(r, &key, m);
}

static uint32_t kernel_mapping(struct resolver *r)
{
	struct mapping_key key;

	memset(&key, 0, sizeof(key));
	return mapping_index(r, &key, NULL);
}

static void set_source(struct resolver *r, struct profile_frame *f, const struct src_frame *src)
{
	f->file = intern(r, src->file);
	f->line = src->line;
	f->func_file = intern(r, src->decl_file);
	f->func_line = src->decl_line;
}

/*
 * The functions inlined at a user frame's address go into the profile just
 * before it (see profile_frame.nr_inline); the frame gets its own line.
 */
static int add_source(struct resolver *r, const struct frame_key *key, struct profile_frame *f)
{
	struct src_frame src[DWARF_MAX_FRAMES];
	unsigned int n;

	if (key->ip == STACK_TRUNCATED_IP || key->ip == STACK_GO_SWITCH_IP)
		return 0;
	n = symbolizer__user_source(r->sym, key->space, stack__lookup_addr(key->ip, key->caller),
				    src, DWARF_MAX_FRAMES);
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

/* The profile frame for key, symbolized now. Returns its index, or -ENOMEM. */
static int resolve_frame(struct resolver *r, const struct frame_key *key)
{
	const struct addr_space *as = key->space;
	struct profile_frame f = { .address = key->ip, .kind = key->kind, .caller = key->caller };
	struct frame_sym fs = { 0 };
	int idx;

	switch (key->kind) {
	case FRAME_KERNEL:
		symbolizer__kernel(r->sym, stack__lookup_addr(key->ip, key->caller), &fs);
		f.mapping = kernel_mapping(r);
		break;
	case FRAME_USER:
		symbolizer__user_frame(r->sym, as, key->ip, key->caller, &fs);
		f.mapping = user_mapping(r, as, stack__lookup_addr(key->ip, key->caller));
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
	if (key->kind == FRAME_USER && r->spec.source_lines && add_source(r, key, &f))
		return -ENOMEM;
	if (r->oom)
		return -ENOMEM;
	idx = profile__add_frame(&r->prof, &f);
	if (idx < 0)
		return idx;
	remember(r, &r->frames, key, sizeof(*key), idx);
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

/* Index of the frame, resolved now if it has not been. */
static int frame_index(struct resolver *r, const struct frame_key *key)
{
	uintptr_t found = (uintptr_t)hashmap__find(&r->frames, key);

	return found ? (int)(found - 1) : resolve_frame(r, key);
}

/*
 * Whether a user frame's name is final: its mapping is known and is a
 * file or the vdso. Memory without a file is JIT code, whose perf map may
 * still grow; an address without a mapping may get one from a later
 * side-band record.
 */
static bool user_frame_final(const struct addr_space *as, uint64_t ip, unsigned int index)
{
	const struct mapping *m;

	if (ip == STACK_TRUNCATED_IP || ip == STACK_GO_SWITCH_IP)
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

/* Frames of e (kernel leaf..root, then user leaf..root) into idx; returns how many or -ENOMEM. */
static int stack_of(struct resolver *r, const struct agg_entry *e, const struct resolve_spec *spec,
		    struct profile_stack *s, uint32_t *idx)
{
	struct frame_key key;
	unsigned int n = 0;
	int i;

	if (spec->kernel_frames) {
		if (e->kernel_err) {
			/* The marker's caller flag tells the kernel's placeholder from the user's. */
			frame_key(&key, NULL, 0, FRAME_MISSED, true);
			if ((i = frame_index(r, &key)) < 0)
				return i;
			idx[n++] = (uint32_t)i;
			s->kernel_missed = true;
			s->kernel_withheld = e->kernel_err == -EACCES;
			s->collision |= e->kernel_err == -EEXIST;
			s->map_full |= e->kernel_err == -ENOMEM;
		}
		for (unsigned int k = 0; k < e->nr_kernel && !e->kernel_err; k++) {
			frame_key(&key, NULL, e->ips[k], FRAME_KERNEL, k > 0);
			if ((i = frame_index(r, &key)) < 0)
				return i;
			idx[n++] = (uint32_t)i;
		}
	}
	s->nr_kernel = (uint16_t)n;
	if (spec->user_frames) {
		if (e->user_err) {
			frame_key(&key, NULL, 0, FRAME_MISSED, false);
			if ((i = frame_index(r, &key)) < 0)
				return i;
			idx[n++] = (uint32_t)i;
			s->user_missed = true;
			s->user_withheld = e->user_err == -EACCES;
			s->collision |= e->user_err == -EEXIST;
			s->map_full |= e->user_err == -ENOMEM;
		}
		for (unsigned int u = 0; u < e->nr_user && !e->user_err; u++) {
			frame_key(&key, e->as, e->ips[e->nr_kernel + u], FRAME_USER, u > 0);
			if ((i = frame_index(r, &key)) < 0)
				return i;
			/* --inline: the inlined calls, innermost first, then the frame holding them. */
			if (spec->inline_frames)
				for (int k = r->prof.frames[i].nr_inline; k > 0; k--)
					idx[n++] = (uint32_t)(i - k);
			idx[n++] = (uint32_t)i;
		}
		if (n > s->nr_kernel && go_stack_switch(r->prof.frames[idx[n - 1]].name)) {
			frame_key(&key, e->as, STACK_GO_SWITCH_IP, FRAME_USER, true);
			if ((i = frame_index(r, &key)) < 0)
				return i;
			idx[n++] = (uint32_t)i;
		}
	}
	s->nr_user = (uint16_t)(n - s->nr_kernel);
	return (int)n;
}

/* e as a profile stack (values left zero); returns its index or -ENOMEM. */
static int add_stack(struct resolver *r, const struct agg_entry *e)
{
	uint32_t idx[MAX_RESOLVED_FRAMES];
	struct profile_stack s = { 0 };
	int n = stack_of(r, e, &r->spec, &s, idx), i;

	if (n < 0)
		return n;
	s.comm = intern(r, e->comm);
	s.pid = e->pid;
	s.tid = e->tid;
	if (r->oom)
		return -ENOMEM;
	i = profile__add_stack(&r->prof, &s, idx, (unsigned int)n);
	if (i < 0)
		return i;
	if (hashmap__add(&r->stacks, e, (void *)(uintptr_t)(i + 1)))
		return -ENOMEM;
	return i;
}

/* Whether every frame of e has its final name now (see user_frame_final). */
static bool entry_final(const struct resolver *r, const struct agg_entry *e)
{
	if (!r->spec.user_frames || e->user_err)
		return true;
	for (unsigned int i = 0; i < e->nr_user; i++)
		if (!user_frame_final(e->as, e->ips[e->nr_kernel + i], i))
			return false;
	return true;
}

/* A stack whose names are final becomes a profile stack; of the others, the final frames resolve. */
static void prepare_entry(struct resolver *r, const struct agg_entry *e)
{
	struct frame_key key;

	if (entry_final(r, e)) {
		if (!hashmap__find(&r->stacks, e) && add_stack(r, e) < 0)
			r->oom = true;
		return;
	}
	for (unsigned int i = 0; i < e->nr_kernel && r->spec.kernel_frames; i++) {
		frame_key(&key, NULL, e->ips[i], FRAME_KERNEL, i > 0);
		frame_index(r, &key);
	}
	for (unsigned int i = 0; i < e->nr_user; i++) {
		uint64_t ip = e->ips[e->nr_kernel + i];

		if (!user_frame_final(e->as, ip, i))
			continue;
		frame_key(&key, e->as, ip, FRAME_USER, i > 0);
		frame_index(r, &key);
	}
}

void resolver__prepare(struct resolver *r, struct agg *agg, int budget_ms)
{
	int64_t t0 = mono_ms();
	size_t done = 0;

	while (done < agg->nr_fresh && !r->oom) {
		prepare_entry(r, agg->fresh[done++]);
		/* Checking the clock every 64 entries is cheap enough. */
		if (!(done % 64) && mono_ms() - t0 >= budget_ms)
			break;
	}
	/* What is left waits for the next call, or for the end. */
	agg__forget_fresh(agg, done);
}

int resolver__build(struct resolver *r, const struct agg *agg, const struct resolve_meta *meta,
		    struct profile *out)
{
	struct hashmap_entry *ent;
	struct agg_entry *e;
	size_t bkt;
	int err = 0;

	/* A failure while preparing may have been a large allocation: the build tries again. */
	r->oom = false;
	set_columns(&r->prof, &r->spec);
	r->prof.start_ns = meta->start_ns;
	r->prof.duration_ns = meta->duration_ns;
	r->prof.title = intern(r, meta->title ? meta->title : "");
	r->prof.comment = intern(r, meta->comment);
	agg__for_each(agg, bkt, ent, e) {
		uintptr_t found = (uintptr_t)hashmap__find(&r->stacks, e);
		int i = found ? (int)found - 1 : add_stack(r, e);

		if (i < 0 || r->oom) {
			err = -ENOMEM;
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
	free_keys(&r->frames);
	free_keys(&r->mappings);
	hashmap__clear(&r->stacks);
	return err;
}
