/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The stack copy of bpf/dwarf_task_regs.bpf.c (Linux 5.15): the whole copy
 * read into one buffer and sent with the head and the kernel stack in one
 * record, where copy_stack sends a record per 4096-byte piece and per
 * halving read, and the head (6 to 10 a sample): each record cost the reader a cache miss, a
 * place in the batch's sort and a lookup in the unwinder's piece table,
 * which made the bpf backend's dwarf mode dearer than the perf backend's
 * one record a sample.
 *
 * The reads are the same as copy_stack's (whole pieces from sp until one
 * fails or the limit is reached, then halving ones into the piece that
 * failed), at a running offset into the buffer. A halving read's success is
 * added to the offset without a branch: a branch per read gave the verifier
 * 2^9 paths per piece that failed, each with a different offset.
 */
#ifndef BPF_DWARF_ONE_BPF_H
#define BPF_DWARF_ONE_BPF_H

/* The most the copy holds: 16 whole pieces, above --stack-dump-size's 65528. */
#define DWARF_ONE_COPY 65536
#define DWARF_ONE_MASK (DWARF_ONE_COPY - 1)

/* A DWARF_REC_HEAD_PIECE record: the head, then the piece. */
struct dwarf_head_piece {
	struct dwarf_head head;
	struct dwarf_piece piece;
};

struct dwarf_one_buf {
	/* Sent from here with the copy after it; its piece alone heads a first piece. */
	struct dwarf_head_piece hp;
	/*
	 * Reads are at an offset masked to DWARF_ONE_MASK, the verifier's bound: room past it,
	 * and for the second record's length as masked in send_one.
	 */
	__u8 data[DWARF_ONE_COPY + 2 * DWARF_PIECE];
};

/*
 * One value per possible CPU (max_entries set by user space before load),
 * indexed by the running CPU: 64 KiB is above a per-CPU array's 32 KiB.
 * A run is not interrupted by another of this program on its CPU.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dwarf_one_buf);
} copy_buf SEC(".maps");

/* The kernel stack's room after the copy: the stack maps' depth. */
#define DWARF_ONE_KSTACK (PROFILE_MAX_STACK_DEPTH * sizeof(__u64))

/*
 * Send the head, the user stack from sp up to where reading fails or units
 * * PROFILE_DUMP_UNIT bytes (in whole pieces) were read (units 0: no copy),
 * and with kernel set the kernel stack, in one record
 * (DWARF_REC_HEAD_PIECE_KSTACK); two when the copy is longer than
 * PROFILE_DUMP_PIECE_ONE. The kernel stack goes in the record, not a stack
 * map: a map sized for a long run took a tenth of a short run's CPU to
 * create, and one never cleared fills. Returns 1 when the head was sent, 0
 * when the caller is to send it.
 */
static __always_inline int send_one(struct bpf_perf_event_data *ctx,
				    const struct dwarf_head *head, __u64 sp, __u32 units,
				    int kernel)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct dwarf_one_buf *b = bpf_map_lookup_elem(&copy_buf, &cpu);
	__u64 limit = (__u64)units * PROFILE_DUMP_UNIT, off = 0, kbytes = 0;
	__s32 kernel_frames = PROFILE_STACK_NOT_TAKEN;
	struct dwarf_head_piece *hp;
	int failed = 0;

	if (!b)
		return 0;
	/* A loop (5.3): clang does not unroll one with two exits. */
	for (int i = 0; i < DWARF_ONE_COPY / DWARF_PIECE; i++) {
		if (off >= limit)
			break;
		if (bpf_probe_read_user(b->data + (off & DWARF_ONE_MASK), DWARF_PIECE,
					(void *)(sp + off))) {
			failed = 1;
			break;
		}
		off += DWARF_PIECE;
	}
	if (failed) {
#pragma unroll
		for (__u64 size = DWARF_REFINE_FIRST; size >= 8; size /= 2) {
			long r = bpf_probe_read_user(b->data + (off & DWARF_ONE_MASK), size,
						     (void *)(sp + off));
			/* 1 when the read succeeded (0), else 0 (a negative error). */
			__u64 ok = ((__u64)r >> 63) ^ 1;

			/*
			 * Hidden from clang, which would make a branch of it, and
			 * multiplied, not masked: 6.x verifiers fork a state on
			 * "0 or -1 & K" (each read doubled the paths: 8192, 5 s).
			 */
			asm volatile("" : "+r"(ok));
			off += ok * size;
		}
	}
	if (kernel) {
		/* Right after the copy: at most 64 KiB in, with room for the stack past it. */
		__u64 at = off;
		long r;

		asm volatile("" : "+r"(at));
		if (at > DWARF_ONE_COPY)
			return 0;
		r = bpf_get_stack(ctx, b->data + at, DWARF_ONE_KSTACK, 0);
		kbytes = r > 0 ? (__u64)r : 0;
		/*
		 * Bounded on the register itself: a compare clang makes on a
		 * copy (r - 1 < 1016) reaches the size below only on verifiers
		 * that link registers across an addition (6.11), and 5.15's
		 * would see a negative record size. r is at most 1016.
		 */
		asm volatile("" : "+r"(kbytes));
		kbytes &= 1023;
		/* None (a user-mode sample) is -EFAULT, as bpf_get_stackid says. */
		kernel_frames = r > 0 ? (__s32)(kbytes / 8) : r ? (__s32)r : -EFAULT;
		if (r < 0 && r != -EFAULT)
			stat_inc(PROFILE_STAT_KERNEL_STACK_LOST);
	}
	hp = &b->hp;
	if (off > PROFILE_DUMP_PIECE_ONE) {
		hp->piece.kind = DWARF_REC_PIECE;
		hp->piece.len = PROFILE_DUMP_PIECE_ONE;
		bpf_perf_event_output(ctx, &snapshots, BPF_F_CURRENT_CPU, &hp->piece,
				      sizeof(hp->piece) + PROFILE_DUMP_PIECE_ONE);
		/* The rest with the head, written over the end of the piece just sent. */
		hp = (struct dwarf_head_piece *)(b->data + PROFILE_DUMP_PIECE_ONE - sizeof(*hp));
		off -= PROFILE_DUMP_PIECE_ONE;
		/*
		 * At most a piece. Masked on the register for verifiers that
		 * walk a branch whose bounds contradict each other (6.1's, as
		 * Debian 12 ships it): they came here also for copies that
		 * failed in their first piece (off <= 4088, "off > 61440"),
		 * saw a length wrapped below zero and refused the program.
		 */
		asm volatile("" : "+r"(off));
		off &= 2 * DWARF_PIECE - 1;
	}
	hp->head = *head;
	hp->head.kind = DWARF_REC_HEAD_PIECE_KSTACK;
	hp->head.kernel_stack_id = kernel_frames;
	hp->piece.kind = DWARF_REC_PIECE;
	hp->piece.len = off;
	bpf_perf_event_output(ctx, &snapshots, BPF_F_CURRENT_CPU, hp, sizeof(*hp) + off + kbytes);
	return 1;
}

#endif
