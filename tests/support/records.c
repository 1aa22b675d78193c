// SPDX-License-Identifier: GPL-2.0
#include "tests/support/records.h"

#include <stdlib.h>
#include <string.h>

void rb_begin(struct record_builder *b, uint32_t type, uint16_t misc)
{
	memset(b, 0, sizeof(*b));
	b->hdr.type = type;
	b->hdr.misc = misc;
	b->len = sizeof(b->hdr);
}

void rb_put(struct record_builder *b, const void *p, size_t n)
{
	/* Through a pointer to the whole record, not to the header member it overlays. */
	unsigned char *record = (unsigned char *)b;

	if (b->len + n > sizeof(b->bytes))
		abort();
	memcpy(record + b->len, p, n);
	b->len += n;
}

void rb_u32x2(struct record_builder *b, uint32_t x, uint32_t y)
{
	rb_put(b, &x, 4);
	rb_put(b, &y, 4);
}

void rb_u64(struct record_builder *b, uint64_t v)
{
	rb_put(b, &v, 8);
}

void rb_str(struct record_builder *b, const char *s)
{
	size_t n = (strlen(s) + 1 + 7) & ~7UL;

	memset(b->bytes + b->len, 0, n);
	memcpy(b->bytes + b->len, s, strlen(s));
	b->len += n;
}

void rb_trailer(struct record_builder *b, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu)
{
	rb_u32x2(b, pid, tid);
	rb_u64(b, time);
	rb_u32x2(b, cpu, 0);
}

const struct perf_event_header *rb_end(struct record_builder *b)
{
	b->hdr.size = (uint16_t)b->len;
	return &b->hdr;
}

const struct perf_event_header *rb_sample(struct record_builder *b, uint32_t pid, uint32_t tid,
					  uint32_t cpu, const uint64_t *kernel, unsigned int nk,
					  const uint64_t *user, unsigned int nu)
{
	rb_begin(b, PERF_RECORD_SAMPLE, nk ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER);
	rb_u32x2(b, pid, tid);
	rb_u64(b, 1000);
	rb_u32x2(b, cpu, 0);
	rb_u64(b, (nk ? nk + 1 : 0) + (nu ? nu + 1 : 0));
	if (nk) {
		rb_u64(b, (uint64_t)PERF_CONTEXT_KERNEL);
		rb_put(b, kernel, nk * sizeof(*kernel));
	}
	if (nu) {
		rb_u64(b, (uint64_t)PERF_CONTEXT_USER);
		rb_put(b, user, nu * sizeof(*user));
	}
	return rb_end(b);
}
