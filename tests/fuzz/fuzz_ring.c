// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: a perf mmap ring of arbitrary bytes, read by the ring
 * reader (record framing, wrap-around), each record handed to every record
 * decoder (and a sample's stack copy cut as the reader thread cuts it, then
 * decoded again). The ring is written by the kernel, but a bug or a hostile record
 * must never make the reader touch memory outside the ring.
 *
 * Input: 16 bytes of parameters (sample_type choice, regs mask, tail,
 * head), then the ring's data (the largest power of two that fits).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend-perfring/decode.h"
#include "backend-perfring/ring.h"

static const uint64_t sample_types[] = {
	PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN,
	PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN |
		PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
	PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU,
	PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
		PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW,
};

struct params {
	uint64_t sample_type;
	uint64_t regs_mask;
};

static int on_record(const struct perf_event_header *hdr, void *ctx)
{
	const struct params *p = ctx;
	uint64_t kernel[MAX_STACK_DEPTH], user[MAX_STACK_DEPTH], lost, reg;
	unsigned int nk, nu;
	struct decoded_sample ds;
	struct decoded_mmap mm;
	struct decoded_comm cm;
	struct decoded_task tk;
	struct sample_id id;

	if (!decode__sample(hdr, p->sample_type, p->regs_mask, &ds)) {
		decode__split_callchain(ds.ips, ds.nr_ips, kernel, &nk, user, &nu, MAX_STACK_DEPTH);
		for (unsigned int r = 0; r < 64; r++)
			decode__user_reg(&ds, p->regs_mask, r, &reg);
		/* Touch every byte the decoder says is there. */
		volatile unsigned char sink = 0;
		for (uint64_t i = 0; i < ds.stack_size; i++)
			sink ^= ds.stack[i];
		for (uint64_t i = 0; i < ds.nr_ips; i++)
			sink ^= (unsigned char)ds.ips[i];
		(void)sink;
		/* A cut stack copy (the reader's) decodes to the same fields. */
		size_t cut = decode__cut_stack_len(hdr, p->sample_type, &ds);

		if (cut) {
			unsigned char *out = malloc(cut);
			struct decoded_sample dc;

			if (!out)
				abort();
			decode__cut_stack(hdr, &ds, cut, out);
			if (decode__sample((const struct perf_event_header *)out, p->sample_type,
					   p->regs_mask, &dc) ||
			    dc.stack_size != ds.stack_size || dc.nr_ips != ds.nr_ips ||
			    memcmp(dc.stack, ds.stack, ds.stack_size))
				abort();
			free(out);
		}
		/* So does one completed with more bytes (the reader's, stackfill.h). */
		size_t room = decode__stack_room(hdr, p->sample_type, &ds);

		if (room) {
			unsigned char *out = malloc(hdr->size), *extra = malloc(room);
			struct decoded_sample dc;
			size_t len;

			if (!out || !extra)
				abort();
			memset(extra, 0x5a, room);
			len = decode__fill_stack(hdr, &ds, extra, room, out);
			if (len > hdr->size ||
			    decode__sample((const struct perf_event_header *)out, p->sample_type,
					   p->regs_mask, &dc) ||
			    dc.stack_size != ds.stack_size + room ||
			    memcmp(dc.stack, ds.stack, ds.stack_size))
				abort();
			free(extra);
			free(out);
		}
	}
	decode__sample_id(hdr, p->sample_type, true, &id);
	if (!decode__mmap(hdr, p->sample_type, true, &mm)) {
		(void)strlen(mm.filename);
		if (mm.build_id_size > sizeof(mm.build_id))
			abort();
	}
	if (!decode__comm(hdr, p->sample_type, true, &cm))
		(void)strlen(cm.comm);
	decode__task(hdr, &tk);
	decode__lost(hdr, &lost);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_event_mmap_page meta;
	struct perf_ring ring;
	struct params p;
	uint64_t ring_size = 64, tail, head;
	unsigned char *buf;

	if (size < 16 + 64)
		return 0;
	while (ring_size * 2 <= size - 16 && ring_size < 65536)
		ring_size *= 2;
	p.sample_type = sample_types[data[0] % (sizeof(sample_types) / sizeof(sample_types[0]))];
	p.regs_mask = (uint64_t)data[1] << 6 | (data[2] & 0x3f);
	memcpy(&tail, data + 4, 4);
	memcpy(&head, data + 8, 8);
	tail = (tail & 0xffffffff) % ring_size & ~7ULL;
	head = tail + head % (ring_size + 1);

	/* Exactly the ring's size, so that any read past it is caught. */
	buf = malloc(ring_size);
	if (!buf)
		return 0;
	memcpy(buf, data + 16, ring_size);
	memset(&meta, 0, sizeof(meta));
	meta.data_head = head;
	meta.data_tail = tail;
	ring__init(&ring, &meta, buf, ring_size);
	ring__consume(&ring, on_record, &p);
	ring__fini(&ring);
	free(buf);
	return 0;
}
