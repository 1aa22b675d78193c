/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a backend hands the core: one stack of one thread, and what it
 * weighs. User stacks come as addresses (frame pointers, walked by the
 * kernel) or as a register + stack snapshot the core unwinds.
 */
#ifndef CORE_SAMPLE_SAMPLE_H
#define CORE_SAMPLE_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#define TASK_COMM_LEN 16
/* The kernel's default perf_event_max_stack, and bpf_get_stackid()'s limit. */
#define MAX_STACK_DEPTH 127

/* Stands last in user_ips for a stack deeper than MAX_STACK_DEPTH (dwarf mode). */
#define STACK_TRUNCATED_IP UINT64_MAX
/*
 * Put at the root by the model (core/model/resolve.c) after a Go stack
 * that ends in runtime.systemstack, morestack or mcall: the goroutine's
 * stack the code came from is elsewhere, and a stack copy (dwarf mode)
 * holds only the system stack it switched to.
 */
#define STACK_GO_SWITCH_IP (UINT64_MAX - 1)

/* What a sample's weight measures: the columns of a profile. */
enum weight_kind {
	WEIGHT_SAMPLES,		/* on-CPU samples (1 from a ring, N counted in the kernel) */
	/*
	 * Nanoseconds switched out: summed as such and rounded to µs once,
	 * in the model. bcc truncates each interval to µs, which loses half
	 * a µs an interval: a fifth of a ping-pong's 2.5 µs intervals.
	 */
	WEIGHT_OFFCPU_NS,
	NR_WEIGHT_KINDS,
};

/*
 * An interpreter's frame as read from the process at the sample (Python:
 * interp/python names it): the code object's address, with the reader's
 * flags in its low bits, where in that code the frame was, and what the
 * code object was then (its identity: the frame is named later, when that
 * memory may hold another). Only the process it was read from can say
 * what it means.
 */
struct interp_frame {
	uint64_t code;
	uint64_t lasti;
	uint64_t ident;
};

/* The 64-bit words of a struct interp_frame, as agg keeps it among the ips. */
#define INTERP_FRAME_WORDS (sizeof(struct interp_frame) / sizeof(uint64_t))

#define MAX_INTERP_DEPTH 128

/* sample.interp_status: why a sample of an interpreter has no frames, or what cut them. */
enum interp_status {
	INTERP_NONE = 0,		/* not an interpreter's thread (or not looked at) */
	INTERP_FRAMES,			/* frames read */
	INTERP_NO_THREAD,		/* the thread is not (yet) known to run the interpreter */
	INTERP_BAD_THREAD,		/* its thread state failed its check: ended, reused */
	INTERP_IDLE,			/* the thread runs no interpreted code now */
	INTERP_UNREADABLE,		/* its state or first frame could not be read */
	INTERP_LOST,			/* frames read, but not kept (a full map) */
};

/* Flags or'ed into interp_status with INTERP_FRAMES. */
#define INTERP_TRUNCATED (1U << 8)	/* deeper than MAX_INTERP_DEPTH: the root side is cut */
#define INTERP_FAULT (1U << 9)		/* a frame could not be read: the chain ends there */
/*
 * Frames dropped: read in the kernel over an interval in which the pid was
 * more than one process's, they cannot be named by either (issue 46).
 */
#define INTERP_ENDED (1U << 10)
/*
 * Frames walked over the sample's own stack copy (Node's): the stack as it
 * was at the sample, however late the walk (an off-CPU wait over by then).
 */
#define INTERP_COPIED (1U << 11)

/* The user registers and stack bytes an unwinder needs (--unwind dwarf). */
struct user_snapshot {
	uint64_t ip, sp, bp;
	/* rdi, where sampled (has_di): glibc's vfork keeps its return address there. */
	uint64_t di;
	bool has_di;
	const void *stack;	/* a copy of user memory from sp up */
	size_t stack_size;
	/*
	 * Or, where stack is NULL, the copy in nr_pieces pieces of piece_lens
	 * bytes, as a BPF program sent them: not joined first.
	 */
	const unsigned char *const *pieces;
	const uint32_t *piece_lens;
	unsigned int nr_pieces;
};

struct sample {
	pid_t pid;			/* thread group id */
	pid_t tid;
	int cpu;			/* -1 when not known */
	char comm[TASK_COMM_LEN];	/* the thread's comm */
	const uint64_t *kernel_ips;	/* leaf first */
	unsigned int nr_kernel;
	const uint64_t *user_ips;	/* leaf first; ignored when user_snapshot is set */
	unsigned int nr_user;
	/* When set, the core unwinds the user stack from it. */
	const struct user_snapshot *user_snapshot;
	/*
	 * The copy user_ips were unwound from already (pipeline__unwind_now:
	 * off-CPU stacks), kept for a walker of the copy (Node's) until
	 * pipeline__interp_now, which clears it; else NULL.
	 */
	const struct user_snapshot *unwound_snapshot;
	/*
	 * An interpreter's frames, leaf first, when the thread ran interpreted
	 * code (nr_interp > 0), and interp_status (enum interp_status, flags).
	 */
	const struct interp_frame *interp_frames;
	unsigned int nr_interp;
	uint32_t interp_status;
	/*
	 * The backend could not read them at the sample (the perf backend):
	 * the pipeline reads them when it takes the sample, through the run's
	 * interpreter hook.
	 */
	bool read_interp;
	/* 0, or why the stack is missing: -EEXIST (collision) or -ENOMEM (map full). */
	int kernel_err;
	int user_err;
	enum weight_kind kind;
	uint64_t weight;
	/*
	 * When it was taken, in the side-band records' clock: at some time in
	 * [time, time_end] (equal for a sample from a ring; an interval for
	 * counts summed in the kernel). Both 0: not known. The time picks the
	 * process image its user addresses belong to.
	 */
	uint64_t time, time_end;
};

/*
 * The first nr_k kernel then the first nr_u user ips of s into dst (the
 * flat layout of a stored stack); a side with none may have no array.
 */
static inline void sample__copy_ips(const struct sample *s, uint64_t *dst, unsigned int nr_k,
				    unsigned int nr_u)
{
	if (nr_k)
		memcpy(dst, s->kernel_ips, nr_k * sizeof(*dst));
	if (nr_u)
		memcpy(dst + nr_k, s->user_ips, nr_u * sizeof(*dst));
}

#endif
