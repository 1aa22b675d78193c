// SPDX-License-Identifier: GPL-2.0
/*
 * libunwind's signal masking, skipped while we unwind.
 *
 * libunwind (built with CONFIG_BLOCK_SIGNALS, as Debian's is) blocks every
 * signal around each lock it takes, so that a signal handler unwinding
 * cannot deadlock on it. With its cache off it still locks its memory pool
 * twice per frame: four rt_sigprocmask system calls a frame, about 190 per
 * sample of a compiler's stack, 40% of the profiler's CPU under a compile
 * loop on this VM (the median unwind went from 100 us to 15 us without).
 * Our signal handlers never unwind, so the masking protects nothing here.
 *
 * libunwind calls sigprocmask through its PLT, and the dynamic linker
 * binds that to the executable's own definition first: this one. Inside
 * unwind_sigmask__quiet(true) ... (false) on a thread it does nothing; at
 * every other time and on every other thread it is pthread_sigmask, which
 * is what glibc's does.
 */
#include "unwind/sigmask.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

static __thread bool quiet;

void unwind_sigmask__quiet(bool on)
{
	quiet = on;
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	int err;

	if (quiet) {
		/*
		 * libunwind restores this later, within the same quiet span:
		 * that call does nothing either, so the mask never changes.
		 */
		if (old)
			sigemptyset(old);
		return 0;
	}
	err = pthread_sigmask(how, set, old);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}
