// SPDX-License-Identifier: GPL-2.0
/* The rest of a stack copy the kernel cut short (stackfill.h says why). */
#include "backend-perfring/stackfill.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/uio.h>

#include "backend-perfring/ringsample.h"
#include "core/lib/log.h"

#define PAGE 4096u
#define MAX_PIECES (STACK_FILL_MAX / PAGE + 1)

static unsigned int top_slot(pid_t tid)
{
	return (unsigned int)tid * 2654435761u % STACK_FILL_TOPS;
}

/*
 * Reads len bytes at addr of pid into buf a page at a time, so that the read
 * stops at the first page that cannot be read, not before it (a read may
 * stop only between the pieces it was given). Returns the bytes read, or
 * -errno when not even the first could be.
 */
static ssize_t read_pages(pid_t pid, uint64_t addr, unsigned char *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote[MAX_PIECES];
	unsigned long n = 0;
	ssize_t got;

	for (size_t off = 0; off < len && n < MAX_PIECES; n++) {
		size_t piece = PAGE - (size_t)((addr + off) % PAGE);

		if (piece > len - off)
			piece = len - off;
		remote[n] = (struct iovec){ .iov_base = (void *)(uintptr_t)(addr + off),
					    .iov_len = piece };
		off += piece;
	}
	got = process_vm_readv(pid, &local, 1, remote, n, 0);
	return got < 0 ? -errno : got;
}

size_t stack_fill__read(struct stack_fill *sf, const struct decoded_sample *ds, uint64_t regs_mask,
			size_t room)
{
	struct user_snapshot snap;
	unsigned int slot = top_slot((pid_t)ds->id.tid);
	uint64_t at;
	ssize_t got;

	if (sf->off || room < 8 || !ds->id.pid || !perfring__user_snapshot(ds, regs_mask, &snap))
		return 0;
	at = snap.sp + ds->stack_size;
	if (at < snap.sp || (sf->tops[slot].tid == (pid_t)ds->id.tid && sf->tops[slot].end == at))
		return 0;
	if (room > STACK_FILL_MAX)
		room = STACK_FILL_MAX;
	if (!sf->buf)
		sf->buf = malloc(STACK_FILL_MAX);
	if (!sf->buf)
		return 0;
	got = read_pages((pid_t)ds->id.pid, at, sf->buf, room);
	if (got == -EPERM) {
		sf->off = true;	/* another user's process: every read would fail */
		sf->refused++;
		return 0;
	}
	if (got == -EFAULT || got == 0) {
		/* The end of the thread's stack (or of what can be read of it). */
		sf->tops[slot].tid = (pid_t)ds->id.tid;
		sf->tops[slot].end = at;
		return 0;
	}
	if (got < 0) {
		sf->refused += got != -ESRCH;	/* ended since: nothing to say */
		return 0;
	}
	sf->filled++;
	sf->bytes += (uint64_t)got;
	return (size_t)got;
}

void stack_fill__report(const struct stack_fill *sf, const char *what)
{
	if (sf->filled)
		pr_info("%s: %llu stack copies the kernel ended at a page not in memory (a stack "
			"buffer never filled) completed from the process's memory right after the "
			"sample: %.1f MB\n",
			what, (unsigned long long)sf->filled, sf->bytes / 1e6);
	if (sf->refused)
		pr_info("%s: %llu stack copies ended short could not be completed (%s)\n", what,
			(unsigned long long)sf->refused,
			sf->off ? "the process's memory may not be read by this user"
				: "the reads failed");
}

void stack_fill__fini(struct stack_fill *sf)
{
	free(sf->buf);
	sf->buf = NULL;
}
