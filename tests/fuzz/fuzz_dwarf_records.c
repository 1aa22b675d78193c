// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: records of the bpf backend's stack-copy programs
 * (pieces, heads, 5.15's head + piece + kernel stack, Python frames),
 * joined per CPU into samples by backend-bpf/dwarf_join.c. The program writes them, but its
 * pieces carry user memory and its sizes come from a verifier-bounded
 * register: no record may make the joiner read outside the records, or
 * hand on a stack copy longer than the pieces it was made of.
 *
 * Input: 4 bytes of parameters (which program's longest piece, the
 * --stack-dump-size in 8-byte units, one spare), then records, each a byte
 * of cpu and flags, two of size and its bytes. Each record is copied into
 * memory of its own exact size, so ASan sees a read past its end. A record
 * flagged "batch end" ends a ring batch: the batch's records are freed
 * after the joiner copied out what it keeps, as a drain reuses them, so
 * ASan sees a piece read after that.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend-bpf/dwarf_join.h"

#define NR_CPUS 4
#define FLAG_BATCH_END 0x80
#define FLAG_LOST 0x40
/* Records a batch holds at most (a larger one ends early). */
#define BATCH_RECORDS 4096

static const unsigned int longest[] = { PROFILE_DUMP_PIECE_ONE, PROFILE_DUMP_PIECE_MAP,
					PROFILE_DUMP_PIECE_STACK };

static void on_sample(void *ctx, int cpu, uint64_t time, const struct dwarf_head *head,
		      const uint64_t *kstack, const struct user_snapshot *snap)
{
	volatile unsigned char sink = 0;
	size_t total = 0;
	const struct interp_frame *py;
	unsigned int nr;

	(void)time;
	if (cpu < 0 || cpu >= NR_CPUS || !head)
		abort();
	/* The Python frames joined for the head: no more than a stack holds, all written. */
	py = dwarf_joiner__py(ctx, cpu, head, &nr);
	if (py && (nr == 0 || nr > PY_MAX_FRAMES))
		abort();
	for (unsigned int i = 0; py && i < nr; i++)
		sink ^= (unsigned char)(py[i].code ^ py[i].lasti ^ py[i].ident);
	for (unsigned int i = 0; kstack && i < PROFILE_MAX_STACK_DEPTH && kstack[i]; i++) {
		/* Past the frames the record carried is the joiner's own stack memory. */
		if ((__s32)i >= head->kernel_stack_id)
			abort();
		sink ^= (unsigned char)kstack[i];
	}
	if (!snap)
		return;
	if (snap->stack) {
		for (size_t i = 0; i < snap->stack_size; i++)
			sink ^= ((const unsigned char *)snap->stack)[i];
		return;
	}
	for (unsigned int p = 0; p < snap->nr_pieces; p++) {
		for (uint32_t i = 0; i < snap->piece_lens[p]; i++)
			sink ^= snap->pieces[p][i];
		total += snap->piece_lens[p];
	}
	/* The unwinder reads stack_size bytes across the pieces. */
	if (snap->stack_size > total)
		abort();
	(void)sink;
}

static void free_batch(unsigned char **batch, unsigned int *nr)
{
	for (unsigned int i = 0; i < *nr; i++)
		free(batch[i]);
	*nr = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned char *batch[BATCH_RECORDS];
	struct dwarf_joiner jn;
	unsigned int nr = 0;
	size_t at = 4;
	unsigned int dump;

	if (size < 4)
		return 0;
	dump = ((unsigned int)data[1] << 8 | data[2]) * 8;
	if (dwarf_joiner__init(&jn, NR_CPUS, longest[data[0] % 3], dump ? dump : 8, on_sample,
			       &jn))
		return 0;
	while (at + 3 <= size) {
		unsigned int flags = data[at];
		size_t len = (size_t)data[at + 1] << 8 | data[at + 2];
		unsigned char *rec;

		at += 3;
		if (len > size - at)
			len = size - at;
		rec = malloc(len ? len : 1);
		if (!rec)
			break;
		memcpy(rec, data + at, len);
		batch[nr++] = rec;
		at += len;
		if (flags & FLAG_LOST)
			dwarf_joiner__lost(&jn, (int)(flags & 0x3f) - 1);
		dwarf_joiner__record(&jn, (int)(flags & 0x3f) % (NR_CPUS + 1), at, rec,
				     (uint32_t)len);
		if ((flags & FLAG_BATCH_END) || nr == BATCH_RECORDS) {
			dwarf_joiner__batch_done(&jn);
			free_batch(batch, &nr);
		}
	}
	dwarf_joiner__batch_done(&jn);
	free_batch(batch, &nr);
	dwarf_joiner__exit(&jn);
	return 0;
}
