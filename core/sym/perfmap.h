/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Symbols of JIT-generated code from /tmp/perf-PID.map ("START SIZE name"
 * per line, hex, with or without 0x), the convention of perf, the JVM's
 * perf-map-agent, node --perf-basic-prof and others. The file is read under
 * the process's root, named by its pid in its own namespace.
 */
#ifndef CORE_SYM_PERFMAP_H
#define CORE_SYM_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct perfmap;

/*
 * Load the map of process pid (pid in our namespace). Returns NULL if there
 * is none; a file owned by neither the process's user nor root is ignored,
 * and *warning says why (static text, or NULL).
 */
struct perfmap *perfmap__load(pid_t pid, const char **warning, char *path, size_t path_len);
/*
 * The same for one lifetime of pid: the file must be owned by owner (or
 * root; PERFMAP_ANY_OWNER: the process's user now) and made no earlier than
 * not_before_ns (CLOCK_REALTIME; 0: any time), by its birth time where the
 * file system keeps one (statx), else its ctime. It is read under the
 * process's root only while pid is still the process that began by
 * began_ns (wall clock; 0: not known, any process of pid; -1: the
 * lifetime is known to have ended, never under /proc/PID): one that took
 * the pid since has its own root, and its map is not that lifetime's.
 * A file mounted at the map's name (a bind mount) is refused. A map is
 * kept once for all processes that name the same file (hard links), within
 * bounds per file and in all (see perfmap.c): what is cut is said in a
 * warning on stderr.
 */
#define PERFMAP_ANY_OWNER ((uid_t)-1)
struct perfmap *perfmap__load_checked(pid_t pid, uid_t owner, int64_t not_before_ns,
				      int64_t began_ns, const char **warning, char *path,
				      size_t path_len);
/*
 * The same, the process's root used only if holder->held says, once
 * /proc/PID is open, that the process there is still the one meant (the
 * tracker's check of exit records, proctrack__held_by).
 */
struct perfmap_holder {
	bool (*held)(void *ctx);
	void *ctx;
};
struct perfmap *perfmap__load_held(pid_t pid, uid_t owner, int64_t not_before_ns,
				   int64_t began_ns, const struct perfmap_holder *holder,
				   const char **warning, char *path, size_t path_len);
/* Load from a given file, trusting it (tests). */
struct perfmap *perfmap__load_file(const char *path);
void perfmap__free(struct perfmap *pm);

const char *perfmap__lookup(const struct perfmap *pm, uint64_t addr, uint64_t *offset);

#endif
