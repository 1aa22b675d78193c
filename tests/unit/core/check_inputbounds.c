// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile profiles for --diff: names crafted to share one hash value, a
 * small .pb.gz that inflates to much, counts whose sum passes 2^64. Each
 * against a harmless input of the same size, in a child whose peak RSS and
 * time are measured.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/input/read.h"
#include "core/lib/hashmap.h"
#include "core/model/diff.h"
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

Suite *inputbounds_suite(void)
{
	Suite *s = suite_create("inputbounds");
	TCase *th = tcase_create("hash");

	tcase_set_timeout(th, 240);
	tcase_add_test(th, siphash_gives_the_reference_values);
	tcase_add_test(th, hash_of_bytes_is_keyed_per_run);
	tcase_add_test(th, names_crafted_to_collide_cost_what_others_do);
	suite_add_tcase(s, th);
	return s;
}
