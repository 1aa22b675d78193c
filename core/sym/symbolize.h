/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Turns addresses into function names: user addresses through a process's
 * mappings and the ELF files behind them, kernel addresses through kallsyms.
 * ELF symbol tables are loaded once per file and shared by all processes;
 * those of files idle for a while can be freed (symbolizer__drop_idle) and
 * are read again when next needed.
 */
#ifndef CORE_SYM_SYMBOLIZE_H
#define CORE_SYM_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/proc/proctrack.h"
#include "core/sym/dwarfline.h"

struct symbolizer;

/* The strings live until the next symbolizer__drop_idle: copy what is kept. */
struct frame_sym {
	const char *name;	/* NULL when unknown */
	uint64_t offset;	/* into the function */
	const char *module;	/* file base name, or kernel module; "kernel" for the kernel */
};

struct symbolizer *symbolizer__new(void);
void symbolizer__free(struct symbolizer *s);
/* The tracker whose images are symbolized: asked whether a pid is still an image's (perf maps). */
void symbolizer__set_tracker(struct symbolizer *s, struct proctrack *pt);

/* Use this kallsyms file instead of /proc/kallsyms (tests). */
void symbolizer__set_kallsyms(struct symbolizer *s, const char *path);

/* Read kallsyms now (before sampling), so that the report does not wait for it. */
void symbolizer__preload_kernel(struct symbolizer *s);

void symbolizer__user(struct symbolizer *s, const struct addr_space *as, uint64_t addr,
		      struct frame_sym *out);
/*
 * One frame of a user stack: a caller's return address is looked up at
 * ip - 1; the unwinder's STACK_TRUNCATED_IP prints as "[truncated]",
 * STACK_GO_SWITCH_IP as "[goroutine stack not followed]".
 */
void symbolizer__user_frame(struct symbolizer *s, const struct addr_space *as, uint64_t ip,
			    bool caller, struct frame_sym *out);
/*
 * Read each binary's DWARF (its own or its debug file's) along with its
 * symbols, for symbolizer__user_source. Call before the first lookup.
 */
void symbolizer__want_source(struct symbolizer *s);
/*
 * The source position of a user address (look up a caller's at ip - 1): the
 * functions inlined there, innermost first, then the function holding the
 * code, each with file and line (dwarf_lines__lookup). 0 when the binary has
 * no DWARF or source lines were not wanted. Strings live until the next
 * symbolizer__drop_idle.
 */
unsigned int symbolizer__user_source(struct symbolizer *s, const struct addr_space *as,
				     uint64_t addr, struct src_frame *out, unsigned int max);
void symbolizer__kernel(struct symbolizer *s, uint64_t addr, struct frame_sym *out);

/*
 * The file a mapping's symbols come from, as an identity: one pointer for
 * every mapping of the same file (device, inode, change time and path, as
 * checked when it is opened), whatever the process, valid as long as s. A
 * user address of a file mapping is named from this and its offset into
 * the file alone. NULL for memory that is not a file, or out of memory.
 */
/* Whether as's process has a JIT map (/tmp/perf-PID.map) to name code outside its files. */
bool symbolizer__has_jit_map(struct symbolizer *s, const struct addr_space *as);
/* as is about to be freed: drop what is kept for it (its JIT map), keyed by its address. */
void symbolizer__forget_space(struct symbolizer *s, const struct addr_space *as);
const void *symbolizer__file_of(struct symbolizer *s, const struct addr_space *as,
				const struct mapping *m);

/* The build-id (hex) of the file behind a mapping, or NULL. */
const char *symbolizer__build_id(struct symbolizer *s, const struct addr_space *as,
				 const struct mapping *m);

struct symbolizer_stats {
	size_t files;		/* user files seen */
	size_t loaded;		/* of which with their tables in memory now */
	uint64_t dropped;	/* tables freed while their file was idle */
	uint64_t reloaded;	/* of those, read again at a later lookup */
	uint64_t reload_failures;	/* could not be read again: [unknown] from then on */
	size_t table_bytes;	/* symbol tables held (ELF, kernel), not libdw's DWARF */
};

/*
 * Free the symbol tables and DWARF (and the descriptors they hold) of files
 * whose names were not looked up for idle_ms, keeping each file's identity
 * (symbolizer__file_of) and build-id: a later lookup reads them again. The
 * clock is read here, once per call; lookups until the next call count as
 * made at this one. Returns how many files' tables were freed.
 */
unsigned int symbolizer__drop_idle(struct symbolizer *s, int64_t idle_ms);
void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *st);

/* Print the one-line warnings about what could not be symbolized (-v: the tables dropped). */
void symbolizer__report_problems(struct symbolizer *s);

#endif
