/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The lookups the in-kernel unwinder does (bpf/native_maps.h), done from
 * user space on the real maps, so that tests hold the store to what the
 * program will read: native_pages (64 KiB, then 4 KiB where SPLIT) ->
 * native_index -> the 16 bisection steps over native_rows -> native_rules,
 * the row's fold applied as unwind_table__lookup applies it.
 */
#ifndef TESTS_SUPPORT_NATIVE_READ_H
#define TESTS_SUPPORT_NATIVE_READ_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend-bpf/native_store.h"

struct native_read {
	struct native_page page;	/* the entry found (kind 0: none) */
	uint64_t vaddr;			/* pc - bias */
	int64_t row;			/* its row in native_rows, or -1 */
	struct native_rule rule;	/* the fold applied; NONE where no row covers pc */
};

/*
 * Look pc of tgid up. Returns 0 (out->rule NONE where the table has no
 * row there), -ENOENT (no native_procs or native_pages entry for it), or
 * -EBADMSG (an entry says what cannot be: a SPLIT without its 4 KiB
 * entry, a range past native_rows, a rule id past native_rules).
 */
int native_read__lookup(const struct native_maps_fds *fds, uint32_t tgid, uint64_t pc,
			struct native_read *out);

/*
 * The store's maps, created at their default sizes (ck_assert: each made),
 * the rows and rules mappable where mapped (as the loader makes them on
 * 5.5+; the store then writes them in place); closed.
 */
void native_read__make_maps(struct native_maps_fds *fds, bool mapped);
void native_read__close_maps(struct native_maps_fds *fds);

/* argv started, once its /proc/PID/maps names want and libc (its exec done); ck_abort else. */
pid_t spawn_mapped(char *const argv[], const char *want);
/* A child of spawn_mapped killed and reaped. */
void stop_child(pid_t pid);
/* The executable mapping of libc in pid: start, end, pgoff and path (ck_abort if none). */
void libc_mapping(pid_t pid, uint64_t *start, uint64_t *end, uint64_t *pgoff, char *file,
		  size_t len);

#endif
