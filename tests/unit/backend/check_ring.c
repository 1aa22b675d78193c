// SPDX-License-Identifier: GPL-2.0
/* The ring reader over a hand-made ring: order, wrap-around, tail, bad sizes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend-perfring/ring.h"
#include "tests/support/tests.h"

#define RING_SIZE 256

static struct perf_event_mmap_page meta;
static unsigned char data[RING_SIZE];
static struct perf_ring ring;

struct seen {
	int nr;
	uint32_t types[16];
	uint64_t payload[16];
};

static void setup(void)
{
	memset(&meta, 0, sizeof(meta));
	memset(data, 0xee, sizeof(data));
	ring__init(&ring, &meta, data, RING_SIZE);
}

static void teardown(void)
{
	ring__fini(&ring);
}

/* Write a record of `size` bytes at absolute position pos, wrapping as the kernel does. */
static void put_record(uint64_t pos, uint32_t type, uint16_t size, uint64_t payload)
{
	unsigned char rec[128];
	struct perf_event_header hdr = { .type = type, .misc = 0, .size = size };

	memset(rec, 0, sizeof(rec));
	memcpy(rec, &hdr, sizeof(hdr));
	memcpy(rec + sizeof(hdr), &payload, sizeof(payload));
	memset(rec + 16, (int)(payload & 0xff), size - 16);
	for (uint16_t i = 0; i < size; i++)
		data[(pos + i) % RING_SIZE] = rec[i];
}

static int collect(const struct perf_event_header *hdr, void *ctx)
{
	struct seen *s = ctx;
	const unsigned char *body = (const unsigned char *)(hdr + 1);

	s->types[s->nr] = hdr->type;
	memcpy(&s->payload[s->nr], body, 8);
	/* The whole record must be contiguous here, also when it wrapped. */
	for (uint16_t i = 16; i < hdr->size; i++)
		ck_assert_uint_eq(((const unsigned char *)hdr)[i], s->payload[s->nr] & 0xff);
	s->nr++;
	return 0;
}

START_TEST(reads_records_in_order_and_moves_tail)
{
	struct seen s = { 0 };

	put_record(0, 9, 24, 0x11);
	put_record(24, 3, 40, 0x22);
	meta.data_head = 64;
	ck_assert_int_eq(ring__consume(&ring, collect, &s), 2);
	ck_assert_int_eq(s.nr, 2);
	ck_assert_uint_eq(s.types[0], 9);
	ck_assert_uint_eq(s.payload[1], 0x22);
	ck_assert_uint_eq(meta.data_tail, 64);
	/* Nothing new: nothing read. */
	ck_assert_int_eq(ring__consume(&ring, collect, &s), 0);
}
END_TEST

START_TEST(record_that_wraps_is_reassembled)
{
	struct seen s = { 0 };
	uint64_t start = 3 * RING_SIZE + 200;	/* positions grow without bound */

	meta.data_tail = start;
	put_record(start, 9, 96, 0x5a);		/* 56 bytes before the end, 40 after */
	put_record(start + 96, 9, 16, 0x6b);
	meta.data_head = start + 112;
	ck_assert_int_eq(ring__consume(&ring, collect, &s), 2);
	ck_assert_uint_eq(s.payload[0], 0x5a);
	ck_assert_uint_eq(s.payload[1], 0x6b);
	ck_assert_uint_eq(meta.data_tail, start + 112);
}
END_TEST

/* The kernel publishes data_head after whole records: a longer one is corrupt. */
START_TEST(record_longer_than_published_data_is_dropped)
{
	struct seen s = { 0 };

	put_record(0, 9, 48, 0x33);
	meta.data_head = 32;
	ck_assert_int_eq(ring__consume(&ring, collect, &s), 0);
	ck_assert_uint_eq(meta.data_tail, 32);
	ck_assert_uint_eq(ring.corrupt, 1);
}
END_TEST

START_TEST(impossible_size_is_counted_not_followed)
{
	struct seen s = { 0 };

	put_record(0, 9, 24, 0x44);
	put_record(24, 9, 24, 0x55);
	data[24 + 6] = 4;	/* size 4: smaller than a header */
	data[24 + 7] = 0;
	meta.data_head = 48;
	ck_assert_int_eq(ring__consume(&ring, collect, &s), 1);
	ck_assert_uint_eq(ring.corrupt, 1);
	ck_assert_uint_eq(meta.data_tail, 48);
}
END_TEST

/*
 * A size that is not a multiple of 8 would put the next header across the
 * end of the ring (the reader then read past it: issue 14, case 13).
 */
START_TEST(size_not_a_multiple_of_8_is_corrupt)
{
	struct seen s = { 0 };

	put_record(0, 9, 24, 0x44);
	put_record(24, 9, 24, 0x55);
	data[24 + 6] = 20;	/* 20 bytes: the next record would start at 44 */
	meta.data_head = 48;
	ck_assert_int_eq(ring__consume(&ring, collect, &s), 1);
	ck_assert_uint_eq(s.payload[0], 0x44);
	ck_assert_uint_eq(ring.corrupt, 1);
	ck_assert_uint_eq(meta.data_tail, 48);
}
END_TEST

static int stop_at_second(const struct perf_event_header *hdr, void *ctx)
{
	int *n = ctx;

	return ++*n == 2 ? -ENOMEM : 0;
}

START_TEST(callback_error_stops_and_keeps_unread_records)
{
	int n = 0;

	put_record(0, 9, 16, 1);
	put_record(16, 9, 16, 2);
	put_record(32, 9, 16, 3);
	meta.data_head = 48;
	ck_assert_int_eq(ring__consume(&ring, stop_at_second, &n), -ENOMEM);
	/* The failed record was consumed; the third stays for the next read. */
	ck_assert_uint_eq(meta.data_tail, 32);
}
END_TEST

Suite *ring_suite(void)
{
	Suite *s = suite_create("ring");
	TCase *tc = tcase_create("consume");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, reads_records_in_order_and_moves_tail);
	tcase_add_test(tc, record_that_wraps_is_reassembled);
	tcase_add_test(tc, record_longer_than_published_data_is_dropped);
	tcase_add_test(tc, impossible_size_is_counted_not_followed);
	tcase_add_test(tc, size_not_a_multiple_of_8_is_corrupt);
	tcase_add_test(tc, callback_error_stops_and_keeps_unread_records);
	suite_add_tcase(s, tc);
	return s;
}
