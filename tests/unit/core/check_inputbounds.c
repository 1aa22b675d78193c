// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile profiles for --diff: names crafted to share one hash value, a
 * small .pb.gz that inflates to much, counts whose sum passes 2^64. Each
 * against a harmless input of the same size, in a child whose peak RSS and
 * time are measured.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/input/read.h"
#include "core/lib/hashmap.h"
#include "core/model/diff.h"
#include "core/output/writer.h"
#include "tests/support/measure.h"
#include "tests/support/tests.h"

/* SipHash-2-4's vectors from its paper (key 00..0f, message 00..len-1). */
START_TEST(siphash_gives_the_reference_values)
{
	unsigned char msg[16];
	uint64_t k0 = 0x0706050403020100ULL, k1 = 0x0f0e0d0c0b0a0908ULL;

	for (int i = 0; i < 16; i++)
		msg[i] = (unsigned char)i;
	ck_assert_uint_eq(siphash24(msg, 0, k0, k1), 0x726fdb47dd0e0e31ULL);
	ck_assert_uint_eq(siphash24(msg, 15, k0, k1), 0xa129ca6149be45e5ULL);
}
END_TEST

/* SipHash-2-4-128's vectors (vectors_sip128 of the reference code: key 00..0f, message 00..len-1). */
START_TEST(siphash128_gives_the_reference_values)
{
	static const struct {
		size_t len;
		uint64_t h[2];
	} want[] = {
		{ 0, { 0xe6a825ba047f81a3ULL, 0x930255c71472f66dULL } },
		{ 1, { 0x44af996bd8c187daULL, 0x45fc229b11597634ULL } },
		{ 8, { 0x61f55862baa9623bULL, 0xb49714f364e2830fULL } },
		{ 9, { 0xabbad90a06994426ULL, 0xed716dbb028b7fc4ULL } },
	};
	uint64_t k0 = 0x0706050403020100ULL, k1 = 0x0f0e0d0c0b0a0908ULL, h[2];
	unsigned char msg[16];

	for (int i = 0; i < 16; i++)
		msg[i] = (unsigned char)i;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		siphash24_128(msg, want[i].len, k0, k1, h);
		ck_assert_uint_eq(h[0], want[i].h[0]);
		ck_assert_uint_eq(h[1], want[i].h[1]);
	}
	/* The run's fingerprint is keyed: not the zero key's. */
	hash_bytes128(msg, 9, h);
	ck_assert_uint_ne(h[0], want[3].h[0]);
}
END_TEST

struct id_keys {
	const uint64_t *keys;
	uint64_t want;
};

static bool id_key_match(const void *ctx, uint32_t id)
{
	const struct id_keys *q = ctx;

	return q->keys[id] == q->want;
}

/*
 * The id table finds every id by its key, ids whose hashes are equal (a
 * flood of one hash costs time, never answers) included.
 */
START_TEST(id_table_finds_every_id)
{
	enum { N = 100000, SAME = 50 };
	uint64_t *keys = malloc(N * sizeof(*keys));
	struct idtable t;

	ck_assert_ptr_nonnull(keys);
	idtable__init(&t);
	ck_assert_int_eq(idtable__find(&t, 1, id_key_match, &(struct id_keys){ keys, 1 }), -1);
	for (uint32_t i = 0; i < N; i++) {
		keys[i] = (uint64_t)i * 7919 + 3;
		ck_assert_int_eq(idtable__add(&t, i < SAME ? 42 : hash_bytes(&keys[i], 8, 0), i), 0);
	}
	ck_assert_uint_eq(t.size, N);
	ck_assert_uint_le(t.size * 10, t.nr_slots * 7);
	for (uint32_t i = 0; i < N; i++) {
		uint64_t h = i < SAME ? 42 : hash_bytes(&keys[i], 8, 0);

		ck_assert_int_eq(idtable__find(&t, h, id_key_match, &(struct id_keys){ keys, keys[i] }),
				 i);
	}
	ck_assert_int_eq(idtable__find(&t, 42, id_key_match, &(struct id_keys){ keys, 5 }), -1);
	ck_assert_int_eq(idtable__add(&t, 1, UINT32_MAX), -ENOMEM);
	idtable__clear(&t);
	free(keys);
}
END_TEST

START_TEST(hash_of_bytes_is_keyed_per_run)
{
	const char *name = "a_name_any_run_hashes";
	uint64_t h = hash_bytes(name, strlen(name), 0);

	/* Not the unkeyed hash, and not a constant: two values of the key differ. */
	ck_assert_uint_ne(h, hash_bytes_fixed(name, strlen(name), 0));
	ck_assert_uint_ne(h, siphash24(name, strlen(name), 0, 0));
	ck_assert_uint_eq(h, hash_bytes(name, strlen(name), 0));
}
END_TEST

/* The string hash main used for every table (a multiply-xorshift, no key). */
static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static uint64_t inverse(uint64_t c)
{
	uint64_t inv = c;

	for (int i = 0; i < 6; i++)
		inv *= 2 - c * inv;
	return inv;
}

static uint64_t unmix(uint64_t x)
{
	x ^= x >> 33;
	x *= inverse(0xc4ceb9fe1a85ec53ULL);
	x ^= x >> 33;
	x *= inverse(0xff51afd7ed558ccdULL);
	return x ^ (x >> 33);
}

static bool word_fits_a_name(uint64_t w)
{
	for (int i = 0; i < 8; i++) {
		unsigned char c = (unsigned char)(w >> (8 * i));

		if (!c || c == ';' || c == '\n' || c == '\r' || c == ' ')
			return false;
	}
	return true;
}

/*
 * nr folded lines "c;NAME 1" whose frames' keys ("U:NAME", 24 bytes) all
 * hash to one value under main's hash (colliding) or do not. The last eight
 * bytes are solved for: the mixer is invertible.
 */
static char *flood_text(unsigned int nr, bool colliding, size_t *len)
{
	const uint64_t target = 0x5eed5eed5eed5eedULL;
	char *text = malloc((size_t)nr * 32 + 1), *p = text;
	uint64_t rnd = 88172645463325252ULL;

	ck_assert_ptr_nonnull(text);
	for (unsigned int i = 0; i < nr; i++) {
		char key[25];
		uint64_t w[3], h;

		snprintf(key, 9, "U:%06x", i);
		memcpy(&w[0], key, 8);
		for (;;) {
			rnd ^= rnd << 13, rnd ^= rnd >> 7, rnd ^= rnd << 17;
			/* Eight letters, then the word that makes the hash the target. */
			w[1] = 0;
			for (int b = 0; b < 8; b++)
				w[1] |= (uint64_t)('a' + (rnd >> (5 * b)) % 26) << (8 * b);
			h = mix(mix((0x9e3779b97f4a7c15ULL ^ 24) ^ w[0]) ^ w[1]);
			w[2] = h ^ unmix(target);
			if (!colliding)
				w[2] = w[1] ^ 0x0101010101010101ULL;
			if (word_fits_a_name(w[2]))
				break;
		}
		memcpy(key + 8, &w[1], 16);
		key[24] = '\0';
		p += sprintf(p, "c;%s 1\n", key + 2);
	}
	*len = (size_t)(p - text);
	return text;
}

struct flood {
	const char *text;
	size_t len;
};

static long read_text(const void *arg)
{
	const struct flood *f = arg;
	struct errmsg em = { "" };
	struct profile p, d;
	long frames;

	if (profile__read_folded(f->text, f->len, &p, &em))
		return -1;
	if (profile__diff(&p, &p, &d))
		return -2;
	frames = (long)d.nr_frames;
	profile__fini(&p);
	profile__fini(&d);
	return frames;
}

/*
 * 30,000 frames whose names share one 64-bit value of main's unkeyed hash
 * made the folded reader and the diff quadratic: 26 s instead of 0.4.
 */
START_TEST(names_crafted_to_collide_cost_what_others_do)
{
	struct flood hostile, plain;
	struct cost h, p;

	hostile.text = flood_text(30000, true, &hostile.len);
	plain.text = flood_text(30000, false, &plain.len);
	p = measure(read_text, &plain, 100);
	h = measure(read_text, &hostile, 100);
	ck_assert_msg(h.seconds < 4 * p.seconds + 0.5, "colliding names: %.2f s, others: %.2f s",
		      h.seconds, p.seconds);
	ck_assert_int_eq(p.result, 30000);
	ck_assert_int_eq(h.result, 30000);
	free((void *)hostile.text);
	free((void *)plain.text);
}
END_TEST

struct blob {
	unsigned char *buf;
	size_t len;
};

/* len bytes of data as a gzip stream. */
static struct blob gzip_of(const void *data, size_t len)
{
	struct blob b = { malloc(len / 100 + 65536), 0 };
	z_stream zs = { 0 };

	ck_assert_ptr_nonnull(b.buf);
	ck_assert_int_eq(deflateInit2(&zs, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY), Z_OK);
	zs.next_in = (unsigned char *)data;
	zs.avail_in = (uInt)len;
	zs.next_out = b.buf;
	zs.avail_out = (uInt)(len / 100 + 65536);
	ck_assert_int_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
	b.len = zs.total_out;
	deflateEnd(&zs);
	return b;
}

/* A pprof file as this tool writes it, of nr stacks of three random names. */
static struct blob real_pprof(unsigned int nr)
{
	struct writer_opts wo = { 0 };
	struct errmsg em = { "" };
	char *text = malloc((size_t)nr * 64), *t = text;
	uint64_t rnd = 2463534242ULL;
	struct blob b = { NULL, 0 };
	struct profile p;
	FILE *f;

	ck_assert_ptr_nonnull(text);
	for (unsigned int i = 0; i < nr; i++) {
		rnd ^= rnd << 13, rnd ^= rnd >> 7, rnd ^= rnd << 17;
		t += sprintf(t, "app;main;fn_%u;fn_%u;leaf_%u %u\n", (unsigned)(rnd % 500),
			     (unsigned)(rnd >> 20) % 500, i, (unsigned)(rnd >> 40) % 1000 + 1);
	}
	ck_assert_msg(!profile__read_folded(text, (size_t)(t - text), &p, &em), "%s", em.text);
	free(text);
	f = open_memstream((char **)&b.buf, &b.len);
	ck_assert_int_eq(writer__pprof(f, &p, &wo), 0);
	fclose(f);
	profile__fini(&p);
	return b;
}

static long read_pprof(const void *arg)
{
	const struct blob *b = arg;
	struct errmsg em = { "" };
	struct profile p;
	int ret = profile__read_pprof(b->buf, b->len, &p, &em);

	profile__fini(&p);
	if (ret)
		fprintf(stderr, "%s\n", em.text);
	return ret ? -ret : 0;
}

/*
 * 32 KB of gzip'ed empty samples ("sample {}" 16 million times) took 3.2 GB:
 * each a message of two bytes decoded into a hundred, then a stack. It is
 * refused once it passes what its size allows, its memory bounded.
 */
START_TEST(a_small_pprof_file_cannot_take_the_memory_of_a_large_one)
{
	/* Past what a file of its size may inflate to; within it, but decoding to too much. */
	const size_t sizes[] = { 32u << 20, 1u << 20 };
	const long errs[] = { EFBIG, E2BIG };
	struct blob plain = real_pprof(1400);
	struct cost p = measure(read_pprof, &plain, 60);

	ck_assert_int_eq(p.result, 0);
	for (int k = 0; k < 2; k++) {
		unsigned char *raw = malloc(sizes[k]);
		struct blob bomb;
		struct cost h;

		ck_assert_ptr_nonnull(raw);
		for (size_t i = 0; i < sizes[k]; i += 2) {
			raw[i] = 0x12;	/* field 2 (sample), length-delimited */
			raw[i + 1] = 0;	/* of no bytes */
		}
		bomb = gzip_of(raw, sizes[k]);
		free(raw);
		h = measure(read_pprof, &bomb, 60);
		ck_assert_msg(h.rss_kb < 128 * 1024,
			      "%zu bytes of pprof: %ld KB; %zu bytes of a real one: %ld KB", bomb.len,
			      h.rss_kb, plain.len, p.rss_kb);
		ck_assert_int_eq(h.result, errs[k]);
		free(bomb.buf);
	}
	free(plain.buf);
}
END_TEST

/* Protocol buffers by hand: a varint, a field's key, a length-delimited field. */
static size_t put_varint(unsigned char *p, uint64_t v)
{
	size_t n = 0;

	do {
		p[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return n;
}

static size_t put_bytes(unsigned char *p, unsigned int field, const void *data, size_t len)
{
	size_t n = put_varint(p, (uint64_t)field << 3 | 2);

	n += put_varint(p + n, len);
	memcpy(p + n, data, len);
	return n + len;
}

/*
 * One function named by 1 MiB of 'n', and samples that name it in 500
 * frames each: a few KB of gzip that a report (and main's --diff, which
 * keyed stacks by their names) would print or compare as gigabytes.
 */
START_TEST(a_long_name_in_every_frame_is_refused)
{
	size_t name_len = 1u << 20, n = 0, m;
	unsigned char *raw = malloc(name_len + 65536), msg[4096];
	char *name = malloc(name_len);
	struct blob gz;
	struct cost c;

	ck_assert_ptr_nonnull(raw);
	ck_assert_ptr_nonnull(name);
	memset(name, 'n', name_len);
	n += put_bytes(raw + n, 6, "", 0);		/* string_table[0] */
	n += put_bytes(raw + n, 6, name, name_len);	/* [1] */
	n += put_bytes(raw + n, 6, "samples", 7);	/* [2] */
	n += put_bytes(raw + n, 6, "count", 5);		/* [3] */
	n += put_bytes(raw + n, 1, "\x08\x02\x10\x03", 4);	/* sample_type {2, 3} */
	n += put_bytes(raw + n, 5, "\x08\x01\x10\x01", 4);	/* function {id 1, name 1} */
	n += put_bytes(raw + n, 4, "\x08\x01\x22\x02\x08\x01", 6);	/* location {1, line {fn 1}} */
	/* sample {location_id: [1 x 500], value: [1]} */
	m = put_varint(msg, 1 << 3 | 2);
	m += put_varint(msg + m, 500);
	memset(msg + m, 1, 500);
	m += 500;
	m += put_bytes(msg + m, 2, "\x01", 1);
	for (int i = 0; i < 100; i++)
		n += put_bytes(raw + n, 2, msg, m);
	free(name);
	gz = gzip_of(raw, n);
	free(raw);
	c = measure(read_pprof, &gz, 60);
	ck_assert_int_eq(c.result, E2BIG);
	ck_assert_msg(c.rss_kb < 128 * 1024 + MEASURE_ASAN_KB, "%zu bytes: %ld KB", gz.len,
		      c.rss_kb);
	free(gz.buf);
}
END_TEST

/* Two counts whose sum wraps made shares of 643%: refused with the reason. */
START_TEST(counts_summing_past_64_bits_are_refused)
{
	const char *text = "app;main;a 18446744073709551600\n"
			   "app;main;b 100\n";
	struct errmsg em = { "" };
	struct profile p;

	ck_assert_int_eq(profile__read_folded(text, strlen(text), &p, &em), -EOVERFLOW);
	ck_assert_ptr_nonnull(strstr(em.text, "sum past 2^64"));
	profile__fini(&p);
	text = "app;main;a 18446744073709551600\n";
	ck_assert_int_eq(profile__read_folded(text, strlen(text), &p, &em), 0);
	profile__fini(&p);
}
END_TEST

Suite *inputbounds_suite(void)
{
	Suite *s = suite_create("inputbounds");
	TCase *th = tcase_create("hash");
	TCase *tp = tcase_create("pprof");

	tcase_set_timeout(th, 240);
	tcase_add_test(th, siphash_gives_the_reference_values);
	tcase_add_test(th, siphash128_gives_the_reference_values);
	tcase_add_test(th, id_table_finds_every_id);
	tcase_add_test(th, hash_of_bytes_is_keyed_per_run);
	tcase_add_test(th, names_crafted_to_collide_cost_what_others_do);
	suite_add_tcase(s, th);
	tcase_set_timeout(tp, 120);
	tcase_add_test(tp, a_small_pprof_file_cannot_take_the_memory_of_a_large_one);
	tcase_add_test(tp, counts_summing_past_64_bits_are_refused);
	tcase_add_test(tp, a_long_name_in_every_frame_is_refused);
	suite_add_tcase(s, tp);
	return s;
}
