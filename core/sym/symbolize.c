// SPDX-License-Identifier: GPL-2.0
#include "core/sym/symbolize.h"

#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/sym/dwarfline.h"
#include "core/sym/debugfile.h"
#include "core/sym/elfsym.h"
#include "core/lib/clock.h"
#include "core/lib/hashmap.h"
#include "core/sym/ksym.h"
#include "core/lib/log.h"
#include "core/sym/perfmap.h"

/*
 * One file, for the whole run: its pointer is the file's identity
 * (symbolizer__file_of). The tables are the large part (megabytes for a
 * cc1 or a sanitizer runtime): they go while the file is idle and come
 * back at its next lookup; the key, module and build-id stay.
 */
struct elf_cache_entry {
	char *key;		/* "dev:ino:ctime:build-id:path" */
	const char *module;	/* base name of path, inside key */
	struct elf_symtab *st;	/* NULL when the file could not be read, or dropped */
	struct dwarf_lines *dl;	/* its DWARF when source lines are wanted; NULL if none */
	char build_id[2 * BUILD_ID_MAX + 1];	/* hex, the one checked; "" if none known */
	int64_t used_ms;	/* s->now_ms when its tables were last looked up */
	bool dropped;		/* st (and dl) freed while idle: read again at the next lookup */
	/*
	 * s->now_ms when reading it again failed (no fd left, out of memory):
	 * tried again at the next sweep's lookups, not at every lookup.
	 */
	int64_t failed_ms;
	bool had_dwarf;		/* dl was there when dropped: read it again too */
};

struct symbolizer {
	struct hashmap elfs;	/* key -> struct elf_cache_entry */
	struct ksyms *ksyms;
	bool ksyms_tried;
	char *kallsyms_path;
	struct elf_symtab *vdso;
	bool vdso_tried;
	unsigned int unreadable_files;
	unsigned int replaced_files;	/* mapped files that could not be opened as such */
	unsigned int other_build_debug;	/* binaries whose debug files were another build's */
	bool want_source;	/* open each binary's DWARF with its symbols */
	struct hashmap perfmaps;	/* addr_space -> struct perfmap_entry */
	bool kernel_restricted_used;
	struct proctrack *pt;	/* NULL: perf maps checked by /proc's start time only */
	/* CLOCK_MONOTONIC at the last sweep: a lookup stores it, reading no clock. */
	int64_t now_ms;
	struct symbolizer_stats st;
};

/* The JIT map of one process image (a pid's lifetime between execs). */
struct perfmap_entry {
	const struct addr_space *as;	/* the key */
	struct perfmap *pm;	/* NULL: none, or not trusted */
};

static uint64_t ptr_hash(const void *k)
{
	return hash_u64((uint64_t)(uintptr_t)*(const void *const *)k);
}

static bool ptr_equal(const void *a, const void *b)
{
	return *(const void *const *)a == *(const void *const *)b;
}

struct symbolizer *symbolizer__new(void)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	hashmap__init(&s->elfs, hashmap_str_hash, hashmap_str_equal);
	hashmap__init(&s->perfmaps, ptr_hash, ptr_equal);
	s->now_ms = mono_ms();
	return s;
}

/*
 * The JIT symbols of one image of a process, read once. Its pid may belong
 * to another process by now (reused), and anyone may write a file under
 * /tmp in advance for a pid: the map must be owned by the user the image
 * ran as (root's is trusted; an image whose user was never read, only
 * root's), and made no earlier than two seconds before the tracker saw the image begin;
 * under the process's root only while its pid is still that process's.
 */
void symbolizer__set_tracker(struct symbolizer *s, struct proctrack *pt)
{
	s->pt = pt;
}

/* What perfmap_of asks once /proc/PID is open: the tracker's exact check. */
struct image_of_tracker {
	struct proctrack *pt;
	const struct addr_space *as;
};

static bool image_held(void *ctx)
{
	struct image_of_tracker *it = ctx;

	return proctrack__held_by(it->pt, it->as, proctrack__records_now(it->pt));
}

static struct perfmap *perfmap_of(struct symbolizer *s, const struct addr_space *as)
{
	struct image_of_tracker it = { s->pt, as };
	struct perfmap_holder holder = { image_held, &it };
	struct perfmap_entry *e = hashmap__find(&s->perfmaps, &as);
	uid_t owner = as->uid == (uid_t)-1 ? 0 : as->uid;
	int64_t not_before = as->start_wall_ns > 2000000000 ? as->start_wall_ns - 2000000000 : 0;
	const char *warning;
	char path[128];

	if (e)
		return e->pm;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->as = as;
	/* An image known to have ended: what is at /proc/PID now is another's, or nothing. */
	e->pm = perfmap__load_held(as->pid, owner, not_before,
				   as->end_time || as->leader_exited ? -1 : as->start_wall_ns,
				   s->pt ? &holder : NULL, &warning, path, sizeof(path));
	if (warning)
		pr_warn("warning: ignoring %s: %s\n", path, warning);
	if (hashmap__add(&s->perfmaps, &e->as, e)) {
		perfmap__free(e->pm);
		free(e);
		return NULL;
	}
	return e->pm;
}

void symbolizer__free(struct symbolizer *s)
{
	struct hashmap_entry *ent;
	size_t bkt;

	if (!s)
		return;
	hashmap__for_each(&s->elfs, bkt, ent) {
		struct elf_cache_entry *e = ent->value;

		elf_symtab__free(e->st);
		dwarf_lines__free(e->dl);
		free(e->key);
		free(e);
	}
	hashmap__clear(&s->elfs);
	hashmap__for_each(&s->perfmaps, bkt, ent) {
		struct perfmap_entry *e = ent->value;

		perfmap__free(e->pm);
		free(e);
	}
	hashmap__clear(&s->perfmaps);
	ksyms__free(s->ksyms);
	elf_symtab__free(s->vdso);
	free(s->kallsyms_path);
	free(s);
}

void symbolizer__set_kallsyms(struct symbolizer *s, const char *path)
{
	free(s->kallsyms_path);
	s->kallsyms_path = strdup(path);
}

/* The kernel maps the same vdso into every process: read our own. */
static struct elf_symtab *vdso_symtab(struct symbolizer *s)
{
	const void *image;
	size_t size;

	if (s->vdso_tried)
		return s->vdso;
	s->vdso_tried = true;
	image = elf_own_vdso(&size);
	s->vdso = image ? elf_symtab__load_mem(image, size) : NULL;
	return s->vdso;
}

/* The DWARF of the binary at open_path (installed at path), or NULL. */
static struct dwarf_lines *open_dwarf(const char *open_path, const char *path)
{
	struct dwarf_lines *dl;
	int fd = elf_dwarf_fd(open_path, path);

	if (fd < 0) {
		pr_info("no debug info for %s: no source lines or inlined calls for its frames\n",
			path);
		return NULL;
	}
	dl = dwarf_lines__open(fd, elf_symtab__debug_root());
	if (!dl)
		pr_info("cannot read the DWARF of %s: %s\n", path, strerror(errno));
	return dl;
}

/*
 * The cache key of m's file: its device, inode, and what identifies it
 * among the files that had that number in the run (the ctime and build-id
 * the tracker learnt at first sight, no system call), or, for one first
 * read after its process was gone, the ctime of the file found (fd).
 * Without a file: "-", an entry with no names.
 */
static void cache_key(char *key, size_t len, const struct mapping *m,
		      const struct file_identity *id, int fd)
{
	char hex[2 * BUILD_ID_MAX + 1];
	struct stat st;

	if (id && id->ctime_ns) {
		build_id__hex(&id->bid, hex, sizeof(hex));
		snprintf(key, len, "%" PRIx64 ":%" PRIu64 ":%" PRId64 ":%s%s:%s", m->dev, m->ino,
			 id->ctime_ns, id->bid_known ? "b" : "", hex, m->path);
	} else if (fd >= 0 && !fstat(fd, &st)) {
		snprintf(key, len, "%" PRIx64 ":%" PRIu64 ":%lld.%09ld:-:%s", m->dev, m->ino,
			 (long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec, m->path);
	} else {
		snprintf(key, len, "%" PRIx64 ":%" PRIu64 ":-:%s", m->dev, m->ino, m->path);
	}
}

/* The symbols of the checked file open at fd (installed at path); NULL with errno set. */
static struct elf_symtab *load_symbols(int fd, const char *path, char *open_path, size_t len)
{
	snprintf(open_path, len, "/proc/self/fd/%d", fd);
	return elf_symtab__load_as(open_path, path);
}

/* Whether st's section headers name another build-id than hex, the one checked. */
static bool other_notes(const struct elf_symtab *st, const char *hex)
{
	const char *own = elf_symtab__build_id(st);

	return own && strcmp(own, hex);
}

/*
 * The symbols of m's file, read from the file the tracker checks to be
 * the one mapped (file_table__open: its device and inode, build-id, and
 * ctime or contents as first seen): a binary replaced at its path since,
 * rewritten in place, or one the tracker had no fd left for and that is
 * gone, gives no names rather than another file's. A file whose section
 * headers name another build-id than its program headers (what the kernel
 * and the tracker read) gives none either: its debug files would be found
 * by the other one.
 */
static void first_read(struct symbolizer *s, struct elf_cache_entry *e, const struct mapping *m,
		       int fd, const struct file_identity *id)
{
	char open_path[64];
	bool other = false;
	const char *own;

	if (fd >= 0) {
		e->st = load_symbols(fd, m->path, open_path, sizeof(open_path));
		if (!e->st) {
			s->unreadable_files++;
			pr_info("cannot read symbols of %s: %s\n", m->path, strerror(errno));
		}
	}
	/* The kernel's or the tracker's, read from the file mapped: the one checked. */
	if (id && id->bid_known)
		build_id__hex(&id->bid, e->build_id, sizeof(e->build_id));
	if (e->st) {
		own = elf_symtab__build_id(e->st);
		if (!(id && id->bid_known))
			snprintf(e->build_id, sizeof(e->build_id), "%s", own ? own : "");
		if (other_notes(e->st, e->build_id)) {
			elf_symtab__free(e->st);
			e->st = NULL;
			other = true;
		}
	}
	if (fd < 0 || other) {
		s->replaced_files++;
		pr_info("%s: not the file that was mapped any more (replaced or gone); its frames "
			"get no function names\n",
			m->path);
	} else if (e->st) {
		if (elf_symtab__debug_of_other_build(e->st)) {
			s->other_build_debug++;
			pr_info("%s: its debug files are of another build (build-id %s): ignored\n",
				m->path, e->build_id[0] ? e->build_id : "none");
		}
		if (s->want_source)	/* now, while the file is open */
			e->dl = open_dwarf(open_path, m->path);
	}
}

/*
 * The tables of a file dropped while idle, read again from the checked file
 * at fd: the same file as at first (its key matched), so what was said of
 * it then (-v lines, counts) is not said again. One that cannot be read now
 * (no fd left, out of memory) is tried again after the next sweep; one that
 * is another build now stays without names, as a replaced file.
 */
static void read_again(struct symbolizer *s, struct elf_cache_entry *e, const struct mapping *m,
		       int fd)
{
	char open_path[64];

	e->st = fd >= 0 ? load_symbols(fd, m->path, open_path, sizeof(open_path)) : NULL;
	if (e->st && other_notes(e->st, e->build_id)) {
		elf_symtab__free(e->st);
		e->st = NULL;
		e->dropped = false;
		s->st.reload_failures++;
		return;
	}
	if (!e->st) {
		bool first = !e->failed_ms;

		e->failed_ms = s->now_ms;
		if (!first)
			return;
		s->st.reload_failures++;
		pr_info("%s: cannot read its symbols again (dropped while idle); its new frames "
			"get no function names\n",
			m->path);
		return;
	}
	e->dropped = false;
	e->failed_ms = 0;
	s->st.reloaded++;
	if (e->had_dwarf)
		e->dl = open_dwarf(open_path, m->path);
}

/* Whether e's tables were dropped and are to be read at this lookup. */
static bool due_again(const struct symbolizer *s, const struct elf_cache_entry *e)
{
	return e->dropped && e->failed_ms != s->now_ms;
}

static struct elf_cache_entry *new_entry(const char *key, const struct mapping *m)
{
	struct elf_cache_entry *e = calloc(1, sizeof(*e));
	const char *slash;

	if (!e)
		return NULL;
	e->key = strdup(key);
	if (!e->key) {
		free(e);
		return NULL;
	}
	slash = strrchr(m->path, '/');
	e->module = e->key + (strlen(key) - strlen(slash ? slash + 1 : m->path));
	return e;
}

/*
 * The entry of m's file, its tables read if with_tables (else it may have
 * them or not: the identity and build-id are what is asked for). A lookup
 * of its tables marks it used.
 */
static struct elf_cache_entry *elf_for_mapping(struct symbolizer *s, const struct addr_space *as,
					       const struct mapping *m, bool with_tables)
{
	struct elf_cache_entry *e;
	char key[4200];
	struct file_identity id;
	bool known, owned = false;
	int fd = -1;

	known = as && file_table__identity(as->files, m, &id);
	if (known && id.kept && id.ctime_ns) {
		/*
		 * Checked when it was loaded, and held open by the tracker since,
		 * which checks it again at each new mapping: the same file. One
		 * not held open is opened and checked again below (its inode may
		 * be another file's by now).
		 */
		cache_key(key, sizeof(key), m, &id, -1);
		e = hashmap__find(&s->elfs, key);
		if (e && !(with_tables && due_again(s, e)))
			goto used;
	}
	if (as)
		fd = file_table__open(as->files, m, &owned);
	cache_key(key, sizeof(key), m, fd >= 0 && known ? &id : NULL, fd);
	e = hashmap__find(&s->elfs, key);
	if (e) {
		if (with_tables && due_again(s, e))
			read_again(s, e, m, fd);
		goto out;
	}
	e = new_entry(key, m);
	if (!e)
		goto out;
	first_read(s, e, m, fd, known ? &id : NULL);
	if (hashmap__add(&s->elfs, e->key, e)) {
		elf_symtab__free(e->st);
		dwarf_lines__free(e->dl);
		free(e->key);
		free(e);
		e = NULL;
	}
out:
	if (fd >= 0 && owned)
		close(fd);
used:
	if (e && with_tables)
		e->used_ms = s->now_ms;
	return e;
}

void symbolizer__user(struct symbolizer *s, const struct addr_space *as, uint64_t addr,
		      struct frame_sym *out)
{
	const struct mapping *m = as ? addr_space__find(as, addr) : NULL;
	uint64_t off;

	out->name = NULL;
	out->offset = 0;
	out->module = NULL;
	/* Executable memory without a file is JIT code: its process may name it. */
	if (as && as->pid > 0 && (!m || !mapping__is_file(m)) && (!m || strcmp(m->path, "[vdso]"))) {
		struct perfmap *pm = perfmap_of(s, as);

		if (pm) {
			out->name = perfmap__lookup(pm, addr, &out->offset);
			if (out->name)
				out->module = "[jit]";
		}
		return;
	}
	if (!m)
		return;
	off = addr - m->start + m->pgoff;
	if (!strcmp(m->path, "[vdso]")) {
		struct elf_symtab *st = vdso_symtab(s);

		out->module = "[vdso]";
		if (st)
			out->name = elf_symtab__lookup_offset(st, addr - m->start, &out->offset);
		return;
	}
	if (!mapping__is_file(m))
		return;		/* anonymous or special memory: nothing to read */
	struct elf_cache_entry *e = elf_for_mapping(s, as, m, true);

	if (!e)
		return;
	out->module = e->module;
	if (e->st)
		out->name = elf_symtab__lookup_offset(e->st, off, &out->offset);
}

void symbolizer__want_source(struct symbolizer *s)
{
	s->want_source = true;
}

unsigned int symbolizer__user_source(struct symbolizer *s, const struct addr_space *as,
				     uint64_t addr, struct src_frame *out, unsigned int max)
{
	const struct mapping *m = as ? addr_space__find(as, addr) : NULL;
	struct elf_cache_entry *e;
	uint64_t vaddr;

	if (!s->want_source || !m || !mapping__is_file(m))
		return 0;
	e = elf_for_mapping(s, as, m, true);
	if (!e || !e->st || !e->dl || elf_symtab__vaddr(e->st, addr - m->start + m->pgoff, &vaddr))
		return 0;
	return dwarf_lines__lookup(e->dl, vaddr, out, max);
}

void symbolizer__user_frame(struct symbolizer *s, const struct addr_space *as, uint64_t ip,
			    bool caller, struct frame_sym *out)
{
	/* The unwinder's marker for a stack cut at the maximum depth, the model's for Go's. */
	if (ip == STACK_TRUNCATED_IP || ip == STACK_GO_SWITCH_IP) {
		out->name = ip == STACK_TRUNCATED_IP ? "[truncated]" : "[goroutine stack not followed]";
		out->offset = 0;
		out->module = NULL;
		return;
	}
	symbolizer__user(s, as, ip - caller, out);
}

void symbolizer__forget_space(struct symbolizer *s, const struct addr_space *as)
{
	struct perfmap_entry *e = hashmap__remove(&s->perfmaps, &as);

	if (e) {
		perfmap__free(e->pm);
		free(e);
	}
}

bool symbolizer__has_jit_map(struct symbolizer *s, const struct addr_space *as)
{
	return as && as->pid > 0 && perfmap_of(s, as);
}

const void *symbolizer__file_of(struct symbolizer *s, const struct addr_space *as,
				const struct mapping *m)
{
	return m && mapping__is_file(m) ? elf_for_mapping(s, as, m, false) : NULL;
}

const char *symbolizer__build_id(struct symbolizer *s, const struct addr_space *as,
				 const struct mapping *m)
{
	struct elf_cache_entry *e;

	if (!m || !mapping__is_file(m))
		return NULL;
	e = elf_for_mapping(s, as, m, false);
	return e && e->build_id[0] ? e->build_id : NULL;
}

void symbolizer__preload_kernel(struct symbolizer *s)
{
	const char *path = s->kallsyms_path ? s->kallsyms_path : "/proc/kallsyms";

	if (s->ksyms_tried)
		return;
	s->ksyms_tried = true;
	s->ksyms = ksyms__load(path);
	if (!s->ksyms)
		pr_warn("cannot read %s: %s; kernel frames print [unknown]\n", path,
			strerror(errno));
}

void symbolizer__kernel(struct symbolizer *s, uint64_t addr, struct frame_sym *out)
{
	out->name = NULL;
	out->offset = 0;
	out->module = "kernel";
	symbolizer__preload_kernel(s);
	if (!s->ksyms)
		return;
	if (ksyms__restricted(s->ksyms)) {
		s->kernel_restricted_used = true;
		return;
	}
	out->name = ksyms__lookup(s->ksyms, addr, &out->offset, &out->module);
	if (!out->module)
		out->module = "kernel";
}

/* Free e's tables, keeping what identifies the file. */
static void drop_tables(struct symbolizer *s, struct elf_cache_entry *e)
{
	e->had_dwarf = e->dl != NULL;
	elf_symtab__free(e->st);
	dwarf_lines__free(e->dl);	/* and the descriptor it held */
	e->st = NULL;
	e->dl = NULL;
	e->dropped = true;
	s->st.dropped++;
}

unsigned int symbolizer__drop_idle(struct symbolizer *s, int64_t idle_ms)
{
	struct hashmap_entry *ent;
	unsigned int dropped = 0;
	size_t bkt;

	s->now_ms = mono_ms();
	hashmap__for_each(&s->elfs, bkt, ent) {
		struct elf_cache_entry *e = ent->value;

		if (e->st && s->now_ms - e->used_ms >= idle_ms) {
			drop_tables(s, e);
			dropped++;
		}
	}
	return dropped;
}

void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *st)
{
	struct hashmap_entry *ent;
	size_t bkt;

	*st = s->st;
	st->files = s->elfs.size;
	st->loaded = 0;
	st->table_bytes = ksyms__bytes(s->ksyms) + (s->vdso ? elf_symtab__bytes(s->vdso) : 0);
	hashmap__for_each(&s->elfs, bkt, ent) {
		const struct elf_cache_entry *e = ent->value;

		st->loaded += e->st != NULL;
		if (e->st)
			st->table_bytes += elf_symtab__bytes(e->st);
	}
}

void symbolizer__report_problems(struct symbolizer *s)
{
	struct symbolizer_stats st;

	symbolizer__stats(s, &st);
	if (st.dropped)
		pr_info("symbol tables: %zu files, %" PRIu64 " tables dropped while idle, %" PRIu64
			" read again (%" PRIu64 " could not be), %zu held at the end\n",
			st.files, st.dropped, st.reloaded, st.reload_failures, st.loaded);
	if (s->kernel_restricted_used)
		pr_warn("warning: /proc/kallsyms shows no addresses (kernel.kptr_restrict, or not "
			"privileged); kernel frames print [unknown]\n");
	if (s->replaced_files)
		pr_warn("warning: %u mapped binaries were replaced or removed before they could be "
			"read; their frames have no function names (-v names them)\n",
			s->replaced_files);
	if (s->unreadable_files)
		pr_warn("warning: could not read symbols of %u binaries; their frames have no "
			"function names (-v names them)\n",
			s->unreadable_files);
	if (s->other_build_debug)
		pr_warn("warning: the debug files found for %u stripped binaries were of another "
			"build (another build-id, or none) and were ignored; their frames have "
			"fewer names (-v names them)\n",
			s->other_build_debug);
}
