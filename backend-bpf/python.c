// SPDX-License-Identifier: GPL-2.0
/*
 * The in-kernel Python walk (bpf/python.bpf.c) from user space: the walk
 * of each layout loaded when a process of that layout is first given (its
 * object opened again with only that walk and the end enabled, on the
 * counting program's maps), the process and thread tables kept to what the
 * run says, and each drained count's Python stack read from its pieces.
 */
#include "backend-bpf/python.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend-bpf/countmap.h"
#include "backend-bpf/interruptible.h"
#include "backend-bpf/shared_maps.h"
#include "bpf/python.skel.h"
#include "bpf/python_fast.skel.h"
#include "bpf/python_offcpu.skel.h"
#include "bpf/python_offcpu_fast.skel.h"
#include "core/lib/clock.h"
#include "core/lib/hashmap.h"
#include "core/lib/log.h"

/* Threads noted unknown are forgotten this often (bpf/python_common.bpf.h: py_unknown). */
#define UNKNOWN_FORGET_MS 1000
/*
 * For this long after a note, the processes of the threads still noted are
 * read again at every take: a thread noted before it had set its id in its
 * state (switched out in its start, before t_bootstrap) is not found by the
 * read the note asked for, and is noted only once a second (its waits on
 * blocked.py's lock had no Python frames for 0.9 s, 3.8, 1 run of 3).
 */
#define UNKNOWN_RETRY_MS 500

/* The walks of each layout, on-CPU (perf_event programs) and off-CPU (tracepoint programs). */
static const char *const walk_names[2][PY_NR_LAYOUTS] = {
#define WALK_NAME(P) [PY_LAYOUT_##P] = "py_walk_" #P,
#define OFFWALK_NAME(P) [PY_LAYOUT_##P] = "py_offwalk_" #P,
	{ PY_LAYOUTS(WALK_NAME) },
	{ PY_LAYOUTS(OFFWALK_NAME) },
#undef WALK_NAME
#undef OFFWALK_NAME
};
static const char *const end_names[2] = { "py_end", "py_offend" };

/* A Python stack read from the pieces of one drain, by (tgid, hash). */
struct stack_entry {
	struct py_piece_key key;	/* piece 0 */
	uint32_t nr, status;
	struct interp_frame frames[];
};

struct bpf_python {
	struct bpf_python_target t;
	struct bpf_object *walks[PY_NR_LAYOUTS];	/* loaded layouts */
	bool refused[PY_NR_LAYOUTS];
	bool end_set;
	/* What the tables hold now, to delete what the next set leaves out. */
	struct py_thread_key *held;
	size_t nr_held, cap_held;
	uint32_t *held_procs;
	size_t nr_held_procs, cap_held_procs;
	struct hashmap cache;		/* stacks read this drain */
	uint64_t unknown_seen;		/* the unknown-thread stat at the last take */
	uint64_t fresh_seen;		/* the fresh-stack stat at the last take */
	int64_t unknown_forget;		/* when py_unknown is emptied next */
	int64_t unknown_noted;		/* when a thread was last noted unknown */
	uint64_t lost;			/* stacks whose pieces were not all there */
};

static uint64_t key_hash(const void *k)
{
	return hash_bytes(k, sizeof(struct py_piece_key), 0);
}

static bool key_equal(const void *a, const void *b)
{
	return !memcmp(a, b, sizeof(struct py_piece_key));
}

struct bpf_python *bpf_python__new(const struct bpf_python_target *t)
{
	struct bpf_python *bp = calloc(1, sizeof(*bp));

	if (!bp)
		return NULL;
	bp->t = *t;
	/* The host's own end is in the slot already (the stack copies' dwarf_py_end). */
	bp->end_set = t->end_given;
	hashmap__init(&bp->cache, key_hash, key_equal);
	return bp;
}

static void clear_cache(struct bpf_python *bp)
{
	struct hashmap_entry *e;
	size_t bkt;

	hashmap__for_each(&bp->cache, bkt, e)
		free(e->value);
	hashmap__clear(&bp->cache);
}

void bpf_python__free(struct bpf_python *bp)
{
	if (!bp)
		return;
	clear_cache(bp);
	for (int i = 0; i < PY_NR_LAYOUTS; i++)
		bpf_object__close(bp->walks[i]);
	free(bp->held);
	free(bp->held_procs);
	free(bp);
}

static int load_object(void *obj)
{
	return bpf_object__load(obj);
}

/*
 * The embedded object of the walks: the fast ones (Linux 5.5,
 * bpf/python_fast.bpf.c) or those for 4.9.
 */
static const void *walks_elf(const struct bpf_python *bp, bool fast, size_t *size)
{
	if (bp->t.offcpu)
		return fast ? python_offcpu_fast_bpf__elf_bytes(size)
			    : python_offcpu_bpf__elf_bytes(size);
	return fast ? python_fast_bpf__elf_bytes(size) : python_bpf__elf_bytes(size);
}

/* Load the walk of layout l (and the end, the first time), fast or not. 0 or -errno. */
static int load_one(struct bpf_python *bp, unsigned int l, bool fast, struct errmsg *err)
{
	const char *walk = walk_names[bp->t.offcpu][l], *end = end_names[bp->t.offcpu];
	struct bpf_program *prog;
	struct bpf_object *obj;
	const void *elf;
	size_t size;
	int fd, e;

	/* The embedded object, opened once per layout: only its walk and end are loaded. */
	elf = walks_elf(bp, fast, &size);
	obj = bpf_object__open_mem(elf, size, NULL);
	if (!obj)
		return -errno;
	bpf_object__for_each_program(prog, obj)
		bpf_program__set_autoload(prog, !strcmp(bpf_program__name(prog), walk) ||
							(!bp->end_set &&
							 !strcmp(bpf_program__name(prog), end)));
	e = shared_maps__reuse(obj, bp->t.host);
	if (!e)
		e = bpf_interruptible__run(load_object, obj);
	if (e) {
		errmsg__set(err, "the kernel refused the Python walk %s: %s; those processes' "
			    "samples keep their native frames", walk, strerror(-e));
		bpf_object__close(obj);
		return e;
	}
	prog = bpf_object__find_program_by_name(obj, walk);
	fd = prog ? bpf_program__fd(prog) : -1;
	if (fd < 0 || bpf_map_update_elem(bp->t.progs_fd, &l, &fd, BPF_ANY)) {
		bpf_object__close(obj);
		return -errno;
	}
	if (!bp->end_set) {
		unsigned int zero = 0;

		prog = bpf_object__find_program_by_name(obj, end);
		fd = prog ? bpf_program__fd(prog) : -1;
		if (fd < 0 || bpf_map_update_elem(bp->t.progs_fd, &zero, &fd, BPF_ANY)) {
			bpf_object__close(obj);
			return -errno;
		}
		bp->end_set = true;
	}
	bp->walks[l] = obj;
	return 0;
}

/* Load the walk of layout l, the fast one where the kernel takes it. 0 or -errno. */
static int load_walk(struct bpf_python *bp, unsigned int l, struct errmsg *err)
{
	struct errmsg why = { "" };
	int e = load_one(bp, l, true, &why);

	if (!e || e == -EINTR) {
		if (e)
			errmsg__set(err, "%s", why.text);
		return e;
	}
	pr_info("python: %s: the kernel refused the fast walk (%s): the walk for Linux 4.9, "
		"each frame read on its own\n", walk_names[bp->t.offcpu][l], strerror(-e));
	return load_one(bp, l, false, err);
}

static int grow(void **buf, size_t *cap, size_t n, size_t size)
{
	void *p;

	if (n <= *cap)
		return 0;
	p = realloc(*buf, (n + 64) * size);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = n + 64;
	return 0;
}

static bool thread_listed(const struct interp_proc *procs, size_t nr,
			  const struct py_thread_key *k)
{
	for (size_t i = 0; i < nr; i++) {
		if ((uint32_t)procs[i].pid != k->tgid)
			continue;
		for (size_t t = 0; t < procs[i].nr_threads; t++)
			if ((uint32_t)procs[i].threads[t].tid == k->tid)
				return true;
	}
	return false;
}

static bool proc_listed(const struct interp_proc *procs, size_t nr, uint32_t tgid)
{
	for (size_t i = 0; i < nr; i++)
		if ((uint32_t)procs[i].pid == tgid)
			return true;
	return false;
}

int bpf_python__set(struct bpf_python *bp, const struct interp_proc *procs, size_t nr,
		    size_t *kept, struct errmsg *err)
{
	size_t total = 0, k = 0, kp = 0;
	int e = 0;

	/*
	 * The run lists first the processes to keep: the table's room goes
	 * to them, and entries of those past it are deleted below, not kept
	 * because they came first (a crowd of one user's processes found
	 * before a root service took every slot).
	 */
	if (nr > PY_MAX_PROCS)
		nr = PY_MAX_PROCS;
	*kept = nr;

	for (size_t i = 0; i < nr; i++) {
		unsigned int l = procs[i].layout;

		total += procs[i].nr_threads;
		if (l == PY_LAYOUT_NONE || l >= PY_NR_LAYOUTS || bp->walks[l] || bp->refused[l])
			continue;
		if (load_walk(bp, l, err)) {
			bp->refused[l] = true;
			e = -EINVAL;	/* err says why, once: the refused layout is not tried again */
		}
	}
	/* What the new set leaves out goes first: a pid that ended may be taken by another. */
	for (size_t i = 0; i < bp->nr_held; i++)
		if (!thread_listed(procs, nr, &bp->held[i]))
			bpf_map_delete_elem(bp->t.threads_fd, &bp->held[i]);
	for (size_t i = 0; i < bp->nr_held_procs; i++)
		if (!proc_listed(procs, nr, bp->held_procs[i]))
			bpf_map_delete_elem(bp->t.procs_fd, &bp->held_procs[i]);
	if (grow((void **)&bp->held, &bp->cap_held, total, sizeof(*bp->held)) ||
	    grow((void **)&bp->held_procs, &bp->cap_held_procs, nr, sizeof(*bp->held_procs)))
		return -ENOMEM;
	/*
	 * Each process's first thread, then each one's second, and so on: a
	 * process of thousands of thread states (forged ones cost nothing)
	 * takes its share of the table, not the room of the processes after
	 * it. A full table leaves the thread out: its samples say "not known".
	 */
	for (size_t t = 0, more = 1; more; t++) {
		more = 0;
		for (size_t i = 0; i < nr; i++) {
			const struct interp_thread *it;
			struct py_thread_key tk;
			struct py_thread th;

			if (t >= procs[i].nr_threads)
				continue;
			more = 1;
			if (procs[i].layout >= PY_NR_LAYOUTS || !bp->walks[procs[i].layout])
				continue;
			it = &procs[i].threads[t];
			tk = (struct py_thread_key){ (uint32_t)procs[i].pid, (uint32_t)it->tid };
			th = (struct py_thread){ it->state, it->check };
			if (!bpf_map_update_elem(bp->t.threads_fd, &tk, &th, BPF_ANY))
				bp->held[k++] = tk;
		}
	}
	for (size_t i = 0; i < nr; i++) {
		struct py_proc pp = { .layout = procs[i].layout };
		uint32_t tgid = (uint32_t)procs[i].pid;

		if (pp.layout >= PY_NR_LAYOUTS || !bp->walks[pp.layout])
			continue;
		if (bpf_map_update_elem(bp->t.procs_fd, &tgid, &pp, BPF_ANY) && !e)
			e = -errno;
		else
			bp->held_procs[kp++] = tgid;
	}
	bp->nr_held = k;
	bp->nr_held_procs = kp;
	return e;
}

/* The stack of (tgid, hash) in generation gen's pieces, read once a drain; NULL if lost. */
static const struct stack_entry *read_stack(struct bpf_python *bp, unsigned int gen,
					    uint32_t tgid, uint64_t hash)
{
	struct py_piece_key key = { .tgid = tgid, .piece = 0, .hash = hash };
	struct stack_entry *se = hashmap__find(&bp->cache, &key);
	struct py_piece piece;
	uint32_t nr;

	if (se)
		return se;
	if (bpf_map_lookup_elem(bp->t.stacks_fd[gen], &key, &piece))
		return NULL;
	nr = piece.nr_frames > PY_MAX_FRAMES ? PY_MAX_FRAMES : piece.nr_frames;
	se = calloc(1, sizeof(*se) + nr * sizeof(se->frames[0]));
	if (!se)
		return NULL;
	se->key = key;
	se->nr = nr;
	se->status = piece.status;
	for (uint32_t i = 0; i < nr; i++) {
		uint32_t p = i / PY_FRAMES_PER_PIECE, j = i % PY_FRAMES_PER_PIECE;

		if (j == 0 && p > 0) {
			struct py_piece_key pk = key;

			pk.piece = p;
			if (bpf_map_lookup_elem(bp->t.stacks_fd[gen], &pk, &piece)) {
				free(se);
				return NULL;
			}
		}
		se->frames[i].code = piece.frames[j].code;
		se->frames[i].lasti = piece.frames[j].lasti;
		se->frames[i].ident = piece.frames[j].ident;
	}
	if (hashmap__add(&bp->cache, &se->key, se)) {
		free(se);
		return NULL;
	}
	return se;
}

uint32_t bpf_python__why(uint64_t why)
{
	static const uint32_t status[] = {
		[PY_STACK_NONE] = INTERP_NONE,
		[PY_STACK_NO_THREAD] = INTERP_NO_THREAD,
		[PY_STACK_BAD_THREAD] = INTERP_BAD_THREAD,
		[PY_STACK_IDLE] = INTERP_IDLE,
		[PY_STACK_UNREADABLE] = INTERP_UNREADABLE,
	};

	return why <= PY_STACK_UNREADABLE ? status[why] : INTERP_UNREADABLE;
}

uint32_t bpf_python__walked(uint32_t walk_status)
{
	return INTERP_FRAMES | (walk_status & PY_WALK_TRUNCATED ? INTERP_TRUNCATED : 0) |
	       (walk_status & PY_WALK_FAULT ? INTERP_FAULT : 0);
}

void bpf_python__sample(struct bpf_python *bp, unsigned int gen, uint32_t tgid, uint64_t py_stack,
			struct sample *s)
{
	const struct stack_entry *se;

	if (!py_stack)
		return;
	if (!(py_stack & PY_STACK_HASH)) {
		s->interp_status = bpf_python__why(py_stack);
		return;
	}
	se = read_stack(bp, gen, tgid, py_stack);
	if (!se) {
		bp->lost++;
		s->interp_status = INTERP_LOST;
		return;
	}
	s->interp_frames = se->frames;
	s->nr_interp = se->nr;
	s->interp_status = bpf_python__walked(se->status);
}

int bpf_python__clear(struct bpf_python *bp, unsigned int gen)
{
	struct py_piece_key key, next, *keys = NULL;
	size_t nr = 0, cap = 0;
	int fd = bp->t.stacks_fd[gen];

	if (fd < 0)
		return 0;

	clear_cache(bp);
	/* Keys first, then deletes: a walk by get_next_key while deleting may skip some. */
	memset(&key, 0xff, sizeof(key));
	while (!bpf_map_get_next_key(fd, &key, &next)) {
		if (grow((void **)&keys, &cap, nr + 1, sizeof(*keys))) {
			free(keys);
			return -ENOMEM;
		}
		keys[nr++] = next;
		key = next;
	}
	/*
	 * Kept while the map is less than half full: a stack is the same
	 * frames whenever its key comes again (the key is their hash), and a
	 * sample that finds its stack stored does not store it again (a walk
	 * stored one in 11 samples of deep.py when every drain emptied the map).
	 */
	if (nr < PY_MAX_PIECES_STORED / 2)
		nr = 0;
	for (size_t i = 0; i < nr; i++)
		bpf_map_delete_elem(fd, &keys[i]);
	free(keys);
	return 0;
}

void bpf_python__end_drain(struct bpf_python *bp)
{
	clear_cache(bp);
}

/*
 * Up to max keys (key_size bytes each) of the hash map fd into keys, the
 * walk started from absent, a key the map cannot hold. Returns how many.
 */
static size_t map_keys(int fd, const void *absent, void *keys, size_t key_size, size_t max)
{
	const void *prev = absent;
	size_t nr = 0;

	while (nr < max && !bpf_map_get_next_key(fd, prev, (char *)keys + nr * key_size))
		prev = (char *)keys + nr++ * key_size;
	return nr;
}

/* The stat of slot, counted with notes in fd (-1: none kept, 0). */
static uint64_t noted(const struct bpf_python *bp, int fd, unsigned int slot)
{
	if (fd < 0 || bp->t.stats_fd < 0)
		return 0;
	return percpu_stat(bp->t.stats_fd, slot, bp->t.nr_cpus);
}

bool bpf_python__noticed(const struct bpf_python *bp)
{
	return bp->nr_held_procs > 0 &&
	       (noted(bp, bp->t.unknown_fd, bp->t.unknown_slot) != bp->unknown_seen ||
		noted(bp, bp->t.fresh_fd, bp->t.fresh_slot) != bp->fresh_seen);
}

void bpf_python__take_unknown(struct bpf_python *bp, void (*fn)(void *ctx, pid_t tgid),
			      void *ctx)
{
	/* tgid 0 is never a Python process's: no key is this one. */
	struct py_thread_key absent = { 0, 0 }, keys[PY_MAX_UNKNOWN];
	uint64_t count = noted(bp, bp->t.unknown_fd, bp->t.unknown_slot);
	int64_t now = mono_ms();
	bool fresh = count != bp->unknown_seen, retry;
	uint32_t last = 0;
	size_t nr;

	if (bp->t.unknown_fd < 0)
		return;
	if (fresh)
		bp->unknown_noted = now;
	retry = now - bp->unknown_noted < UNKNOWN_RETRY_MS;
	if (!fresh && !retry && now < bp->unknown_forget)
		return;
	bp->unknown_seen = count;
	nr = map_keys(bp->t.unknown_fd, &absent, keys, sizeof(keys[0]), PY_MAX_UNKNOWN);
	for (size_t i = 0; (fresh || retry) && i < nr; i++) {
		if (keys[i].tgid != last)
			fn(ctx, (pid_t)keys[i].tgid);
		last = keys[i].tgid;
	}
	if (now < bp->unknown_forget)
		return;
	/* Keys first, then deletes: a walk by get_next_key while deleting may skip some. */
	for (size_t i = 0; i < nr; i++)
		bpf_map_delete_elem(bp->t.unknown_fd, &keys[i]);
	bp->unknown_forget = now + UNKNOWN_FORGET_MS;
}

void bpf_python__take_fresh(struct bpf_python *bp,
			    void (*fn)(void *ctx, pid_t tgid, const struct interp_frame *frames,
				       unsigned int nr),
			    void *ctx)
{
	uint64_t count = noted(bp, bp->t.fresh_fd, bp->t.fresh_slot);
	struct py_piece_key absent, keys[PY_MAX_FRESH];
	size_t nr;

	if (count == bp->fresh_seen)
		return;
	bp->fresh_seen = count;
	/* Keys first, then deletes: a walk by get_next_key while deleting may skip some. */
	memset(&absent, 0xff, sizeof(absent));
	nr = map_keys(bp->t.fresh_fd, &absent, keys, sizeof(keys[0]), PY_MAX_FRESH);
	for (size_t i = 0; i < nr; i++) {
		const struct stack_entry *se = read_stack(bp, 0, keys[i].tgid, keys[i].hash);

		if (se)
			fn(ctx, (pid_t)keys[i].tgid, se->frames, se->nr);
		bpf_map_delete_elem(bp->t.fresh_fd, &keys[i]);
	}
}

bool bpf_python__walking(const struct bpf_python *bp)
{
	return bp->nr_held_procs > 0;
}

uint64_t bpf_python__lost(const struct bpf_python *bp)
{
	return bp->lost;
}
