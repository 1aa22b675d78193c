// SPDX-License-Identifier: GPL-2.0
/*
 * --unwind: the backends' unwinding chosen in one place, and auto's
 * verdicts per binary and per process (unwind_verdict.h).
 */
#include "app/run/unwind_verdict.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "core/lib/log.h"
#include "core/proc/proctrack.h"
#include "interp/node/node.h"

/* Processes decided, by thread group: their threads ask one after another. */
struct process_verdict {
	pid_t tgid;
	bool copies;
};

/* runs_node's, apart from the verdicts: a file looked at by node_detect only, nothing compiled. */
struct node_file {
	uint64_t dev, ino;
	bool node;
};

struct node_verdicts {
	struct node_file *files;
	size_t nr_files, cap_files;
};

struct unwind_verdicts {
	struct unwind_binary *bins;
	size_t nr_bins, cap_bins;
	struct process_verdict *procs;
	size_t nr_procs, cap_procs;
	bool copy_node;		/* --node is not off: Node's processes take copies */
	struct node_verdicts node;	/* runs_node's, apart: no binary compiled for it */
};

/*
 * Room in *arr (of *cap elements of size bytes, nr used) for one more: the
 * array grown by doubling where full. False: out of memory, *arr as it was.
 */
static bool room_for_one(void **arr, size_t *cap, size_t nr, size_t size)
{
	size_t ncap = *cap ? 2 * *cap : 16;
	void *n;

	if (nr < *cap)
		return true;
	n = realloc(*arr, ncap * size);
	if (!n)
		return false;
	*arr = n;
	*cap = ncap;
	return true;
}

/* bcc's id maps: read by the frame-pointer programs only (auto gives way to them). */
static const char *idmap_option(const struct run_opts *o)
{
	return o->cgroupmap ? "--cgroupmap" : o->mntnsmap ? "--mntnsmap" : NULL;
}

/*
 * Under auto, what makes every user stack a frame-pointer walk, NULL for
 * nothing: bcc's id maps (neither the native programs nor the stack-copy
 * one reads them).
 */
static const char *auto_fp_reason(const struct run_opts *o)
{
	if (o->unwind != UNWIND_AUTO || o->kernel_only)
		return NULL;
	return idmap_option(o);
}

void unwind_choice__config(const struct run_opts *o, struct backend_config *c)
{
	bool fp = auto_fp_reason(o) != NULL;

	c->dwarf = run_opts__dwarf(o) && !fp;
	c->native_unwind = o->unwind == UNWIND_AUTO && !o->kernel_only && !fp;
	/*
	 * Off-CPU stacks: the bpf backend unwinds auto's in its switch program
	 * by the tables (it refuses dwarf's copies); perf copies dwarf's at
	 * switch-out, and walks auto's by frame pointers: a copy a switch
	 * overflowed the rings of unprivileged users (the kernel matrix's
	 * nobody rows lost 11,112 of 12,947) and, under emulation, root's too
	 * now and then (a run whose waits all lost their callers).
	 */
	c->off_cpu_dwarf = o->unwind == UNWIND_DWARF && run_opts__dwarf(o);
	c->needs_copies = NULL;
	c->needs_copies_ctx = NULL;
	c->copies_for_interp = NULL;
	c->copies_for_interp_ctx = NULL;
}

void unwind_choice__print(const struct run_opts *o, const char *backend)
{
	bool per_task = (o->nr_pids || o->nr_tids) && !o->nr_cgroups;
	const char *fp = auto_fp_reason(o);
	bool is_auto = o->unwind == UNWIND_AUTO && run_opts__dwarf(o);
	bool perf_auto = is_auto && !strcmp(backend, "perf"), bpf_auto = is_auto && !perf_auto;

	if (fp)
		pr_info("unwind: auto: frame pointers: %s is read only by the programs that walk "
			"them (neither the in-kernel unwinder nor the stack-copy program reads "
			"bcc's maps)\n", fp);
	else if (perf_auto && !run_opts__on_cpu(o))
		pr_info("unwind: auto: off-CPU stacks by frame pointers on the perf backend (a copy "
			"at every switch-out overflowed its rings; --unwind dwarf takes them)\n");
	else if (perf_auto && per_task)
		pr_info("unwind: auto: per process, frame pointers where every binary it maps keeps "
			"them, else .eh_frame over a %u-byte copy of each user stack\n",
			o->stack_dump_size);
	else if (bpf_auto && !run_opts__on_cpu(o))
		/* The bpf backend says which it loaded (backend-bpf/offcpu.c). */
		pr_info("unwind: auto: .eh_frame compiled into tables that the switch program "
			"unwinds by, where the kernel takes it; else frame pointers\n");
	else if (bpf_auto)
		/* The bpf backend says which it loaded (backend-bpf/native.c). */
		pr_info("unwind: auto: .eh_frame compiled into tables that the BPF program unwinds "
			"by, where the kernel takes it; else over a %u-byte copy of each user stack\n",
			o->stack_dump_size);
	else if (is_auto)
		pr_info("unwind: auto: .eh_frame over a %u-byte copy of each user stack (%s)\n",
			o->stack_dump_size,
			o->command ? "a launched command's events are opened before it maps "
				     "anything, and inherited by what it runs"
				   : "system-wide events cannot choose per process");
	else if (run_opts__dwarf(o))
		pr_info("unwind: dwarf (.eh_frame over a %u-byte copy of each user stack, in user "
			"space)\n",
			o->stack_dump_size);
	else
		pr_info("unwind: frame pointers (callchains taken by the kernel)\n");
	if (!fp && perf_auto && run_opts__on_cpu(o) && run_opts__off_cpu(o))
		pr_info("unwind: auto: off-CPU stacks by frame pointers (--unwind dwarf copies them "
			"at switch-out)\n");
}

/* The smallest copy auto shrinks to: a few frames of a deep stack's top, libc's callers. */
#define AUTO_MIN_STACK_DUMP 4096

bool unwind_choice__shrink(struct run_opts *o, struct backend_config *c, const char *why)
{
	if (o->unwind != UNWIND_AUTO || !(c->dwarf || c->off_cpu_dwarf))
		return false;
	if (c->stack_dump_size / 2 >= AUTO_MIN_STACK_DUMP) {
		c->stack_dump_size /= 2;
		o->stack_dump_size = c->stack_dump_size;
		pr_info("unwind: auto: %s: trying %u-byte stack copies\n", why, c->stack_dump_size);
		return true;
	}
	c->dwarf = false;
	c->off_cpu_dwarf = false;
	c->native_unwind = false;
	c->needs_copies = NULL;
	c->needs_copies_ctx = NULL;
	c->copies_for_interp = NULL;
	c->copies_for_interp_ctx = NULL;
	pr_info("unwind: auto: %s: trying frame pointers\n", why);
	return true;
}

void unwind_choice__warn_shrunk(const struct backend_config *c, unsigned int asked)
{
	if (c->dwarf || c->off_cpu_dwarf)
		pr_warn("warning: unwind auto: stack copies of %u bytes, not %u, to fit the locked "
			"memory this user may have (a deeper stack ends early; ulimit -l or "
			"kernel.perf_event_mlock_kb would allow more)\n",
			c->stack_dump_size, asked);
	else
		pr_warn("warning: unwind auto: frame pointers: even %u-byte stack copies do not "
			"fit the locked memory this user may have (callers through code without "
			"frame pointers are lost; ulimit -l or kernel.perf_event_mlock_kb would "
			"allow copies)\n", c->stack_dump_size);
}

static bool needs_copies(void *ctx, pid_t tid)
{
	return unwind_verdicts__needs_copies(ctx, tid);
}

static bool runs_node(void *ctx, pid_t tgid)
{
	return unwind_verdicts__runs_node(ctx, tgid);
}

void unwind_verdicts__config(struct unwind_verdicts *v, const struct run_opts *o,
			     struct backend_config *c)
{
	if (v)
		v->copy_node = o->node != NODE_OFF;
	if (v && o->unwind == UNWIND_AUTO && c->dwarf) {
		c->needs_copies = needs_copies;
		c->needs_copies_ctx = v;
	}
	if (v && v->copy_node && o->unwind == UNWIND_AUTO && c->native_unwind) {
		c->copies_for_interp = runs_node;
		c->copies_for_interp_ctx = v;
	}
}

struct unwind_verdicts *unwind_verdicts__new(void)
{
	return calloc(1, sizeof(struct unwind_verdicts));
}

void unwind_verdicts__free(struct unwind_verdicts *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->nr_bins; i++)
		free(v->bins[i].path);
	free(v->bins);
	free(v->procs);
	free(v->node.files);
	free(v);
}

const struct unwind_binary *unwind_verdicts__binary(struct unwind_verdicts *v, int fd,
						    const char *path, uint64_t dev, uint64_t ino)
{
	struct unwind_binary *b;

	for (size_t i = 0; i < v->nr_bins; i++)
		if (v->bins[i].dev == dev && v->bins[i].ino == ino)
			return &v->bins[i];
	if (!room_for_one((void **)&v->bins, &v->cap_bins, v->nr_bins, sizeof(*v->bins)))
		return NULL;
	b = &v->bins[v->nr_bins];
	*b = (struct unwind_binary){ .dev = dev, .ino = ino, .path = strdup(path) };
	if (!b->path)
		return NULL;
	if (fd >= 0) {
		struct node_interp ni;
		struct errmsg why = { "" };

		unwind_verdict__of_fd(fd, &b->v);
		b->node = v->copy_node && node_detect(fd, 0, &ni, &why) == 1;
	} else {
		b->v.err = fd;
	}
	v->nr_bins++;
	return b;
}

/*
 * The file of a mapping, checked to be the one mapped (dev and inode as
 * /proc/PID/maps says): map_files where allowed, else the path in the
 * process's root. -errno when neither is that file.
 */
static int open_mapped(pid_t pid, uint64_t start, uint64_t end, const char *path, uint64_t dev,
		       uint64_t ino)
{
	char name[4096 + 64];
	struct stat st;
	int fd;

	snprintf(name, sizeof(name), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, start,
		 end);
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(name, sizeof(name), "/proc/%d/root%s", (int)pid, path);
		fd = open(name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	}
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_dev != dev ||
	    (uint64_t)st.st_ino != ino) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* An executable file mapping of a process: its range, file and identity. */
struct file_mapping {
	uint64_t start, end, dev, ino;
	const char *path;
};

/*
 * fn(ctx, pid, m) for every executable file mapping of pid's ([vdso] is the
 * kernel's: leaf code, frames kept; JIT code has no file) until it returns
 * true; whether one did, or -errno where the maps could not be read.
 */
static int each_file_mapping(pid_t pid,
			     bool (*fn)(void *ctx, pid_t pid, const struct file_mapping *m),
			     void *ctx)
{
	char path[64], line[4096 + 256];
	int done = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!done && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off, ino;
		unsigned int maj, min;
		char perms[8], file[4096];

		file[0] = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4095[^\n]", &start, &end, perms,
			   &off, &maj, &min, &ino, file) < 7)
			continue;
		if (perms[2] != 'x' || file[0] != '/' || !ino || strstr(file, " (deleted)"))
			continue;
		done = fn(ctx, pid,
			  &(struct file_mapping){ .start = start, .end = end, .path = file,
						  .dev = makedev(maj, min), .ino = ino });
	}
	fclose(f);
	return done;
}

/* What process_needs_copies gathers over the mappings. */
struct copies_scan {
	struct unwind_verdicts *v;
	bool copies;
	size_t *seen;		/* indexes: bins may move */
	size_t nr_seen;
};

static bool note_copies(void *ctx, pid_t pid, const struct file_mapping *m)
{
	struct copies_scan *cs = ctx;
	struct unwind_verdicts *v = cs->v;
	const struct unwind_binary *b;
	size_t *n;
	int fd = open_mapped(pid, m->start, m->end, m->path, m->dev, m->ino);

	b = unwind_verdicts__binary(v, fd, m->path, m->dev, m->ino);
	if (fd >= 0)
		close(fd);
	if (!b) {
		cs->copies = true;
		return false;
	}
	cs->copies |= unwind_verdict__needs_tables(&b->v) || (b->node && v->copy_node);
	n = realloc(cs->seen, (cs->nr_seen + 1) * sizeof(*cs->seen));
	if (n) {
		cs->seen = n;
		cs->seen[cs->nr_seen++] = (size_t)(b - v->bins);
	}
	return false;
}

/* Every executable file mapping of pid's: whether one needs copies. -errno if unread. */
static int process_needs_copies(struct unwind_verdicts *v, pid_t pid, bool *copies)
{
	struct copies_scan cs = { .v = v };
	int err = each_file_mapping(pid, note_copies, &cs);

	*copies = cs.copies;
	/* Every binary of a process that takes copies is unwound from them. */
	for (size_t i = 0; i < cs.nr_seen && cs.copies; i++)
		v->bins[cs.seen[i]].copies_seen = v->bins[cs.seen[i]].process_copies = true;
	free(cs.seen);
	return err < 0 ? err : 0;
}

bool unwind_verdicts__needs_copies(struct unwind_verdicts *v, pid_t tid)
{
	pid_t tgid = procfs__tgid_of(tid);
	bool copies;

	if (!tgid)
		return true;
	for (size_t i = 0; i < v->nr_procs; i++)
		if (v->procs[i].tgid == tgid)
			return v->procs[i].copies;
	if (process_needs_copies(v, tgid, &copies))
		copies = true;
	if (!room_for_one((void **)&v->procs, &v->cap_procs, v->nr_procs, sizeof(*v->procs)))
		return copies;
	v->procs[v->nr_procs++] = (struct process_verdict){ .tgid = tgid, .copies = copies };
	pr_debug("unwind: process %d: %s\n", (int)tgid,
		 copies ? "stack copies (a binary it maps keeps no frame pointers, or runs Node.js)"
			: "frame pointers (every binary it maps keeps them)");
	return copies;
}

/*
 * Whether m is Node's (runs_node's question): node_detect once a file, kept
 * apart from the verdicts' binaries, for which each is compiled.
 */
static bool is_node(void *ctx, pid_t pid, const struct file_mapping *m)
{
	struct node_verdicts *nv = &((struct unwind_verdicts *)ctx)->node;
	struct node_interp ni;
	struct errmsg why = { "" };
	bool node;
	int fd;

	for (size_t i = 0; i < nv->nr_files; i++)
		if (nv->files[i].dev == m->dev && nv->files[i].ino == m->ino)
			return nv->files[i].node;
	fd = open_mapped(pid, m->start, m->end, m->path, m->dev, m->ino);
	if (fd < 0)
		return false;	/* not known as any file: looked at again at the next question */
	node = node_detect(fd, 0, &ni, &why) == 1;
	close(fd);
	if (!room_for_one((void **)&nv->files, &nv->cap_files, nv->nr_files, sizeof(*nv->files)))
		return node;
	nv->files[nv->nr_files++] = (struct node_file){ .dev = m->dev, .ino = m->ino, .node = node };
	return node;
}

bool unwind_verdicts__runs_node(struct unwind_verdicts *v, pid_t tgid)
{
	return tgid > 0 && v->copy_node && each_file_mapping(tgid, is_node, v) > 0;
}

void unwind_verdicts__copied(struct unwind_verdicts *v, int fd, const char *path, uint64_t dev,
			     uint64_t ino)
{
	const struct unwind_binary *b = unwind_verdicts__binary(v, fd, path, dev, ino);

	if (b)
		v->bins[b - v->bins].copies_seen = true;
}

void unwind_verdicts__report(const struct unwind_verdicts *v)
{
	char why[256];

	if (!v)
		return;
	for (size_t i = 0; i < v->nr_bins; i++) {
		const struct unwind_binary *b = &v->bins[i];

		unwind_verdict__describe(&b->v, b->copies_seen ? UNWIND_WAY_COPIES : UNWIND_WAY_FP,
					 why, sizeof(why));
		/* One that keeps them is copied with the code of its process that does not. */
		pr_info("unwind: %s: %s%s\n", b->path, why,
			b->node && b->process_copies && v->copy_node
				? ", a Node.js binary: its processes' stacks are copied for their "
				  "JavaScript frames"
			: b->process_copies && !b->v.err && b->v.share.keeps
				? ", with its process's code without frame pointers"
				: "");
	}
}
