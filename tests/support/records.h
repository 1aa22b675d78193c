/* SPDX-License-Identifier: GPL-2.0 */
/* Builds perf ring records byte by byte, as the kernel lays them out. */
#ifndef TESTS_SUPPORT_RECORDS_H
#define TESTS_SUPPORT_RECORDS_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

/* What the perf backend asks for. */
#define TEST_SAMPLE_TYPE                                                                   \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN)

struct record_builder {
	union {
		struct perf_event_header hdr;
		unsigned char bytes[4096];
	};
	size_t len;
};

void rb_begin(struct record_builder *b, uint32_t type, uint16_t misc);
void rb_put(struct record_builder *b, const void *p, size_t n);
void rb_u32x2(struct record_builder *b, uint32_t x, uint32_t y);
void rb_u64(struct record_builder *b, uint64_t v);
void rb_str(struct record_builder *b, const char *s);	/* NUL-padded to 8 bytes */
/* sample_id_all trailer for TEST_SAMPLE_TYPE */
void rb_trailer(struct record_builder *b, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu);
const struct perf_event_header *rb_end(struct record_builder *b);

/* A PERF_RECORD_SAMPLE of TEST_SAMPLE_TYPE with kernel and user ips, leaf first. */
const struct perf_event_header *rb_sample(struct record_builder *b, uint32_t pid, uint32_t tid,
					  uint32_t cpu, const uint64_t *kernel, unsigned int nk,
					  const uint64_t *user, unsigned int nu);

#endif
