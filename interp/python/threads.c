// SPDX-License-Identifier: GPL-2.0
/*
 * Every thread state of a Python process: the interpreters' list from
 * _PyRuntime (3.7+), interp_head (2.7, 3.6) or, without that symbol, the
 * GIL holder's interpreter; each interpreter's thread list; the OS thread
 * of each state. Lists live in memory the process owns: they are bounded
 * and a state seen twice ends its list.
 */
#include <errno.h>
#include <stdlib.h>

#include "core/lib/hashmap.h"
#include "interp/python/pyint.h"

/* Addresses seen, open addressing over a power of two at least twice the most kept. */
struct seen {
	uint64_t *slots;
	size_t mask;
};

static int seen_init(struct seen *s, size_t most)
{
	size_t n = 16;

	while (n < 2 * most)
		n *= 2;
	s->slots = calloc(n, sizeof(*s->slots));
	s->mask = n - 1;
	return s->slots ? 0 : -ENOMEM;
}

/* Adds addr (not 0); false if it was there. Never full: callers add at most `most`. */
static bool seen_add(struct seen *s, uint64_t addr)
{
	size_t i = hash_u64(addr) & s->mask;

	while (s->slots[i]) {
		if (s->slots[i] == addr)
			return false;
		i = (i + 1) & s->mask;
	}
	s->slots[i] = addr;
	return true;
}

/* The first interpreter of pi's process, 0 if there is none yet. */
static int first_interp(const struct py_interp *pi, const struct py_mem *mem, uint64_t *interp,
			unsigned int *flags)
{
	const struct py_layout *l = pi->layout;
	uint64_t tstate;
	int err;

	if (pi->runtime && l->runtime_interp_head >= 0)
		return py_read_u64(mem, pi->runtime + (uint64_t)l->runtime_interp_head, interp);
	if (pi->interp_head)
		return py_read_u64(mem, pi->interp_head, interp);
	if (!pi->tstate_current)
		return -ENOENT;
	/* Without interp_head (a stripped 2.7/3.6), the GIL holder tells its interpreter. */
	err = py_read_u64(mem, pi->tstate_current, &tstate);
	if (err)
		return err;
	if (!tstate)
		return -EAGAIN;
	*flags |= PY_THREADS_FROM_GIL;
	return py_read_u64(mem, tstate + (uint64_t)l->tstate_interp, interp);
}

int py_interp__running(const struct py_interp *pi, const struct py_mem *mem)
{
	unsigned int flags = 0;
	uint64_t interp = 0;
	int err = first_interp(pi, mem, &interp, &flags);

	if (err == -EAGAIN || err == -ENOENT)
		return 1;
	if (err)
		return err;
	return interp != 0;
}

/* The OS thread of a state: native_thread_id, else the tid in the struct pthread at thread_id. */
static void thread_ids(const struct py_layout *l, const struct py_mem *mem, const uint8_t *buf,
		       uint32_t tid_offset, struct py_tstate *t)
{
	uint32_t tid;

	if (l->tstate_native_tid >= 0) {
		t->check = py_u64(buf, l->tstate_native_tid);
		t->tid = t->check <= UINT32_MAX ? (uint32_t)t->check : 0;
		return;
	}
	t->check = py_u64(buf, l->tstate_thread_id);
	t->tid = 0;
	if (t->check && !py_mem__read(mem, t->check + tid_offset, &tid, sizeof(tid)))
		t->tid = tid;
}

int py_threads__read(const struct py_interp *pi, const struct py_mem *mem,
		     uint32_t pthread_tid_offset, struct py_tstate *out, size_t max,
		     unsigned int *flags)
{
	const struct py_layout *l = pi->layout;
	const int32_t fields[] = { l->tstate_next, l->tstate_interp, l->tstate_thread_id,
				   l->tstate_native_tid };
	int32_t tstate_len = py_fields_end(fields, sizeof(fields) / sizeof(fields[0]), 8);
	struct seen interps = { 0 }, states = { 0 };
	uint64_t interp = 0;
	size_t nr = 0, nr_interps = 0;
	int err;

	*flags = 0;
	if (max > PY_MAX_THREADS)
		max = PY_MAX_THREADS;
	if (tstate_len <= 0 || tstate_len > 512 || l->interp_threads_head < 0)
		return -EINVAL;
	err = first_interp(pi, mem, &interp, flags);
	if (err)
		return err;
	err = seen_init(&interps, PY_MAX_INTERPS);
	if (!err)
		err = seen_init(&states, max);
	if (err)
		goto out;
	for (; interp; nr_interps++) {
		uint64_t tstate, next_interp = 0;

		if (nr_interps == PY_MAX_INTERPS) {
			*flags |= PY_THREADS_TRUNCATED;
			break;
		}
		if (!seen_add(&interps, interp)) {
			*flags |= PY_THREADS_CYCLE;
			break;
		}
		if (py_read_u64(mem, interp + (uint64_t)l->interp_threads_head, &tstate) ||
		    (l->interp_next >= 0 &&
		     py_read_u64(mem, interp + (uint64_t)l->interp_next, &next_interp))) {
			*flags |= PY_THREADS_FAULT;
			break;
		}
		while (tstate) {
			uint8_t buf[512];
			struct py_tstate *t;

			if (nr == max) {
				*flags |= PY_THREADS_TRUNCATED;
				goto out;
			}
			if (!seen_add(&states, tstate)) {
				*flags |= PY_THREADS_CYCLE;
				break;
			}
			if (py_mem__read(mem, tstate, buf, tstate_len)) {
				*flags |= PY_THREADS_FAULT;
				break;
			}
			t = &out[nr++];
			t->tstate = tstate;
			t->interp = interp;
			thread_ids(l, mem, buf, pthread_tid_offset, t);
			tstate = py_u64(buf, l->tstate_next);
		}
		interp = next_interp;
	}
out:
	free(interps.slots);
	free(states.slots);
	return err ? err : (int)nr;
}
