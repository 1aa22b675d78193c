// SPDX-License-Identifier: GPL-2.0
/*
 * The native store's tables: one per distinct file, found by identity,
 * compiled once, loaded whole (rows, page index, rules) or not at all, and
 * dropped with the last process that maps it.
 */
#include "backend-bpf/native_internal.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "core/lib/clock.h"
#include "core/lib/interrupt.h"
#include "core/lib/log.h"
#include "core/sym/elfsym.h"
#include "unwind/tables/verdict.h"

#define ROW_BYTES 4
#define RULE_BYTES 12
#define INDEX_BYTES 16		/* key and value */
/* Rows written a call when the kernel takes batches (5.6+). */
#define ROW_BATCH 4096
/* A compile this large (libc's and up) gives its memory back at once. */
#define TRIM_AFTER_ROWS 10000

uint64_t native_store__bytes_used(const struct native_store *s)
{
	return s->rows.used * ROW_BYTES + (uint64_t)s->rules.used * RULE_BYTES +
	       (uint64_t)s->index_used * INDEX_BYTES;
}

/* Whether the process behind dirfd is still there (its /proc entries read). */
static bool alive(int dirfd)
{
	struct stat st;

	return !fstatat(dirfd, "stat", &st, 0);
}

/*
 * The very file m maps, through /proc/PID/map_files (whatever path the
 * process sees it by, deleted or not): a regular file of a real filesystem
 * with m's device and inode, or -1.
 */
static int open_mapped(int dirfd, const struct mapping *m, struct stat *st)
{
	char path[128];
	struct statfs sfs;
	int fd;

	snprintf(path, sizeof(path), "map_files/%" PRIx64 "-%" PRIx64, m->start, m->end);
	/*
	 * Looked at before it is opened: a device a process maps (its open may
	 * act) or a FIFO is never opened; the fd is checked again below.
	 */
	if (fstatat(dirfd, path, st, 0) || !S_ISREG(st->st_mode) || st->st_ino != m->ino)
		return -1;
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	if (fstat(fd, st) || !S_ISREG(st->st_mode) || st->st_ino != m->ino ||
	    (m->dev && st->st_dev != m->dev) || fstatfs(fd, &sfs) ||
	    sfs.f_type == PROC_SUPER_MAGIC || sfs.f_type == SYSFS_MAGIC) {
		close(fd);
		return -1;
	}
	return fd;
}

static int64_t ns_of(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

/*
 * An fd of m's file and its key. The tracker's file when it knows it
 * (opened at first sight, checked by its rules: device, inode, ctime,
 * build-id); one it knows but will not open now is refused (rewritten in
 * place, replaced: -EPERM). Else the very file the process maps. *owned:
 * close the fd.
 */
static int open_file(int dirfd, const struct addr_space *as, const struct mapping *m,
		     struct table_key *key, uid_t *owner, bool *owned)
{
	struct file_identity id;
	struct stat st;
	int fd;

	memset(key, 0, sizeof(*key));
	*owned = false;
	if (as && as->files && file_table__identity(as->files, m, &id)) {
		fd = file_table__open(as->files, m, owned);
		if (fd < 0)
			return -EPERM;
		if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
			if (*owned)
				close(fd);
			return -EPERM;
		}
		*owner = st.st_uid;
		key->dev = m->dev;
		key->ino = m->ino;
		key->ctime_ns = id.ctime_ns;
		if (id.bid_known)
			key->bid = id.bid;
		return fd;
	}
	fd = open_mapped(dirfd, m, &st);
	if (fd < 0)
		return alive(dirfd) ? -EPERM : -ESRCH;
	*owned = true;
	*owner = st.st_uid;
	key->dev = st.st_dev;
	key->ino = st.st_ino;
	key->ctime_ns = ns_of(&st.st_ctim);
	if (build_id__read_fd(fd, &key->bid) < 0)
		key->bid.size = 0;
	return fd;
}

static uint64_t key_hash(const void *k)
{
	const struct table_key *x = k;

	return hash_u64(x->dev * 31 + x->ino) ^ hash_u64((uint64_t)x->ctime_ns) ^
	       hash_bytes(x->bid.data, x->bid.size, x->bid.size);
}

static bool key_equal(const void *a, const void *b)
{
	const struct table_key *x = a, *y = b;

	return x->dev == y->dev && x->ino == y->ino && x->ctime_ns == y->ctime_ns &&
	       x->vdso == y->vdso && build_id__equal(&x->bid, &y->bid);
}

/* What the loaded tables of one user's files take (NATIVE_OWNER_SHARE). */
struct owner_use {
	uid_t uid;		/* the key */
	uint64_t rows, rules, index, bytes;
};

static uint64_t uid_hash(const void *k)
{
	return hash_u64(*(const uid_t *)k);
}

static bool uid_equal(const void *a, const void *b)
{
	return *(const uid_t *)a == *(const uid_t *)b;
}

void native_tables__init(struct native_store *s)
{
	hashmap__init(&s->tables, key_hash, key_equal);
	hashmap__init(&s->owners, uid_hash, uid_equal);
}

static struct owner_use *owner_use(struct native_store *s, uid_t uid)
{
	struct owner_use *u = hashmap__find(&s->owners, &uid);

	if (u)
		return u;
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->uid = uid;
	if (hashmap__add(&s->owners, &u->uid, u)) {
		free(u);
		return NULL;
	}
	return u;
}

/* Delete the first n index entries of t (a load undone, or a drop). */
static void delete_index(struct native_store *s, struct ntable *t, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct native_index_key k = { .table = t->id, .page = t->index_pages[i] };

		bpf_map_delete_elem(s->fds.index, &k);
	}
	s->index_used -= n;
}

static void put_rules(struct native_store *s, struct ntable *t, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		native_rules__put(&s->rules, t->rule_ids[i]);
}

/*
 * n values of an ARRAY map at keys (NULL: first, first + 1, ...): in
 * place where the map is mapped (mem), else in batches where the kernel
 * takes them (5.6+), else one a call.
 */
static int write_array(struct native_store *s, int fd, const struct mapped_array *mem,
		       const uint32_t *keys, uint32_t first, const void *values, size_t size,
		       uint32_t n)
{
	uint32_t seq[ROW_BATCH];
	int err = 0;

	if (mem->ok)
		return mapped_array__write(mem, keys, first, values, size, n);

	for (uint32_t done = 0; done < n && !err;) {
		uint32_t k = n - done < ROW_BATCH ? n - done : ROW_BATCH, count = k;
		const uint32_t *kk = keys ? keys + done : seq;
		const char *vv = (const char *)values + (size_t)done * size;

		/* A large table is many batches: a stop ends the run, not this fill. */
		if (interrupt__pending()) {
			err = -EINTR;
			break;
		}
		for (uint32_t i = 0; !keys && i < k; i++)
			seq[i] = first + done + i;
		if (!s->no_batch) {
			err = bpf_map_update_batch(fd, kk, vv, &count, NULL);
			if (!err) {
				done += k;
				continue;
			}
			err = -errno;
			/* 524: the kernel's ENOTSUPP, which no libc names. */
			if (err != -EINVAL && err != -ENOTSUP && err != -EOPNOTSUPP && err != -524)
				break;
			s->no_batch = true;	/* before 5.6 */
			err = 0;
		}
		for (uint32_t i = 0; i < k && !err; i++)
			if (bpf_map_update_elem(fd, &kk[i], vv + i * size, BPF_ANY))
				err = -errno;
		done += k;
	}
	return err;
}

/*
 * Load the compiled table c of t into the maps, whole, or say why not
 * (t->why): its rows rewritten in place as the map's (a host-wide rule id
 * in place of the table's: libLLVM's 2 MB not copied). -ENOSPC only
 * before that: the caller may make room and retry.
 */
static int load(struct native_store *s, struct ntable *t, struct unwind_table *c)
{
	uint64_t base_page = c->base >> NATIVE_PAGE_SHIFT, need;
	uint32_t nr_index = 0, r = 0, i, *fresh_ids = NULL, nr_fresh = 0;
	struct unwind_rule *fresh_rules = NULL;
	struct owner_use *u = NULL;
	int err;

	for (uint32_t p = 0; p < c->nr_pages; p++)
		nr_index += c->pages[p + 1] > c->pages[p];
	need = (uint64_t)c->nr_rows * ROW_BYTES + (uint64_t)c->nr_rules * RULE_BYTES +
	       (uint64_t)nr_index * INDEX_BYTES;
	if (base_page + c->nr_pages > UINT32_MAX) {
		snprintf(t->why, sizeof(t->why), "code above the index's reach");
		return -ERANGE;
	}
	if (!c->nr_rows || !nr_index) {
		snprintf(t->why, sizeof(t->why), "no rows");
		return -ENOENT;
	}
	/* A user's files: within that user's share of each (root's and the vdso: the rest). */
	if (t->owner) {
		u = owner_use(s, t->owner);
		if (!u) {
			snprintf(t->why, sizeof(t->why), "not loaded: %s", strerror(ENOMEM));
			return -ENOMEM;
		}
		if (u->rows + c->nr_rows > s->sizes.rows / NATIVE_OWNER_SHARE ||
		    u->rules + c->nr_rules > s->sizes.rules / NATIVE_OWNER_SHARE ||
		    u->index + nr_index > s->sizes.index / NATIVE_OWNER_SHARE ||
		    u->bytes + need > s->budget / NATIVE_OWNER_SHARE) {
			snprintf(t->why, sizeof(t->why),
				 "over its owner's share (uid %u: 1/%d of the maps; %" PRIu64
				 " bytes)",
				 (unsigned int)t->owner, NATIVE_OWNER_SHARE, need);
			s->st.budget_refusals++;
			s->st.owner_refusals++;
			return -ENOSPC;
		}
	}
	if (native_store__bytes_used(s) + need > s->budget ||
	    s->index_used + nr_index > s->sizes.index) {
		snprintf(t->why, sizeof(t->why), "over the budget (%" PRIu64 " bytes)", need);
		s->st.budget_refusals++;
		return -ENOSPC;
	}
	if (native_ranges__alloc(&s->rows, c->nr_rows, &t->first)) {
		snprintf(t->why, sizeof(t->why), "no room for %u rows in native_rows",
			 c->nr_rows);
		s->st.budget_refusals++;
		return -ENOSPC;
	}
	t->rule_ids = malloc((c->nr_rules ? c->nr_rules : 1) * sizeof(*t->rule_ids));
	t->index_pages = malloc(nr_index * sizeof(*t->index_pages));
	fresh_ids = malloc((c->nr_rules ? c->nr_rules : 1) * sizeof(*fresh_ids));
	fresh_rules = malloc((c->nr_rules ? c->nr_rules : 1) * sizeof(*fresh_rules));
	err = t->rule_ids && t->index_pages && fresh_ids && fresh_rules ? 0 : -ENOMEM;
	/* r: the rules whose references are taken, put back on undo. */
	while (r < c->nr_rules && !err) {
		bool fresh;

		err = native_rules__get(&s->rules, &c->rules[r], &t->rule_ids[r], &fresh);
		if (err == -ENOSPC) {
			snprintf(t->why, sizeof(t->why), "native_rules full");
			s->st.budget_refusals++;
		}
		if (err)
			break;
		if (fresh) {
			fresh_ids[nr_fresh] = t->rule_ids[r];
			fresh_rules[nr_fresh++] = c->rules[r];
		}
		r++;
	}
	if (!err)
		err = write_array(s, s->fds.rules, &s->rules_mem, fresh_ids, 0, fresh_rules,
				  sizeof(*fresh_rules), nr_fresh);
	if (err)
		goto undo_rules;
	for (i = 0; i < c->nr_rows; i++) {
		uint32_t row = t->rule_ids[c->rows[i].rule] << 16 | c->rows[i].addr;

		memcpy(&c->rows[i], &row, sizeof(row));	/* a struct unwind_row's 4 bytes */
	}
	err = write_array(s, s->fds.rows, &s->rows_mem, NULL, t->first, c->rows, ROW_BYTES,
			  c->nr_rows);
	if (err)
		goto undo_rules;
	/* Rows and rules are in place before any index entry leads to them. */
	for (uint32_t p = 0, n = 0; p < c->nr_pages && !err; p++) {
		struct native_index_key k = { .table = t->id, .page = (uint32_t)(base_page + p) };
		struct native_range v = { .first = t->first + c->pages[p],
					  .nr = c->pages[p + 1] - c->pages[p] };

		if (!v.nr)
			continue;
		if (bpf_map_update_elem(s->fds.index, &k, &v, BPF_ANY)) {
			err = -errno;
			t->nr_index = n;
			s->index_used += n;
			delete_index(s, t, n);
			break;
		}
		t->index_pages[n++] = k.page;
	}
	if (err)
		goto undo_rules;
	free(fresh_ids);
	free(fresh_rules);
	t->nr_index = nr_index;
	s->index_used += nr_index;
	t->bytes = need;
	if (u) {
		u->rows += c->nr_rows;
		u->rules += c->nr_rules;
		u->index += nr_index;
		u->bytes += need;
	}
	return 0;
undo_rules:
	if (!t->why[0])
		snprintf(t->why, sizeof(t->why), "not loaded: %s", strerror(-err));
	put_rules(s, t, r);
	native_ranges__free(&s->rows, t->first, c->nr_rows);
	free(fresh_ids);
	free(fresh_rules);
	free(t->rule_ids);
	free(t->index_pages);
	t->rule_ids = t->index_pages = NULL;
	return err;
}

static void drop_table(struct native_store *s, struct ntable *t);

/* The table kept longest (not one being compiled: those have no reference yet) dropped. */
static bool drop_oldest_kept(struct native_store *s)
{
	struct ntable *oldest = s->vdso && s->vdso->kept ? s->vdso : NULL;
	const struct hashmap_entry *ent;
	size_t bkt;

	hashmap__for_each(&s->tables, bkt, ent) {
		struct ntable *t = ent->value;

		if (t->kept && (!oldest || t->idle_seq < oldest->idle_seq))
			oldest = t;
	}
	if (!oldest)
		return false;
	drop_table(s, oldest);
	s->idle--;
	return true;
}

/* Compile img into t and choose its way: rows loaded, frame pointers, or none. */
static void compile_load(struct native_store *s, struct ntable *t, struct unwind_image *img)
{
	struct unwind_table *c = NULL;
	unsigned int refusals, owner_refusals;
	int64_t t0 = mono_ns();
	int err;

	t->way = NATIVE_WAY_NONE;
	memcpy(t->loads, img->loads, sizeof(t->loads));
	t->nr_loads = img->nr_loads;
	err = unwind_table__compile(img, &c);
	t->compile_ns = mono_ns() - t0;
	s->st.compiled++;
	s->st.compile_ns += t->compile_ns;
	if (err) {
		snprintf(t->why, sizeof(t->why), "%s",
			 err == -ENOENT    ? "no unwind tables"
			 : err == -EBADMSG ? "unwind tables unusable (malformed)"
					   : strerror(-err));
		return;
	}
	if (unwind_table__verify(c)) {
		snprintf(t->why, sizeof(t->why), "compiled table failed its checks");
		goto out;
	}
	t->nr_rows = c->nr_rows;
	t->nr_rules = c->nr_rules;
	unwind_table__fp_share(c, &t->fp);
	if (t->fp.keeps) {
		t->way = NATIVE_WAY_FP;
		unwind_verdict__share_words(&t->fp, t->why, sizeof(t->why));
		goto out;
	}
	refusals = s->st.budget_refusals;
	owner_refusals = s->st.owner_refusals;
	err = load(s, t, c);
	/* Room that tables no process maps hold: the oldest kept goes first, one at a time. */
	while (err == -ENOSPC && drop_oldest_kept(s)) {
		s->st.budget_refusals = refusals;	/* counted if the last try is refused too */
		s->st.owner_refusals = owner_refusals;
		t->why[0] = '\0';
		err = load(s, t, c);
	}
	t->no_room = err == -ENOSPC;
	if (!err) {
		t->way = NATIVE_WAY_TABLE;
		unwind_verdict__share_words(&t->fp, t->why, sizeof(t->why));
	}
out:
	unwind_table__free(c);
	/*
	 * A large compile's temporaries (its FDEs, rows, the window: 6 MB for
	 * libLLVM) go back to the system now, not at the run's next sweep:
	 * freed in the heap, they stayed resident under what the run grew into.
	 */
	if (t->nr_rows >= TRIM_AFTER_ROWS)
		malloc_trim(0);
}

/* The same, the processes' stack copies held meanwhile (native_hold.c). */
static void compile_and_load(struct native_store *s, struct ntable *t, struct unwind_image *img)
{
	uint64_t held = native_hold__begin(s);

	compile_load(s, t, img);
	native_hold__end(s, held);
}

static struct ntable *new_table(struct native_store *s, const struct table_key *key,
				const char *path)
{
	struct ntable *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->key = *key;
	t->path = strdup(path);
	if (!t->path) {
		free(t);
		return NULL;
	}
	t->id = ++s->next_table;
	if (!t->id)
		t->id = ++s->next_table;	/* 0 names no table */
	return t;
}

static void free_table(struct native_store *s, struct ntable *t)
{
	if (t->way == NATIVE_WAY_TABLE) {
		struct owner_use *u = t->owner ? hashmap__find(&s->owners, &t->owner) : NULL;

		if (u) {
			u->rows -= t->nr_rows;
			u->rules -= t->nr_rules;
			u->index -= t->nr_index;
			u->bytes -= t->bytes;
		}
		delete_index(s, t, t->nr_index);
		native_ranges__free(&s->rows, t->first, t->nr_rows);
		put_rules(s, t, t->nr_rules);
	}
	free(t->rule_ids);
	free(t->index_pages);
	free(t->path);
	free(t);
}

int ntable__get(struct native_store *s, int dirfd, const struct addr_space *as,
		const struct mapping *m, struct ntable **out)
{
	struct unwind_image img;
	struct table_key key;
	struct ntable *t;
	uid_t owner = 0;
	bool owned;
	int fd, err;

	*out = NULL;
	fd = open_file(dirfd, as, m, &key, &owner, &owned);
	if (fd < 0) {
		if (fd == -EPERM) {
			s->st.trust_refusals++;
			pr_debug("native: %s: not the file mapped, or not a regular file: no table\n",
				 m->path);
			return 0;
		}
		return fd;
	}
	t = hashmap__find(&s->tables, &key);
	if (t) {
		if (owned)
			close(fd);
		if (!t->refs++) {
			t->kept = false;
			s->idle--;
			s->st.taken_again++;
		}
		*out = t;
		return 0;
	}
	t = new_table(s, &key, m->path);
	if (!t || hashmap__add(&s->tables, &t->key, t)) {
		if (t)
			free(t->path);
		free(t);
		if (owned)
			close(fd);
		return -ENOMEM;
	}
	t->owner = owner;
	err = unwind_image__open_fd(&img, fd);
	if (owned)
		close(fd);
	if (err) {
		t->way = NATIVE_WAY_NONE;
		snprintf(t->why, sizeof(t->why), "%s",
			 err == -ENOEXEC ? "not an ELF64 file for this machine"
					 : "ELF headers unusable");
	} else {
		compile_and_load(s, t, &img);
		unwind_image__close(&img);
	}
	t->refs = 1;
	*out = t;
	return 0;
}

int ntable__get_vdso(struct native_store *s, struct ntable **out)
{
	struct table_key key = { .vdso = true };
	struct unwind_image img;
	const void *image;
	struct ntable *t;
	size_t size;

	*out = NULL;
	if (s->vdso) {
		if (!s->vdso->refs++) {
			s->vdso->kept = false;
			s->idle--;
			s->st.taken_again++;
		}
		*out = s->vdso;
		return 0;
	}
	t = new_table(s, &key, "[vdso]");
	if (!t)
		return -ENOMEM;
	/* The vdso has no file: ours is the same kernel's. */
	image = elf_own_vdso(&size);
	if (!image || unwind_image__from_memory(&img, image, size)) {
		snprintf(t->why, sizeof(t->why), "the vdso's image not readable");
	} else {
		compile_and_load(s, t, &img);
		unwind_image__close(&img);
	}
	t->refs = 1;
	s->vdso = t;
	*out = t;
	return 0;
}

static void drop_table(struct native_store *s, struct ntable *t)
{
	if (t == s->vdso)
		s->vdso = NULL;
	else
		hashmap__remove(&s->tables, &t->key);
	free_table(s, t);
}

void ntable__put(struct native_store *s, struct ntable *t)
{
	if (!t || --t->refs)
		return;
	/* Its verdict too: a binary that keeps frame pointers, or has no usable table. */
	if (s->grace_ms && !t->no_room) {
		t->kept = true;
		t->idle_ms = mono_ms();
		t->idle_seq = ++s->idle_seq;
		s->idle++;
		return;
	}
	drop_table(s, t);
}

void ntable__drop_idle(struct native_store *s)
{
	int64_t now = mono_ms();
	const struct hashmap_entry *ent;
	struct ntable **gone;
	size_t bkt, n = 0;

	if (!s->idle)
		return;
	/* Collected first: the hashmap is not changed while it is walked. */
	gone = malloc(s->idle * sizeof(*gone));
	if (!gone)
		return;
	hashmap__for_each(&s->tables, bkt, ent) {
		struct ntable *t = ent->value;

		if (t->kept && n < s->idle && now - t->idle_ms >= s->grace_ms)
			gone[n++] = t;
	}
	if (s->vdso && s->vdso->kept && n < s->idle && now - s->vdso->idle_ms >= s->grace_ms)
		gone[n++] = s->vdso;
	for (size_t i = 0; i < n; i++)
		drop_table(s, gone[i]);
	s->idle -= n;
	free(gone);
}

void ntable__free_all(struct native_store *s)
{
	const struct hashmap_entry *ent;
	size_t bkt;

	hashmap__for_each(&s->tables, bkt, ent)
		free_table(s, ent->value);
	hashmap__clear(&s->tables);
	if (s->vdso)
		free_table(s, s->vdso);
	s->vdso = NULL;
	hashmap__for_each(&s->owners, bkt, ent)
		free(ent->value);
	hashmap__clear(&s->owners);
}
