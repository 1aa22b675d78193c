// SPDX-License-Identifier: GPL-2.0
#include "backend-bpf/interruptible.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <unistd.h>

#include "core/lib/interrupt.h"
#include "core/lib/log.h"

int bpf_interruptible__test_slow;

/* The signals that end a run (app/run/signals.c) and so should end a load. */
static const int stopping[] = { SIGINT, SIGTERM, SIGHUP };
/* Sent to the loading thread: its handler does nothing, its arrival fails the attempt. */
#define KICK SIGURG

struct watch {
	pthread_t loader;
	int done[2];		/* the loader closes done[1] when load returned */
	atomic_bool interrupted;
};

static void on_kick(int sig)
{
	(void)sig;
}

static void *watch(void *p)
{
	struct watch *w = p;
	struct pollfd pfd = { .fd = w->done[0], .events = POLLIN };
	int n;

	/* Only a stopping signal interrupts this wait: every other one is blocked here. */
	do
		n = poll(&pfd, 1, -1);
	while (n < 0 && errno != EINTR);
	if (n > 0)
		return NULL;
	atomic_store(&w->interrupted, true);
	/* Each kick fails the verifier's current attempt; libbpf makes a few. */
	for (;;) {
		pthread_kill(w->loader, KICK);
		n = poll(&pfd, 1, 1);
		if (n > 0)
			return NULL;
	}
}

int bpf_interruptible__run(int (*load)(void *arg), void *arg)
{
	struct sigaction kick = { .sa_handler = on_kick, .sa_flags = SA_RESTART }, old_kick;
	struct watch w = { .loader = pthread_self() };
	sigset_t orig, watcher, loading;
	pthread_t t;
	int err;

	/*
	 * A stop that came before this load (its watcher was not there to see
	 * it) ends it unstarted: set-up's later loads each took their full
	 * time after Ctrl-C (the stack-copy probe after the counting one).
	 */
	if (interrupt__pending())
		return -EINTR;
	if (pipe2(w.done, O_CLOEXEC))
		return -errno;
	sigemptyset(&kick.sa_mask);
	sigaction(KICK, &kick, &old_kick);
	pthread_sigmask(SIG_SETMASK, NULL, &orig);
	/* The watcher takes the stopping signals this thread takes, and no other. */
	sigfillset(&watcher);
	loading = orig;
	for (size_t i = 0; i < sizeof(stopping) / sizeof(stopping[0]); i++) {
		if (!sigismember(&orig, stopping[i]))
			sigdelset(&watcher, stopping[i]);
		sigaddset(&loading, stopping[i]);
	}
	sigdelset(&loading, KICK);
	pthread_sigmask(SIG_SETMASK, &watcher, NULL);
	err = pthread_create(&t, NULL, watch, &w);
	pthread_sigmask(SIG_SETMASK, &loading, NULL);
	if (err) {
		/* No watcher: load as libbpf does. */
		pthread_sigmask(SIG_SETMASK, &orig, NULL);
		err = load(arg);
		goto out;
	}
	/* One that came while the watcher started: handled here, unseen by it. */
	err = interrupt__pending() ? -EINTR : load(arg);
	close(w.done[1]);
	w.done[1] = -1;
	pthread_join(t, NULL);
	pthread_sigmask(SIG_SETMASK, &orig, NULL);
	if (err && (atomic_load(&w.interrupted) || interrupt__pending())) {
		pr_debug("bpf: a load was interrupted by a signal\n");
		err = -EINTR;
	}
out:
	sigaction(KICK, &old_kick, NULL);
	close(w.done[0]);
	if (w.done[1] >= 0)
		close(w.done[1]);
	return err;
}

/*
 * A program the verifier walks until its limit of instructions: a counter
 * it follows one value at a time (bounded loops, 5.3). Refused with E2BIG
 * after about a million steps, a second or more; ten of them, so that
 * only an interrupted load ends soon on any machine.
 */
static void slow_load(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_1, .imm = 1 },
		{ .code = BPF_JMP | BPF_JNE | BPF_K, .dst_reg = BPF_REG_1, .off = -2,
		  .imm = 0x7fffffff },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	for (int i = 0; i < 10; i++) {
		int fd = bpf_prog_load(BPF_PROG_TYPE_PERF_EVENT, "slow", "GPL", insns,
				       sizeof(insns) / sizeof(insns[0]), NULL);

		if (fd >= 0)
			close(fd);
	}
}

static int load_skeleton(void *s)
{
	if (bpf_interruptible__test_slow)
		slow_load();
	return bpf_object__load_skeleton(s);
}

int bpf_interruptible__load(struct bpf_object_skeleton *s)
{
	return bpf_interruptible__run(load_skeleton, s);
}
