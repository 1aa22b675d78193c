// SPDX-License-Identifier: GPL-2.0
/*
 * The Node processes of a run (node.c): each mapped file decided once by
 * its identity (node_detect), the Builtins_* code of a Node file found,
 * and a process's memory opened through a handle that is its image's.
 */
#include "app/run/node_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/lib/log.h"
#include "core/proc/proctrack.h"
#include "core/sym/debugfile.h"
#include "interp/python/elfscan.h"

uint64_t node_id_hash(const void *k)
{
	return hash_u64((uint64_t)(uintptr_t)k);
}

bool node_id_equal(const void *a, const void *b)
{
	return a == b;
}

uint64_t node_file_hash(const void *k)
{
	const struct node_file *f = k;

	return hash_u64(f->dev * 0x9e3779b97f4a7c15ULL ^ f->ino);
}

bool node_file_equal(const void *a, const void *b)
{
	const struct node_file *x = a, *y = b;

	return x->dev == y->dev && x->ino == y->ino;
}

static uint64_t frame_hash(const void *k)
{
	return hash_bytes(k, sizeof(struct interp_frame), 0);
}

static bool frame_equal(const void *a, const void *b)
{
	return !memcmp(a, b, sizeof(struct interp_frame));
}

/* ---- Finding the processes ------------------------------------------------ */

struct builtins_range {
	uint64_t lo, hi;
};

static int builtin_symbol(void *ctx, const GElf_Sym *sym, const char *name, size_t avail)
{
	struct builtins_range *b = ctx;

	if (avail < 9 || strncmp(name, "Builtins_", 9) || GELF_ST_TYPE(sym->st_info) != STT_FUNC ||
	    !sym->st_value)
		return 0;
	if (!b->lo || sym->st_value < b->lo)
		b->lo = sym->st_value;
	if (sym->st_value + sym->st_size > b->hi)
		b->hi = sym->st_value + sym->st_size;
	return 0;
}

/*
 * Where f's Builtins_* functions are, as file offsets (the PT_LOAD segment
 * that holds them): a native frame there is V8's, and may have JavaScript
 * frames above it (the interpreter's trampolines run those).
 */
static void find_builtins(Elf *elf, struct node_file *f)
{
	struct builtins_range b = { 0, 0 };
	size_t nr = 0;

	elf_file__each_symbol(elf, elf_file__section(elf, SHT_SYMTAB, NULL), builtin_symbol, &b);
	if (!b.lo || b.hi <= b.lo || elf_getphdrnum(elf, &nr))
		return;
	for (size_t i = 0; i < nr; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    b.lo < ph.p_vaddr || b.hi > ph.p_vaddr + ph.p_filesz)
			continue;
		f->builtins_off = b.lo - ph.p_vaddr + ph.p_offset;
		f->builtins_end = b.hi - ph.p_vaddr + ph.p_offset;
		return;
	}
}

/* Whether the file of mapping m of as is Node's: its cached verdict, decided now if new. */
static const struct node_file *file_of(struct run_node *rn, const struct addr_space *as,
				       const struct mapping *m)
{
	struct node_file key = { .dev = m->dev, .ino = m->ino }, *f;
	struct errmsg why = { "" };
	struct elf_file h;
	bool owned = false, opened;
	uint64_t bias = 0;
	int fd, own, err;

	f = hashmap__find(&rn->files, &key);
	if (f)
		return f;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	*f = key;
	f->path = strdup(m->path);
	fd = file_table__open(as->files, m, &owned);
	if (fd < 0) {
		/* Not the file that was mapped: not decided (another image may open it). */
		free(f->path);
		free(f);
		return NULL;
	}
	own = elf_file__ready() ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
	opened = own >= 0 && !elf_file__open_fd(own, &h);
	err = opened ? py_elf__load_bias(h.elf, m->start, m->pgoff, &bias) : -ENOENT;
	f->res = err ? err : node_detect(fd, bias, &f->ni, &why);
	if (f->res == 1)
		find_builtins(h.elf, f);
	if (opened)
		elf_file__close(&h);
	if (owned)
		close(fd);
	if (f->res == -ENOTSUP) {
		rn->st.refused++;
		if (rn->nr_refused_named++ < MAX_REFUSED_NAMED)
			pr_info("node: %s (pid %d): %s; its samples keep their native frames\n",
				m->path, (int)as->pid, why.text[0] ? why.text : "not readable here");
	} else if (f->res < 0) {
		pr_debug("node: %s of pid %d: %s\n", m->path, (int)as->pid, strerror(-f->res));
	}
	if (!f->path || hashmap__add(&rn->files, f, f)) {
		free(f->path);
		free(f);
		return NULL;
	}
	return f;
}

void node_proc_free(struct node_proc *p)
{
	struct hashmap_entry *ent;
	size_t bkt;

	if (!p)
		return;
	py_proc_mem__close(&p->mem);
	hashmap__clear(&p->pcs);
	hashmap__for_each(&p->names, bkt, ent) {
		struct node_name *n = ent->value;

		free(n->name);
		free(n->file);
		free(n);
	}
	hashmap__clear(&p->names);
	free(p);
}

/*
 * The process of image as, running the Node of file f: its memory through
 * a handle that is as's (a process that took the pid since, even within a
 * tick of its exit, is never read for it: proctrack__held_by).
 */
static struct node_proc *proc_new(struct run_node *rn, const struct addr_space *as,
				  const struct node_file *f)
{
	struct node_proc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pid = as->pid;
	p->as_id = as->id;
	p->file = f;
	hashmap__init(&p->pcs, node_id_hash, node_id_equal);
	hashmap__init(&p->names, frame_hash, frame_equal);
	py_proc_mem__init(&p->mem, as->pid);
	if (py_proc_mem__open(&p->mem, as->pid)) {
		rn->st.no_handle++;
		node_proc_free(p);
		return NULL;
	}
	if (rn->pt && !proctrack__held_by(rn->pt, as, proctrack__records_now(rn->pt))) {
		rn->st.handed_over++;
		node_proc_free(p);
		return NULL;
	}
	py_snap__init(&p->snap, &p->mem.mem);
	p->heap = (struct node_mem){ p->snap.mem.read, p->snap.mem.ctx };
	for (size_t i = 0; i < as->nr_maps && f->builtins_end; i++) {
		const struct mapping *m = &as->maps[i];

		if (m->exec && m->dev == f->dev && m->ino == f->ino &&
		    m->pgoff <= f->builtins_off && f->builtins_end <= m->pgoff + (m->end - m->start)) {
			p->builtins_start = m->start + (f->builtins_off - m->pgoff);
			p->builtins_end = m->start + (f->builtins_end - m->pgoff);
		}
	}
	rn->st.processes++;
	if (f->ni.node_major >= 0)
		pr_info("node: pid %d runs Node.js %d.%d.%d (V8 %d.%d.%d) (%s)\n", (int)as->pid,
			f->ni.node_major, f->ni.node_minor, f->ni.node_patch, f->ni.v8_major,
			f->ni.v8_minor, f->ni.v8_build, f->path);
	else
		pr_info("node: pid %d runs Node.js (V8 %d.%d.%d) (%s)\n", (int)as->pid,
			f->ni.v8_major, f->ni.v8_minor, f->ni.v8_build, f->path);
	return p;
}

/* Looks at image as: its first time, or its mappings changed since without Node found. */
void node_look(struct run_node *rn, const struct addr_space *as)
{
	struct seen *s = hashmap__find(&rn->images, IMAGE_KEY(as));

	if (s && (s->p || s->generation == as->generation || as->end_time || as->released))
		return;
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s || hashmap__add(&rn->images, IMAGE_KEY(as), s)) {
			free(s);
			return;
		}
	}
	s->generation = as->generation;
	for (size_t i = 0; i < as->nr_maps; i++) {
		const struct mapping *m = &as->maps[i];
		const struct node_file *f;

		if (!m->exec || !mapping__is_file(m) || !m->path)
			continue;
		f = file_of(rn, as, m);
		if (f && f->res == 1) {
			s->p = proc_new(rn, as, f);
			return;
		}
	}
}
