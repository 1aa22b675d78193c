// SPDX-License-Identifier: GPL-2.0
/*
 * The bpf backend's --unwind dwarf copy: the chunk count user space gives
 * the stack-copy program makes it send the pieces that cover
 * --stack-dump-size and not one more, within what a join holds.
 */
#include <stdint.h>

#include "backend-bpf/dwarf.h"
#include "bpf/profile_maps.h"
#include "tests/support/tests.h"

/* The pieces bpf/dwarf.bpf.h's copy_stack sends when every read succeeds. */
static unsigned int pieces_sent(unsigned int chunks, unsigned int piece)
{
	unsigned int max = (PROFILE_DUMP_MAX + piece - 1) / piece, n = 0;

	while (n < max && (uint64_t)n * piece < (uint64_t)chunks * PROFILE_DUMP_UNIT)
		n++;
	return n;
}

START_TEST(each_size_sends_the_pieces_that_cover_it)
{
	static const unsigned int pieces[] = { PROFILE_DUMP_PIECE_STACK, PROFILE_DUMP_PIECE_MAP };

	for (unsigned int k = 0; k < 2; k++) {
		unsigned int piece = pieces[k];

		/* --stack-dump-size: multiples of 8 up to 65528. */
		for (unsigned int size = 8; size <= 65528; size += 8) {
			unsigned int n = pieces_sent(bpf_dwarf__chunks(size, piece), piece);

			ck_assert_msg(n == (size + piece - 1) / piece,
				      "%u bytes in pieces of %u: %u pieces sent", size, piece, n);
			ck_assert_uint_le((uint64_t)n * piece, PROFILE_DUMP_MAX);
		}
	}
}
END_TEST

Suite *dwarfpieces_suite(void)
{
	Suite *s = suite_create("dwarfpieces");
	TCase *tc = tcase_create("chunks");

	tcase_add_test(tc, each_size_sends_the_pieces_that_cover_it);
	suite_add_tcase(s, tc);
	return s;
}
