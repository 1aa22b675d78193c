/* SPDX-License-Identifier: GPL-2.0 */
/*
 * BPF loads that SIGINT, SIGTERM and SIGHUP cut short. The verifier gives
 * up an attempt with EAGAIN when a signal is pending (4.19 has the check,
 * 4.9 has none), but libbpf then starts the load again (five attempts), and
 * the signal, handled by then, no longer stops them: a minutes-long
 * verification under emulation ran to its end after Ctrl-C.
 */
#ifndef BACKEND_BPF_INTERRUPTIBLE_H
#define BACKEND_BPF_INTERRUPTIBLE_H

struct bpf_object_skeleton;

/*
 * Runs load(arg) with SIGINT, SIGTERM and SIGHUP delivered to a watcher
 * thread instead (their handlers run there, as they would here); once one
 * arrived, the watcher makes every further attempt fail at once. Returns
 * load's result, or -EINTR when such a signal arrived and load failed.
 */
int bpf_interruptible__run(int (*load)(void *arg), void *arg);
/* bpf_object__load_skeleton (a skeleton's NAME__load) that way. */
int bpf_interruptible__load(struct bpf_object_skeleton *s);

/* Test seam: each load first spends seconds in the verifier on a program it refuses. */
extern int bpf_interruptible__test_slow;

#endif
