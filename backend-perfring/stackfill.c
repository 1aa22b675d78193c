// SPDX-License-Identifier: GPL-2.0
/* The rest of a stack copy the kernel cut short (stackfill.h says why). */
#include "backend-perfring/stackfill.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <time.h>

#include "backend-perfring/ringsample.h"
#include "core/lib/log.h"

#define PAGE 4096u
#define MAX_PIECES (STACK_FILL_MAX / PAGE + 1)

/*
 * The reading thread and what it shares with the reader: a request (seq
 * asked), its answer (seq done, got, buf). Freed only once the thread is
 * joined; left allocated with a thread that never returned.
 */
struct stack_filler {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* on CLOCK_MONOTONIC */
	uint64_t asked, done;
	bool quit;
	pid_t pid;
	uint64_t addr;
	size_t len;
	ssize_t got;		/* bytes, or -errno */
	unsigned char buf[STACK_FILL_MAX];
};

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

/* The reading thread: one request at a time, read with no lock held. */
static void *filler_main(void *arg)
{
	struct stack_filler *f = arg;

	pthread_mutex_lock(&f->lock);
	for (;;) {
		ssize_t got;

		while (f->done == f->asked && !f->quit)
			pthread_cond_wait(&f->cond, &f->lock);
		if (f->quit)
			break;
		pthread_mutex_unlock(&f->lock);
		got = read_pages(f->pid, f->addr, f->buf, f->len);
		pthread_mutex_lock(&f->lock);
		f->got = got;
		f->done = f->asked;
		pthread_cond_broadcast(&f->cond);
	}
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

/* Started by the reader thread, whose scheduling (SCHED_FIFO 1 where allowed) it inherits. */
static struct stack_filler *filler_start(void)
{
	struct stack_filler *f = calloc(1, sizeof(*f));
	pthread_condattr_t ca;

	if (!f)
		return NULL;
	pthread_mutex_init(&f->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&f->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&f->thread, NULL, filler_main, f)) {
		pthread_cond_destroy(&f->cond);
		pthread_mutex_destroy(&f->lock);
		free(f);
		return NULL;
	}
	return f;
}

/*
 * The filler's read of len bytes at addr of pid: its bytes or -errno, or
 * -ETIMEDOUT where it did not return within STACK_FILL_WAIT_MS.
 */
static ssize_t filler_read(struct stack_filler *f, pid_t pid, uint64_t addr, size_t len)
{
	struct timespec until;
	ssize_t got;
	int err = 0;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_nsec += STACK_FILL_WAIT_MS * 1000000L;
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&f->lock);
	f->pid = pid;
	f->addr = addr;
	f->len = len;
	f->asked++;
	pthread_cond_broadcast(&f->cond);
	while (f->done != f->asked && err != ETIMEDOUT)
		err = pthread_cond_timedwait(&f->cond, &f->lock, &until);
	got = f->done == f->asked ? f->got : -ETIMEDOUT;
	pthread_mutex_unlock(&f->lock);
	return got;
}

/*
 * Whether the filler's late read has returned since: then it takes requests
 * again (a read slow under load, an emulated guest's, is no hang).
 */
static bool filler_back(struct stack_filler *f)
{
	bool back;

	pthread_mutex_lock(&f->lock);
	back = f->done == f->asked;
	pthread_mutex_unlock(&f->lock);
	return back;
}

size_t stack_fill__read(struct stack_fill *sf, const struct decoded_sample *ds, uint64_t regs_mask,
			size_t room, const unsigned char **bytes)
{
	struct user_snapshot snap;
	pid_t tid = (pid_t)ds->id.tid;
	unsigned int slot = top_slot(tid);
	uint64_t at;
	ssize_t got;

	/*
	 * A copy the kernel began: what follows is read after the sample, and
	 * belongs to its registers only where the sp's own page was copied then.
	 */
	if (room < 8 || ds->stack_size < 8 || !ds->id.pid ||
	    !perfring__user_snapshot(ds, regs_mask, &snap))
		return 0;
	if (sf->late >= STACK_FILL_MAX_LATE || (sf->stuck && !filler_back(sf->filler))) {
		sf->skipped++;
		return 0;
	}
	sf->stuck = false;
	at = snap.sp + ds->stack_size;
	if (at < snap.sp || (sf->tops[slot].tid == tid && (sf->tops[slot].end == at ||
							    sf->tops[slot].end == STACK_FILL_REFUSED)))
		return 0;
	if (room > STACK_FILL_MAX)
		room = STACK_FILL_MAX;
	if (!sf->filler)
		sf->filler = filler_start();
	if (!sf->filler)
		return 0;
	got = filler_read(sf->filler, (pid_t)ds->id.pid, at, room);
	if (got == -ETIMEDOUT) {
		sf->stuck = true;	/* the filler is left to its read, asked nothing until back */
		sf->late++;
		sf->stuck_pid = (pid_t)ds->id.pid;
		return 0;
	}
	if (got == -EPERM) {
		/* Another user's (a setuid child): its next samples are not tried. */
		sf->tops[slot].tid = tid;
		sf->tops[slot].end = STACK_FILL_REFUSED;
		sf->refused++;
		return 0;
	}
	if (got == -EFAULT || got == 0) {
		/* The end of the thread's stack (or of what can be read of it). */
		sf->tops[slot].tid = tid;
		sf->tops[slot].end = at;
		return 0;
	}
	if (got < 0) {
		sf->refused += got != -ESRCH;	/* ended since: nothing to say */
		return 0;
	}
	sf->filled++;
	sf->bytes += (uint64_t)got;
	*bytes = sf->filler->buf;
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
		pr_info("%s: %llu stack copies ended short could not be completed (the process's "
			"memory may not be read by this user, or the reads failed)\n",
			what, (unsigned long long)sf->refused);
	if (sf->late)
		pr_warn("warning: %s: %llu reads of a process's memory (the last of process %d) did "
			"not return within %d ms (its stack lies next to memory it serves itself, "
			"or to a file that does not answer): %llu stack copies the kernel ended "
			"short were left so while one was out%s%s\n",
			what, (unsigned long long)sf->late, (int)sf->stuck_pid, STACK_FILL_WAIT_MS,
			(unsigned long long)sf->skipped, sf->stuck ? ", and one is out still" : "",
			sf->late >= STACK_FILL_MAX_LATE ? " or after the last one (no more are tried)"
							: "");
}

void stack_fill__fini(struct stack_fill *sf)
{
	struct stack_filler *f = sf->filler;

	sf->filler = NULL;
	/* One stuck in a read keeps its memory: it may still write into it. */
	if (!f || sf->stuck)
		return;
	pthread_mutex_lock(&f->lock);
	f->quit = true;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	pthread_join(f->thread, NULL);
	pthread_cond_destroy(&f->cond);
	pthread_mutex_destroy(&f->lock);
	free(f);
}
