/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Decoder of perf ring records for the sample_type this backend requests.
 * Pure functions over bytes: every length is checked against the record.
 */
#ifndef PERFRING_DECODE_H
#define PERFRING_DECODE_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/sample/sample.h"

/* The trailer that sample_id_all appends to side-band records. */
struct sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
};

struct decoded_sample {
	struct sample_id id;
	uint64_t nr_ips;
	const uint64_t *ips;	/* the raw callchain, context markers included */
	/* PERF_SAMPLE_REGS_USER: abi, then one word per bit of the mask */
	uint64_t regs_abi;
	const uint64_t *regs;	/* NULL for a kernel thread; may be unaligned */
	unsigned int nr_regs;
	/* PERF_SAMPLE_STACK_USER: stack_size bytes copied from the user sp up */
	const unsigned char *stack;
	uint64_t stack_size;
	/* PERF_SAMPLE_RAW: a tracepoint's record, laid out as its tracefs format says */
	const unsigned char *raw;	/* may be unaligned */
	uint32_t raw_size;
};

/*
 * PERF_RECORD_SWITCH and, on a CPU-wide event, PERF_RECORD_SWITCH_CPU_WIDE
 * (attr.context_switch, 4.3): the current task (the trailer's) switched in
 * or out.
 */
struct decoded_switch {
	struct sample_id id;	/* the task, and when */
	bool out;		/* switched out (else in) */
};

struct decoded_mmap {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino;
	/*
	 * attr.build_id (5.12): where the kernel could read the file's build-id,
	 * MMAP2 carries it (PERF_RECORD_MISC_MMAP_BUILD_ID) in place of maj, min
	 * and ino, which are then 0.
	 */
	uint8_t build_id_size;	/* 0: none in the record */
	uint8_t build_id[20];
	bool exec;
	const char *filename;	/* NUL-terminated inside the record */
};

struct decoded_comm {
	uint32_t pid, tid;
	bool exec;
	const char *comm;
};

struct decoded_task {		/* FORK and EXIT */
	uint32_t pid, ppid, tid, ptid;
};

/* Bytes of the sample_id trailer for this sample_type. */
unsigned int decode__sample_id_size(uint64_t sample_type);

/* regs_mask is the attr's sample_regs_user (for PERF_SAMPLE_REGS_USER). */
int decode__sample(const struct perf_event_header *hdr, uint64_t sample_type, uint64_t regs_mask,
		   struct decoded_sample *out);
/* One register of the sample's user registers, by its PERF_REG_X86_* number. */
bool decode__user_reg(const struct decoded_sample *ds, uint64_t mask, unsigned int reg,
		      uint64_t *val);
/* The trailer of a side-band record; -ENOENT without sample_id_all. */
int decode__sample_id(const struct perf_event_header *hdr, uint64_t sample_type,
		      bool sample_id_all, struct sample_id *out);
int decode__mmap(const struct perf_event_header *hdr, uint64_t sample_type, bool sample_id_all,
		 struct decoded_mmap *out);
int decode__comm(const struct perf_event_header *hdr, uint64_t sample_type, bool sample_id_all,
		 struct decoded_comm *out);
int decode__task(const struct perf_event_header *hdr, struct decoded_task *out);
int decode__switch(const struct perf_event_header *hdr, uint64_t sample_type, bool sample_id_all,
		   struct decoded_switch *out);
int decode__lost(const struct perf_event_header *hdr, uint64_t *lost);

/*
 * A stack copy takes sample_stack_user bytes in the ring whatever the stack
 * held; dyn_size says how many the kernel copied (less near the top of the
 * stack's mapping; none for a kernel thread). Where the copy ends the
 * record, the record can be cut to dyn_size rounded up to 8:
 * decode__cut_stack_len gives the cut record's length (0: nothing to cut),
 * decode__cut_stack writes it to out. ds is hdr decoded. The cut record
 * decodes to the same fields.
 */
size_t decode__cut_stack_len(const struct perf_event_header *hdr, uint64_t sample_type,
			     const struct decoded_sample *ds);
void decode__cut_stack(const struct perf_event_header *hdr, const struct decoded_sample *ds,
		       size_t len, void *out);
/*
 * The room in the record's copy after what the kernel copied (sample_stack_user
 * less dyn_size): 0 when the kernel copied it all, or the record is not of
 * the shape decode__cut_stack_len takes.
 */
size_t decode__stack_room(const struct perf_event_header *hdr, uint64_t sample_type,
			  const struct decoded_sample *ds);
/*
 * Writes to out (hdr->size bytes at most) the record whose copy is the
 * kernel's, then extra_len bytes of extra (at most decode__stack_room),
 * cut after them as decode__cut_stack cuts; returns its length. For a copy
 * the kernel ended at a page it could not read in the interrupt (a stack
 * page never touched, or swapped out): stackfill.h reads the rest.
 */
size_t decode__fill_stack(const struct perf_event_header *hdr, const struct decoded_sample *ds,
			  const void *extra, size_t extra_len, void *out);

/*
 * Split a callchain into its kernel and user parts, leaf first, dropping the
 * context markers (any ip >= PERF_CONTEXT_MAX) and guest frames.
 */
void decode__split_callchain(const uint64_t *ips, uint64_t nr, uint64_t *kernel,
			     unsigned int *nr_kernel, uint64_t *user, unsigned int *nr_user,
			     unsigned int max_depth);

#endif
