// SPDX-License-Identifier: GPL-2.0
/*
 * The Python processes a backend that walks in the kernel is told of: every
 * live process and its threads, in the order its bounded table keeps them
 * (fair_order.c: each owner its share), and what the table left out, for -v.
 */
#include <errno.h>
#include <stdlib.h>

#include "app/run/fair_order_internal.h"
#include "app/run/python_internal.h"
#include "core/lib/log.h"
#include "interp/python/registry.h"

/* Room for n entries of size each in *buf (capacity *cap). */
static int reserve(void **buf, size_t *cap, size_t n, size_t size)
{
	void *p;

	if (n <= *cap)
		return 0;
	p = realloc(*buf, n * size);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = n;
	return 0;
}

int run_python__tell_backend(struct run_python *rp)
{
	size_t nr = py_registry__count(rp->reg), nr_threads = 0, t = 0, np = 0, kept;
	struct errmsg em = { "" };
	int err;

	for (size_t i = 0; i < nr; i++)
		nr_threads += py_registry__get(rp->reg, i)->nr_threads;
	if (reserve((void **)&rp->procs, &rp->cap_procs, nr + 1, sizeof(*rp->procs)) ||
	    reserve((void **)&rp->threads, &rp->cap_threads, nr_threads + 1, sizeof(*rp->threads)) ||
	    reserve((void **)&rp->order, &rp->cap_order, nr + 1, sizeof(*rp->order)))
		return -ENOMEM;
	/* The live processes, each by its owner and its place in the registry: the order found. */
	for (size_t i = 0; i < nr; i++) {
		const struct py_process *p = py_registry__get(rp->reg, i);

		if (!p->gone)
			rp->order[np++] = (struct fair_slot){ p->uid, i, 0 };
	}
	order_fairly(rp->order, np);
	for (size_t i = 0; i < np; i++) {
		const struct py_process *p = py_registry__get(rp->reg, rp->order[i].found);

		rp->procs[i] = (struct interp_proc){ p->pid, p->interp.layout->id, rp->threads + t,
						     p->nr_threads };
		for (size_t k = 0; k < p->nr_threads; k++)
			rp->threads[t++] = (struct interp_thread){ p->threads[k].tid,
								   p->threads[k].tstate,
								   p->threads[k].check };
	}
	kept = np;
	err = rp->ops->set_interp(rp->backend, rp->procs, np, &kept, &em);
	if (err && em.text[0])
		pr_info("python: %s\n", em.text);
	if (kept < np)
		note_left_out(&rp->left_out, rp->order, np, kept);
	return err;
}
