// SPDX-License-Identifier: GPL-2.0
/*
 * The images (descriptor, search table, .debug_frame) of the files that
 * processes map, one per file (dev, ino) whichever process maps it, read
 * when libunwind first asks for one and freed when idle; the vdso's is our
 * own. The FDEs that lookups read from them are kept in a small cache of
 * bounded size, whichever file they come from.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/lib/clock.h"
#include "core/lib/log.h"
#include "core/proc/proctrack.h"
#include "core/sym/debugfile.h"
#include "core/sym/elfsym.h"
#include "unwind/unwind_internal.h"

static uint64_t key_hash(const void *k)
{
	const struct image_key *e = k;

	return hash_u64(e->dev * 31 + e->ino);
}

static bool key_equal(const void *a, const void *b)
{
	const struct image_key *x = a, *y = b;

	return x->dev == y->dev && x->ino == y->ino;
}

static void free_image(struct image_entry *e)
{
	debug_frame__free(&e->df);
	unwind_image__close(&e->img);	/* and its descriptor */
	free(e->refused);
	free(e);
}

int image_cache__init(struct unwinder *u)
{
	hashmap__init(&u->images, key_hash, key_equal);
	hashmap__init(&u->dropped, key_hash, key_equal);
	u->now_ms = mono_ms();
	u->fdes = calloc((size_t)1 << FDE_CACHE_BITS, sizeof(*u->fdes));
	return u->fdes ? 0 : -ENOMEM;
}

void image_cache__free(struct unwinder *u)
{
	struct hashmap_entry *ent;
	size_t bkt;

	hashmap__for_each(&u->images, bkt, ent)
		free_image(ent->value);
	hashmap__clear(&u->images);
	hashmap__for_each(&u->dropped, bkt, ent)
		free(ent->value);
	hashmap__clear(&u->dropped);
	/* The vdso's image is not in the map: it has no file to key it by. */
	if (u->vdso.ok) {
		debug_frame__free(&u->vdso.df);
		unwind_image__close(&u->vdso.img);
		u->vdso.ok = false;
	}
	free(u->vdso.refused);
	u->vdso.refused = NULL;
	for (size_t i = 0; u->fdes && i < (size_t)1 << FDE_CACHE_BITS; i++)
		image_fde__free(u->fdes[i].fde);
	free(u->fdes);
	u->fdes = NULL;
	image_fde__free(u->fde_spare);
	u->fde_spare = NULL;
}

/* The vdso has no file: read our own, the same kernel's. */
static struct image_entry *vdso_image(struct unwinder *u)
{
	const void *image;
	size_t size;

	if (!u->vdso_tried) {
		u->vdso_tried = true;
		u->vdso.serial = ++u->serials;
		image = elf_own_vdso(&size);
		u->vdso.ok = image && !unwind_image__from_memory(&u->vdso.img, image, size);
	}
	return u->vdso.ok ? &u->vdso : NULL;
}

/* Count what the checks of an image's headers and search table refused. */
static void count_refusals(struct unwinder *u, const struct mapping *m, int err,
			   const struct unwind_image *img)
{
	if (err == -EBADMSG || (!err && img->bad_table)) {
		u->st.bad_images++;
		pr_debug("unwind: %s: %s, skipped\n", m->path,
			 err ? "malformed or truncated ELF file" : "malformed unwind tables");
	}
}

/* Whether key's image was dropped while idle (it is being read again): forget that it was. */
static bool was_dropped(struct unwinder *u, const struct image_key *key)
{
	struct image_key *k = hashmap__remove(&u->dropped, key);

	free(k);
	return k != NULL;
}

static struct image_entry *file_image(struct unwinder *u, const struct addr_space *as,
				      const struct mapping *m)
{
	struct image_key key = { .dev = m->dev, .ino = m->ino };
	struct image_entry *e;
	bool owned;
	int fd;

	e = hashmap__find(&u->images, &key);
	if (e) {
		e->used_ms = u->now_ms;
		return e->ok ? e : NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->key = key;
	e->serial = ++u->serials;
	e->used_ms = u->now_ms;
	e->read_again = was_dropped(u, &key);
	u->st.images_reloaded += e->read_again;
	fd = file_table__open(as->files, m, &owned);
	if (fd >= 0) {
		int err = unwind_image__open_fd(&e->img, fd);

		e->ok = !err;
		if (!e->read_again)
			count_refusals(u, m, err, &e->img);
		if (!e->read_again && u->on_file)
			u->on_file(u->on_file_ctx, fd, m);
		if (owned)
			close(fd);
	}
	if (hashmap__add(&u->images, &e->key, e)) {
		unwind_image__close(&e->img);
		free(e);
		return NULL;
	}
	return e->ok ? e : NULL;
}

/* Its owner truncated it since: what we read of it no longer describes the process. */
static void note_shrunk(struct unwinder *u, struct image_entry *e, const struct mapping *m)
{
	if (e->shrunk || !unwind_image__shrunk(&e->img))
		return;
	e->shrunk = true;
	u->st.bad_images++;
	pr_debug("unwind: %s: the file shrank, skipped\n", m->path);
}

/* The image of the mapping m and its load bias, or NULL (anonymous memory, JIT code). */
struct image_entry *image_cache__entry(struct unwind_ctx *ctx, const struct mapping *m,
				       uint64_t *bias)
{
	struct image_entry *e = NULL;

	if (m->path && !strcmp(m->path, "[vdso]"))
		e = vdso_image(ctx->u);
	else if (mapping__is_file(m) && m->ino)
		e = file_image(ctx->u, ctx->as, m);
	if (e)
		note_shrunk(ctx->u, e, m);
	if (e && !e->shrunk && !unwind_image__bias(&e->img, m->start, m->pgoff, bias))
		return e;
	return NULL;
}

/* The image mapped at addr and its load bias, or NULL. */
const struct unwind_image *image_cache__at(struct unwind_ctx *ctx, uint64_t addr, uint64_t *bias)
{
	const struct mapping *m = addr_space__find(ctx->as, addr);
	struct image_entry *e = m ? image_cache__entry(ctx, m, bias) : NULL;

	return e ? &e->img : NULL;
}

/* .debug_frame of m's file or of its debug file, read once; NULL if it has none. */
struct lu_debug_frame_list *image_cache__debug_frame(struct unwind_ctx *ctx, struct image_entry *e,
						     const struct mapping *m)
{
	char open_path[64], debug_path[4096];
	const char *dbg = NULL;
	bool owned;
	int fd, err;

	if (e->debug_frame_tried)
		return e->has_debug_frame ? &e->fdesc : NULL;
	e->debug_frame_tried = true;
	if (!e->key.ino)
		return NULL;	/* the vdso has .eh_frame */
	fd = file_table__open(ctx->as->files, m, &owned);
	if (fd >= 0) {
		snprintf(open_path, sizeof(open_path), "/proc/self/fd/%d", fd);
		if (!elf_debug_file(open_path, m->path, debug_path, sizeof(debug_path)))
			dbg = debug_path;
		if (owned)
			close(fd);
	}
	err = debug_frame__load(&e->df, &e->img, dbg);
	if (e->df.bad_fdes && !e->read_again) {
		ctx->u->st.bad_fdes += e->df.bad_fdes;
		pr_debug("unwind: %s: %u malformed FDEs in .debug_frame left out\n", m->path,
			 e->df.bad_fdes);
	}
	if (err)
		return NULL;
	e->has_debug_frame = true;
	e->fdesc.debug_frame = (char *)e->df.data;
	e->fdesc.debug_frame_size = e->df.size;
	e->fdesc.index = e->df.index;
	e->fdesc.index_size = e->df.nr_index * sizeof(e->df.index[0]);
	pr_debug("unwind: %s: %zu FDEs in .debug_frame%s%s\n", m->path, e->df.nr_index,
		 dbg ? " of " : "", dbg ? dbg : "");
	return &e->fdesc;
}

/* Drop e, remembering its key to count it when read again. */
static void drop_image(struct unwinder *u, struct image_entry *e)
{
	struct image_key *k = malloc(sizeof(*k));

	hashmap__remove(&u->images, &e->key);
	if (k) {
		*k = e->key;
		if (hashmap__add(&u->dropped, k, k))
			free(k);
	}
	free_image(e);
	u->st.images_dropped++;
}

/*
 * A file found shorter than when read stays skipped (its image is what
 * tells it shrank); every other idle one goes.
 */
static bool is_idle(const struct unwinder *u, const struct image_entry *e, int64_t idle_ms)
{
	return !e->shrunk && u->now_ms - e->used_ms >= idle_ms;
}

unsigned int unwinder__drop_idle(struct unwinder *u, int64_t idle_ms)
{
	struct image_entry **victims;
	struct hashmap_entry *ent;
	unsigned int n = 0;
	size_t bkt;

	u->now_ms = mono_ms();
	if (!u->images.size)
		return 0;
	/* Gathered first: the map's entries go as they are removed. */
	victims = malloc(u->images.size * sizeof(*victims));
	if (!victims)
		return 0;
	hashmap__for_each(&u->images, bkt, ent)
		if (is_idle(u, ent->value, idle_ms))
			victims[n++] = ent->value;
	for (unsigned int i = 0; i < n; i++)
		drop_image(u, victims[i]);
	free(victims);
	return n;
}

static size_t refused_words(const struct image_entry *e)
{
	return (e->img.fde_count + 63) / 64;
}

static size_t entry_bytes(const struct image_entry *e)
{
	const struct unwind_image *img = &e->img;

	return sizeof(*e) + img->hdr_copy.size + (e->refused ? refused_words(e) * 8 : 0) +
	       e->df.size + e->df.nr_index * sizeof(*e->df.index);
}

size_t image_cache__bytes(const struct unwinder *u)
{
	const struct hashmap_entry *ent;
	size_t bytes = entry_bytes(&u->vdso) + u->fde_bytes, bkt;

	if (u->fdes)
		bytes += ((size_t)1 << FDE_CACHE_BITS) * sizeof(*u->fdes);
	if (u->fde_spare)
		bytes += u->fde_spare->bytes;

	hashmap__for_each(&u->images, bkt, ent)
		bytes += entry_bytes(ent->value);
	return bytes;
}

/* Note that entry index of e failed the checks: counted once, not read again. */
static void refuse(struct unwind_ctx *ctx, struct image_entry *e, const struct mapping *m,
		   uint64_t index)
{
	if (!e->refused)
		e->refused = calloc(refused_words(e), sizeof(*e->refused));
	if (e->refused)
		e->refused[index / 64] |= (uint64_t)1 << (index % 64);
	if (e->read_again)
		return;		/* counted when it was first read */
	ctx->u->st.bad_fdes++;
	pr_debug("unwind: %s: the FDE of search table entry %llu is malformed, left out\n",
		 m->path, (unsigned long long)index);
}

/* Keep f in slot while it is small and the cache within its budget; else until the next lookup. */
static void keep(struct unwinder *u, struct fde_slot *slot, uint64_t serial, struct image_fde *f)
{
	size_t old = slot->fde ? slot->fde->bytes : 0;

	if (f->bytes <= FDE_CACHE_MAX_ENTRY && u->fde_bytes - old + f->bytes <= FDE_CACHE_BYTES) {
		image_fde__free(slot->fde);
		slot->fde = f;
		slot->serial = serial;
		u->fde_bytes += f->bytes - old;
		return;
	}
	u->fde_spare = f;
}

const struct image_fde *image_cache__fde(struct unwind_ctx *ctx, struct image_entry *e,
					 const struct mapping *m, uint64_t vaddr)
{
	struct unwinder *u = ctx->u;
	struct image_fde *f;
	struct fde_slot *slot;
	uint64_t index;
	int err;

	if (image_fde__search(&e->img, vaddr, &index))
		return NULL;
	if (e->refused && (e->refused[index / 64] >> (index % 64) & 1))
		return NULL;
	u->st.fde_lookups++;
	slot = &u->fdes[hash_u64(e->serial * 0x9e3779b97f4a7c15ull ^ index) &
			(((size_t)1 << FDE_CACHE_BITS) - 1)];
	if (slot->fde && slot->serial == e->serial && slot->fde->index == index)
		return slot->fde;
	/* The one kept for the previous lookup only: libunwind is done with it. */
	image_fde__free(u->fde_spare);
	u->fde_spare = NULL;
	err = image_fde__read(&e->img, index, &f);
	u->st.fde_reads++;
	if (err == -EBADMSG)
		refuse(ctx, e, m, index);
	else if (err)
		note_shrunk(u, e, m);
	if (err)
		return NULL;
	keep(u, slot, e->serial, f);
	return f;
}
