/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPython seen from outside: which mapped file of a process is the
 * interpreter, where its threads keep their state, their frames as the
 * in-kernel walk (bpf/python.bpf.c) reads them, and the names, files and
 * lines of the code objects those frames run.
 *
 * Everything here reads another process's memory, which its owner controls:
 * every length, offset and loop is bounded, garbage ends in a status or an
 * error, never in a crash, and what one process's memory says is only ever
 * used for that process (a code cache is bound to one process's reader).
 * x86-64, default (GIL) builds of CPython 2.7 and 3.6 to 3.14; glibc.
 *
 * Functions return 0 (or a count) on success, -errno on failure.
 */
#ifndef INTERP_PYTHON_PYTHON_H
#define INTERP_PYTHON_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/python_maps.h"
#include "core/lib/log.h"

/* ---- Layouts: bpf/python_layouts.h as a table -------------------------- */

/* One PY*_ prefix of bpf/python_layouts.h; offsets are -1 where the version has no such field. */
struct py_layout {
	enum py_layout_id id;
	int major, minor;		/* the first version it serves (3.9 is served by 3.8's) */
	int32_t runtime_interp_head, interp_next, interp_threads_head;
	int32_t tstate_next, tstate_interp, tstate_frame, cframe_current;
	int32_t tstate_thread_id, tstate_native_tid;
	int32_t frame_read, frame_code, frame_back, frame_lasti, frame_entry;
	int32_t code_filename, code_name, code_qualname, code_firstlineno, code_linetable;
	int32_t code_version;
	int32_t code_code, code_adaptive;
	int32_t str_data, str_state, str_ascii_size, str_compact_size;
	uint64_t code_tag_bits;
	uint8_t lasti_kind;		/* PY_LASTI_* */
	uint8_t entry_kind;		/* PY_ENTRY_* */
	uint8_t str_kind;		/* PY_STR_* */
	uint8_t lines_kind;		/* PY_LINES_* */
};

/* The layout of id (enum py_layout_id), or NULL. */
const struct py_layout *py_layout__by_id(unsigned int id);
/* The layout that reads major.minor (3.9 -> 3.8's), or NULL for a version not in the table. */
const struct py_layout *py_layout__for_version(int major, int minor);

/* Whether a walked frame is the C stack's entry shim of 3.12+ (owner >= 3), not a Python function. */
static inline bool py_frame__is_shim(const struct py_layout *l, const struct py_frame *f)
{
	return l->entry_kind == PY_ENTRY_OWNER && (f->code & PY_FRAME_ENTRY);
}

/* ---- Memory of a process --------------------------------------------------- */

/* Longest single read: longer ones fail with -E2BIG. */
#define PY_MEM_MAX_READ (256 * 1024)

/*
 * Reads len bytes at addr of one address space into buf: 0, or -EFAULT
 * (not all mapped: a partial read is a failure), -ESRCH (the process is
 * gone), -EPERM (no ptrace-mode access), -E2BIG (len > PY_MEM_MAX_READ).
 */
struct py_mem {
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	void *ctx;
};

/* Reads through mem after the checks every reader shares (length, wrap-around). */
int py_mem__read(const struct py_mem *mem, uint64_t addr, void *buf, size_t len);

/*
 * A live process (ptrace-mode access needed): through a handle to its
 * /proc/PID/mem, which reads the address space it was opened on or nothing
 * (-ESRCH once that is gone), never a process that took the pid since;
 * else by pid with process_vm_readv (whatever process has the pid then).
 */
struct py_proc_mem {
	struct py_mem mem;
	pid_t pid;
	int fd;				/* /proc/PID/mem; -1: closed (reads -ESRCH) */
	bool by_pid;
};
/* By pid. */
void py_proc_mem__init(struct py_proc_mem *pm, pid_t pid);
/* Through a handle opened now: 0, or -errno (then reads fail). */
int py_proc_mem__open(struct py_proc_mem *pm, pid_t pid);
/* Through fd, a handle opened by py_proc_mem__open (not closed here). */
void py_proc_mem__use_fd(struct py_proc_mem *pm, pid_t pid, int fd);
/* Closes the handle, if any: reads then fail with -ESRCH. */
void py_proc_mem__close(struct py_proc_mem *pm);

/* A memory image made of address ranges (tests, the fuzz target). */
struct py_image;
struct py_image *py_image__new(void);
/* Adds a copy of data at addr; ranges must not overlap (-EEXIST) nor wrap (-EINVAL). */
int py_image__add(struct py_image *img, uint64_t addr, const void *data, size_t len);
/* A reader of img, valid while img lives: reads must lie within one range. */
void py_image__mem(struct py_image *img, struct py_mem *mem);
void py_image__free(struct py_image *img);

/*
 * A snapshot for one walk: reads through it are served from whole pages
 * read once each (PY_SNAP_PAGES of them, then the oldest is read again), so
 * a 3.11+ stack, whose frames sit together in the thread's datastack chunk,
 * costs a system call or two instead of one per frame, and the frames of a
 * page are read at one instant. Nothing is kept past py_snap__reset.
 */
#define PY_SNAP_PAGES 8
#define PY_SNAP_PAGE_SIZE 4096
struct py_snap {
	struct py_mem mem;		/* read through this */
	const struct py_mem *under;
	unsigned int next, syscalls;
	struct {
		uint64_t addr;		/* page address; UINT64_MAX when empty */
		int err;		/* the page's read failed with this */
		uint8_t data[PY_SNAP_PAGE_SIZE];
	} pages[PY_SNAP_PAGES];
};
void py_snap__init(struct py_snap *s, const struct py_mem *under);
void py_snap__reset(struct py_snap *s);

/* ---- Detection: which mapped file is the interpreter ----------------------- */

enum py_version_source {
	PY_VERSION_FROM_PY_VERSION,	/* the Py_Version constant (3.11+) */
	PY_VERSION_FROM_DEBUG_OFFSETS,	/* _Py_DebugOffsets at _PyRuntime (3.13+) */
	PY_VERSION_FROM_NAME,		/* soname or file name: libpython3.X, python3.X */
	PY_VERSION_FROM_RODATA,		/* a lone "3.X.Y" string in .rodata */
};

struct py_range {
	uint64_t start, end;		/* [start, end) in the process */
};

#define PY_MAX_EVAL_RANGES 4

/* An interpreter found in a process; addresses are the process's (ELF vaddr + bias). */
struct py_interp {
	int major, minor, micro;	/* micro -1 when only a name told */
	uint32_t hexversion;		/* PY_VERSION_HEX when Py_Version or the debug offsets gave it */
	enum py_version_source version_from;
	const struct py_layout *layout;
	uint64_t bias;
	uint64_t runtime;		/* _PyRuntime (3.7+), else 0 */
	uint64_t interp_head;		/* the variable interp_head (2.7, 3.6; .symtab), else 0 */
	uint64_t tstate_current;	/* the variable _PyThreadState_Current (2.7, 3.6), else 0 */
	uint64_t code_type;		/* PyCode_Type: every code object's ob_type */
	uint64_t str_type;		/* PyUnicode_Type (PyString_Type for 2.7), 0 if not found */
	uint64_t bytes_type;		/* PyBytes_Type (PyString_Type for 2.7), 0 if not found */
	/* _PyEval_EvalFrameDefault (PyEval_EvalFrameEx for 2.7) and their .cold parts. */
	struct py_range eval[PY_MAX_EVAL_RANGES];
	unsigned int nr_eval;
	bool shared;			/* a libpython shared library, not an executable */
	bool symbols_from_debug_file;	/* some symbols came from its separate debug file */
};

/*
 * Whether the ELF file open as fd (the caller opened it and checked its
 * identity; it stays the caller's), mapped with load bias bias and found at
 * path (for the version in its name and its debuglink), is a CPython
 * interpreter: 1 with *pi filled; 0 when it is not one (an executable that
 * links libpython is not: its library is; a file that does not export
 * PyCode_Type in .dynsym is not, which one look at .dynsym settles for the
 * other binaries of a host); -ENOTSUP for an interpreter that
 * cannot be read here (free-threaded, debug build, unknown version, missing
 * symbols), with the one-line reason in why; other -errno when the file
 * cannot be read as ELF.
 */
int py_detect(int fd, const char *path, uint64_t bias, struct py_interp *pi, struct errmsg *why);

/*
 * Checks a detected interpreter against the process's memory: 3.13+ the
 * _Py_DebugOffsets at _PyRuntime (cookie, version, not free-threaded, and
 * every offset the table also has), for all versions that PyCode_Type's
 * tp_name reads "code". 0; -ENOTSUP with why when the memory disagrees;
 * the reader's error when it cannot be read.
 */
int py_interp__validate(struct py_interp *pi, const struct py_mem *mem, struct errmsg *why);

/*
 * Whether pi's process runs an interpreter yet: 1 when its first
 * interpreter exists, 0 when there is none (libpython mapped by a program
 * that has not called Py_Initialize, or has finalized it), -errno when that
 * cannot be read. A stripped 2.7/3.6 without interp_head tells only while a
 * thread holds the GIL: 1 then, as before it was asked.
 */
int py_interp__running(const struct py_interp *pi, const struct py_mem *mem);

/* Whether ip (a process address) lies in the eval loop or its .cold part. */
bool py_interp__in_eval(const struct py_interp *pi, uint64_t ip);

/* ---- Threads ------------------------------------------------------------ */

#define PY_MAX_THREADS 4096
#define PY_MAX_INTERPS 64
/* glibc x86-64's offsetof(struct pthread, tid), when libc does not say. */
#define PY_GLIBC_TID_OFFSET 720

struct py_tstate {
	uint64_t tstate;		/* its PyThreadState */
	uint64_t interp;		/* its PyInterpreterState */
	uint64_t check;			/* as struct py_thread.check */
	uint32_t tid;			/* in the process's pid namespace; 0 when unknown */
};

/* py_threads__read's *flags */
#define PY_THREADS_TRUNCATED 1		/* more than max threads or PY_MAX_INTERPS interpreters */
#define PY_THREADS_CYCLE 2		/* a list looped back: it ended there */
#define PY_THREADS_FAULT 4		/* a state could not be read: its list ended there */
#define PY_THREADS_FROM_GIL 8		/* 2.7/3.6 without interp_head: the GIL holder's interpreter */

/*
 * Every thread of every interpreter of pi's process, at most max into out.
 * The tid is native_thread_id (3.11+), else read from the thread's struct
 * pthread (pthread_t = its address) at pthread_tid_offset (from
 * py_glibc_tid_offset, or PY_GLIBC_TID_OFFSET; musl is not supported: its
 * tids come out wrong or 0). Returns the count, or -errno when the first
 * interpreter cannot be found: -EAGAIN for 2.7/3.6 without interp_head while
 * no thread holds the GIL (try later).
 */
int py_threads__read(const struct py_interp *pi, const struct py_mem *mem,
		     uint32_t pthread_tid_offset, struct py_tstate *out, size_t max,
		     unsigned int *flags);

/*
 * offsetof(struct pthread, tid) as glibc publishes it for libthread_db
 * (_thread_db_pthread_tid: {bits, count, offset}) in libc.so.6 (2.34+) or
 * libpthread.so.0 open as fd (the caller's). 0 or -ENOENT.
 */
int py_glibc_tid_offset(int fd, uint32_t *offset);

/* A thread id as the process's pid namespace sees it, and as /proc (ours) does. */
struct py_nstid {
	uint32_t ns_tid, host_tid;
};
/*
 * The threads of pid from /proc/PID/task/ * /status NSpid lines, at most max.
 * Count or -errno.
 */
int py_nstids(pid_t pid, struct py_nstid *out, size_t max);

/* ---- Frames ----------------------------------------------------------------- */

/* A thread's Python stack as the in-kernel walk reads it, leaf first. */
struct py_stack {
	uint32_t nr_frames;
	uint32_t status;		/* 0, PY_WALK_TRUNCATED or PY_WALK_FAULT */
	struct py_frame frames[PY_MAX_FRAMES];
};

/*
 * Walks the frames of the thread state tstate by the rules of the in-kernel
 * walk: code (tag bits cleared, 3.14) | PY_FRAME_ENTRY (3.11 is_entry, 3.12+
 * owner >= 3), lasti and the code object's identity (PY_CODE_IDENT; 0 for
 * a shim or a code object that cannot be read) per frame, PY_MAX_FRAMES at
 * most (more, or a loop:
 * PY_WALK_TRUNCATED), a frame that cannot be read ends it (PY_WALK_FAULT).
 * 0 (nr_frames 0: no Python code runs there), or the reader's error when
 * tstate itself cannot be read.
 */
int py_walk(const struct py_layout *l, const struct py_mem *mem, uint64_t tstate,
	    struct py_stack *st);
/*
 * The newest frame alone, as py_walk reads it first, and its address
 * (*addr 0: no Python code runs there): 0, or the reader's error. A walk
 * that races its thread checks by it that the thread is still where the
 * walk began.
 */
int py_walk_leaf(const struct py_layout *l, const struct py_mem *mem, uint64_t tstate,
		 struct py_frame *f, uint64_t *addr);

/* ---- Names ------------------------------------------------------------------ */

#define PY_NAME_MAX 1024		/* bytes of a function name kept */
#define PY_PATH_MAX 4096		/* bytes of a file name kept */
#define PY_LINETABLE_MAX (64 * 1024)	/* a longer line table gives no lines */

struct py_code_info {
	const char *name;		/* co_qualname (3.11+), else co_name; valid UTF-8 */
	const char *file;		/* co_filename, full, valid UTF-8 */
	int line;			/* of the frame's lasti; 0 when unknown */
	int firstline;			/* co_firstlineno */
	bool stale;			/* from the cache, not checked (the process could not be read) */
};

/* Code objects of one process, by address. */
struct py_codes;

/*
 * A cache of pi's process, read through mem (which must stay valid and
 * always read that process): an entry can only describe what mem read.
 * Each lookup reads the code object's header: a cache made over the
 * py_snap of the walk (one snapshot per process, reset before each walk)
 * checks a sample's frames from the pages already read (measured on a
 * 53-deep 3.12 stack: 42 us a sample named, 7 reads, against 450 us and
 * 106 reads through the process directly).
 */
struct py_codes *py_codes__new(const struct py_interp *pi, const struct py_mem *mem);
void py_codes__free(struct py_codes *c);
/*
 * The name, file and line of a frame (code as walked, PY_FRAME_ENTRY
 * ignored; ident and lasti as walked). The code object's header is read
 * again: named from it (or its cached entry, when unchanged) only when it
 * is a live code object with the frame's identity (ident 0: not known,
 * any); else the object the frame ran is gone (freed, maybe another object
 * in its memory) and only an entry cached under its identity names it, or
 * the lookup fails with -ESTALE. When the process cannot be read any more, an
 * entry of the identity is given as stale. Strings stay valid until
 * py_codes__free. 0, -ESTALE, -EINVAL for what is not a code object (a
 * shim's None, garbage), -ENOSPC when the cache holds all the names it
 * may, or the reader's error.
 */
int py_codes__lookup(struct py_codes *c, uint64_t code, uint64_t ident, uint64_t lasti,
		     struct py_code_info *info);
/* Whether code, of identity ident, has an entry: named once, no memory read now. */
bool py_codes__has(const struct py_codes *c, uint64_t code, uint64_t ident);
/* Code objects cached. */
size_t py_codes__count(const struct py_codes *c);

/*
 * What a cache holds for its process, and what it refused. Names and line
 * tables are held once each however many code objects share them, and
 * count against one budget (32 MiB, py_codes__set_limit): past it, a name
 * not held fails its lookup (-ENOSPC), a line table not held leaves its
 * frames without their line.
 */
struct py_codes_held {
	size_t limit;			/* the budget */
	size_t name_bytes;
	size_t tables, table_bytes;
	uint64_t names_refused;
	uint64_t tables_refused, table_bytes_refused;
};
void py_codes__held(const struct py_codes *c, struct py_codes_held *out);
/* The most bytes of names and line tables c may hold (tests: a small budget). */
void py_codes__set_limit(struct py_codes *c, size_t bytes);

/*
 * py-spy's short file name, simplified: the part after the last
 * "site-packages/" or "dist-packages/", else the base name; a name without
 * '/' ("<frozen importlib._bootstrap>", "<string>") as it is. A pointer
 * into path.
 */
const char *py_short_filename(const char *path);

#endif
