// SPDX-License-Identifier: GPL-2.0
#include "backend-bpf/dwarf_join.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Whole pieces, and the halving ones where a read crossed the end of the stack. */
#define MAX_PIECES (PROFILE_DUMP_MAX / PROFILE_DUMP_PIECE_STACK + 16)

/*
 * A CPU's sample being joined: the pieces the program sent before its head
 * (bpf/profile_maps.h). They are left where the drain's batch holds them
 * and the unwinder reads them there (`at`): joining them into one buffer
 * was a second pass over every stack byte, after the reader's copy out of
 * the ring. They are joined into `stack` (allocated when first needed) only
 * when a piece is not a multiple of 8 bytes (the program sends none such),
 * or when the drain ends before the head and the batch is about to be
 * reused.
 */
struct dwarf_join {
	const unsigned char *at[MAX_PIECES];	/* in the batch */
	uint32_t lens[MAX_PIECES];
	unsigned int nr_at;
	unsigned char *stack;	/* PROFILE_DUMP_MAX bytes */
	bool joined;		/* the pieces so far are in stack */
	size_t size;		/* bytes of the pieces so far */
	bool broken;		/* records lost or bad since the last head: drop the sample */
	/*
	 * The Python frames sent before the head (DWARF_REC_PY): py_got of
	 * py_nr, in order, of thread py_tid; py_bad when a record did not
	 * follow the one before (the head then gets none).
	 */
	struct interp_frame py[PY_MAX_FRAMES];
	uint32_t py_nr, py_got, py_tid;
	bool py_bad;
};

int dwarf_joiner__init(struct dwarf_joiner *jn, int nr_cpus, unsigned int longest_piece,
		       size_t dump_size, dwarf_sample_fn on_sample, void *ctx)
{
	memset(jn, 0, sizeof(*jn));
	jn->cpus = calloc(nr_cpus > 0 ? (size_t)nr_cpus : 1, sizeof(*jn->cpus));
	if (!jn->cpus)
		return -ENOMEM;
	jn->nr_cpus = nr_cpus;
	jn->longest_piece = longest_piece;
	jn->dump_size = dump_size;
	jn->on_sample = on_sample;
	jn->ctx = ctx;
	return 0;
}

void dwarf_joiner__exit(struct dwarf_joiner *jn)
{
	for (int i = 0; jn->cpus && i < jn->nr_cpus; i++)
		free(jn->cpus[i].stack);
	free(jn->cpus);
	jn->cpus = NULL;
}

/* Copy the pieces still in the batch into the CPU's own buffer. Returns 0 or -ENOMEM. */
static int join_pieces(struct dwarf_join *j)
{
	size_t off = 0;

	if (!j->stack) {
		j->stack = malloc(PROFILE_DUMP_MAX);
		if (!j->stack)
			return -ENOMEM;
	}
	for (unsigned int i = 0; i < j->nr_at; i++) {
		memcpy(j->stack + off, j->at[i], j->lens[i]);
		off += j->lens[i];
	}
	j->nr_at = 0;
	j->joined = true;
	return 0;
}

/* A bad record: counted, and its sample dropped at its head. */
static void bad_record(struct dwarf_joiner *jn, struct dwarf_join *j)
{
	jn->bad++;
	j->broken = true;
}

static void on_piece(struct dwarf_joiner *jn, struct dwarf_join *j, const unsigned char *data,
		     uint32_t size)
{
	const size_t head = sizeof(struct dwarf_piece);
	__u32 len;

	if (j->broken)
		return;
	if (size < head) {
		bad_record(jn, j);
		return;
	}
	memcpy(&len, data + offsetof(struct dwarf_piece, len), sizeof(len));
	if (len > size - head || len > jn->longest_piece || len > PROFILE_DUMP_MAX - j->size) {
		bad_record(jn, j);
		return;
	}
	/* In place: the unwinder reads a word from two pieces at most when each has 8 bytes. */
	if (!j->joined && len >= 8 && len % 8 == 0 && j->nr_at < MAX_PIECES) {
		j->lens[j->nr_at] = len;
		j->at[j->nr_at++] = data + head;
		j->size += len;
		return;
	}
	if (!j->joined && join_pieces(j)) {
		if (!jn->err)
			jn->err = -ENOMEM;
		j->broken = true;
		return;
	}
	memcpy(j->stack + j->size, data + head, len);
	j->size += len;
}

/*
 * A record of the Python frames walked at the sample: the first of a walk
 * (first 0) starts them again, whatever a sample before left; the others
 * must follow it, of the same walk.
 */
static void on_py(struct dwarf_joiner *jn, struct dwarf_join *j, const unsigned char *data,
		  uint32_t size)
{
	struct dwarf_py rec;
	uint32_t n;

	if (size < sizeof(rec)) {
		bad_record(jn, j);
		return;
	}
	memcpy(&rec, data, sizeof(rec));
	if (rec.first == 0) {
		j->py_nr = rec.nr;
		j->py_tid = rec.tid;
		j->py_got = 0;
		j->py_bad = false;
	}
	if (rec.nr == 0 || rec.nr > PY_MAX_FRAMES || rec.first != j->py_got || rec.nr != j->py_nr ||
	    rec.tid != j->py_tid) {
		j->py_bad = true;
		return;
	}
	n = rec.nr - rec.first < PY_FRAMES_PER_PIECE ? rec.nr - rec.first : PY_FRAMES_PER_PIECE;
	for (uint32_t i = 0; i < n; i++) {
		j->py[rec.first + i].code = rec.frames[i].code;
		j->py[rec.first + i].lasti = rec.frames[i].lasti;
		j->py[rec.first + i].ident = rec.frames[i].ident;
	}
	j->py_got += n;
}

const struct interp_frame *dwarf_joiner__py(const struct dwarf_joiner *jn, int cpu,
					    const struct dwarf_head *head, unsigned int *nr)
{
	const struct dwarf_join *j;

	*nr = 0;
	if (cpu < 0 || cpu >= jn->nr_cpus || !(head->py & DWARF_PY_SENT))
		return NULL;
	j = &jn->cpus[cpu];
	if (j->py_bad || !j->py_nr || j->py_got != j->py_nr || j->py_tid != head->tid)
		return NULL;
	*nr = j->py_nr;
	return j->py;
}

/* A head closes the sample its pieces began; kstack as dwarf_sample_fn's. */
static void on_head(struct dwarf_joiner *jn, struct dwarf_join *j, uint64_t time,
		    const unsigned char *data, uint32_t size, const uint64_t *kstack)
{
	struct user_snapshot snap;
	struct dwarf_head rec;

	jn->heads++;
	if (j->broken || size < sizeof(rec)) {
		/* Its pieces (or the head itself) were lost. */
		if (size < sizeof(rec))
			jn->bad++;
		else
			jn->broken_heads++;
		goto out;
	}
	/* perf_buffer data follows the record's u32 size, so it is only 4-byte aligned. */
	memcpy(&rec, data, sizeof(rec));
	if (rec.regs_valid) {
		/* The program sends whole pieces: the copy ends at --stack-dump-size. */
		snap = (struct user_snapshot){ .ip = rec.ip, .sp = rec.sp, .bp = rec.bp,
					       .stack_size = j->size < jn->dump_size ? j->size
										     : jn->dump_size };
		if (j->joined) {
			snap.stack = j->stack;
		} else if (j->nr_at) {
			snap.pieces = j->at;
			snap.piece_lens = j->lens;
			snap.nr_pieces = j->nr_at;
		} else {
			snap.stack_size = 0;
		}
	}
	jn->on_sample(jn->ctx, (int)(j - jn->cpus), time, &rec, kstack,
		      rec.regs_valid ? &snap : NULL);
out:
	j->size = 0;
	j->nr_at = 0;
	j->joined = false;
	j->broken = false;
	j->py_nr = j->py_got = 0;
	j->py_bad = false;
}

/*
 * The 5.15 program's record: head, piece (maybe empty), then the kernel
 * stack of head.kernel_stack_id frames when that is not negative (an
 * error). Returns false when the record does not hold what it says.
 */
static bool on_head_piece_kstack(struct dwarf_joiner *jn, struct dwarf_join *j, uint64_t time,
				 const unsigned char *data, uint32_t size)
{
	const size_t head = sizeof(struct dwarf_head) + sizeof(struct dwarf_piece);
	uint64_t kstack[PROFILE_MAX_STACK_DEPTH];
	struct dwarf_head rec;
	__u32 len;

	if (size < head)
		return false;
	memcpy(&rec, data, sizeof(rec));
	memcpy(&len, data + sizeof(rec) + offsetof(struct dwarf_piece, len), sizeof(len));
	if (len > size - head)
		return false;
	if (rec.kernel_stack_id >= 0) {
		size_t bytes = (size_t)rec.kernel_stack_id * sizeof(kstack[0]);

		if (rec.kernel_stack_id > PROFILE_MAX_STACK_DEPTH || bytes > size - head - len)
			return false;
		memcpy(kstack, data + head + len, bytes);
		/* A zero ends a stack shorter than the array (as in a stack map's entry). */
		if (rec.kernel_stack_id < PROFILE_MAX_STACK_DEPTH)
			kstack[rec.kernel_stack_id] = 0;
	}
	if (len)
		on_piece(jn, j, data + sizeof(rec), (uint32_t)sizeof(struct dwarf_piece) + len);
	on_head(jn, j, time, data, size, rec.kernel_stack_id >= 0 ? kstack : NULL);
	return true;
}

int dwarf_joiner__record(struct dwarf_joiner *jn, int cpu, uint64_t time, const void *data,
			 uint32_t size)
{
	const unsigned char *bytes = data;
	struct dwarf_join *j;
	__u32 kind;

	if (cpu < 0 || cpu >= jn->nr_cpus || size < sizeof(kind)) {
		jn->bad++;
		return 0;
	}
	j = &jn->cpus[cpu];
	jn->records++;
	memcpy(&kind, data, sizeof(kind));
	if (kind == DWARF_REC_PIECE) {
		on_piece(jn, j, bytes, size);
	} else if (kind == DWARF_REC_HEAD) {
		on_head(jn, j, time, bytes, size, NULL);
	} else if (kind == DWARF_REC_HEAD_PIECE_KSTACK) {
		if (!on_head_piece_kstack(jn, j, time, bytes, size)) {
			/* Its sample is lost (and counted): the head drops it. */
			bad_record(jn, j);
			on_head(jn, j, time, bytes, size, NULL);
		}
	} else if (kind == DWARF_REC_PY) {
		on_py(jn, j, bytes, size);
	} else if (kind == DWARF_REC_HEAD_PIECE) {
		/* The 5.15 program's: the sample's last piece after its head, in one record. */
		if (size < sizeof(struct dwarf_head)) {
			bad_record(jn, j);
			return 0;
		}
		on_piece(jn, j, bytes + sizeof(struct dwarf_head), size - sizeof(struct dwarf_head));
		on_head(jn, j, time, bytes, size, NULL);
	} else {
		bad_record(jn, j);
	}
	return 0;
}

void dwarf_joiner__lost(struct dwarf_joiner *jn, int cpu)
{
	if (cpu >= 0 && cpu < jn->nr_cpus)
		jn->cpus[cpu].broken = true;
	else
		for (int i = 0; i < jn->nr_cpus; i++)
			jn->cpus[i].broken = true;
}

void dwarf_joiner__batch_done(struct dwarf_joiner *jn)
{
	for (int i = 0; i < jn->nr_cpus; i++) {
		struct dwarf_join *j = &jn->cpus[i];

		if (j->nr_at && !j->broken && join_pieces(j) && !jn->err)
			jn->err = -ENOMEM;
		if (j->nr_at)
			j->broken = true;	/* out of memory: dropped at its head */
		j->nr_at = 0;
	}
}
