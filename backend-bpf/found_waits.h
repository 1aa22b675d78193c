/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Off-CPU waits of Python threads that began before the run knew the
 * thread (issue 35 bug 5): the program walks a thread's frames at its
 * switch-out only where its process and thread are known then, so a main
 * thread in Thread.join since before its process was found, or a script's
 * first time.sleep, waited without Python frames for the whole of it. When
 * a thread becomes known and is switched out (its start entry holds no
 * frames), its frames are read from user space while it still waits, and
 * named then; the wait's sum takes them when it is drained.
 */
#ifndef BPF_BACKEND_FOUND_WAITS_H
#define BPF_BACKEND_FOUND_WAITS_H

#include <stdint.h>

#include "bpf/offcpu_maps.h"
#include "core/agg/pipeline.h"
#include "core/backend/backend.h"
#include "core/sample/sample.h"

struct found_waits;

struct found_waits *found_waits__new(const struct interp_reader *ir, struct pipeline *p,
				     int start_fd);
void found_waits__free(struct found_waits *fw);
/*
 * The threads the reader has known for under 2 s (the first 256): those
 * switched out without frames are read. 0 or -ENOMEM.
 */
int found_waits__scan(struct found_waits *fw);
/*
 * A drained sum k without Python frames: where it is the wait of a thread
 * read by a scan (same thread, process and native stacks), its frames go
 * into s, and the thread's entry goes.
 */
void found_waits__apply(struct found_waits *fw, const struct offcpu_key *k, struct sample *s);
/* Waits that took frames read this way (-v). */
uint64_t found_waits__applied(const struct found_waits *fw);

#endif
