// SPDX-License-Identifier: GPL-2.0
/* The record decoder on hand-built bytes, laid out as the kernel writes them. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "backend-perfring/decode.h"
#include "compat/perf_event.h"
#include "tests/support/records.h"
#include "tests/support/tests.h"

#define SAMPLE_TYPE TEST_SAMPLE_TYPE

START_TEST(sample_fields_and_callchain)
{
	struct record_builder b;
	struct decoded_sample ds;
	uint64_t chain[] = { (uint64_t)PERF_CONTEXT_KERNEL, 0xffffffff81000010ULL,
			     0xffffffff81000020ULL, (uint64_t)PERF_CONTEXT_USER, 0x401000, 0x401100,
			     0x401200 };

	rb_begin(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	rb_u32x2(&b, 100, 101);
	rb_u64(&b, 123456789);
	rb_u32x2(&b, 1, 0);
	rb_u64(&b, 7);
	rb_put(&b, chain, sizeof(chain));
	ck_assert_int_eq(decode__sample(rb_end(&b), SAMPLE_TYPE, 0, &ds), 0);
	ck_assert_uint_eq(ds.id.pid, 100);
	ck_assert_uint_eq(ds.id.tid, 101);
	ck_assert_uint_eq(ds.id.time, 123456789);
	ck_assert_uint_eq(ds.id.cpu, 1);
	ck_assert_uint_eq(ds.nr_ips, 7);
	ck_assert_uint_eq(ds.ips[4], 0x401000);

	uint64_t k[8], u[8];
	unsigned int nk, nu;

	decode__split_callchain(ds.ips, ds.nr_ips, k, &nk, u, &nu, 8);
	ck_assert_uint_eq(nk, 2);
	ck_assert_uint_eq(nu, 3);
	ck_assert_uint_eq(k[0], 0xffffffff81000010ULL);
	ck_assert_uint_eq(u[2], 0x401200);
	/* max_depth cuts each part. */
	decode__split_callchain(ds.ips, ds.nr_ips, k, &nk, u, &nu, 2);
	ck_assert_uint_eq(nu, 2);
}
END_TEST

START_TEST(callchain_longer_than_record_is_rejected)
{
	struct record_builder b;
	struct decoded_sample ds;

	rb_begin(&b, PERF_RECORD_SAMPLE, 0);
	rb_u32x2(&b, 1, 1);
	rb_u64(&b, 1);
	rb_u32x2(&b, 0, 0);
	rb_u64(&b, 1000);	/* claims 1000 ips, carries one */
	rb_u64(&b, 0x401000);
	ck_assert_int_eq(decode__sample(rb_end(&b), SAMPLE_TYPE, 0, &ds), -EBADMSG);
}
END_TEST

START_TEST(guest_frames_are_dropped)
{
	uint64_t chain[] = { (uint64_t)PERF_CONTEXT_GUEST_KERNEL, 0xffffffff81000010ULL,
			     (uint64_t)PERF_CONTEXT_USER, 0x401000 };
	uint64_t k[4], u[4];
	unsigned int nk, nu;

	decode__split_callchain(chain, 4, k, &nk, u, &nu, 4);
	ck_assert_uint_eq(nk, 0);
	ck_assert_uint_eq(nu, 1);
}
END_TEST

/*
 * A dwarf sample whose 256-byte stack copy holds 20 bytes the kernel copied
 * (dyn_size): cut to 24, it decodes to the same fields, registers and
 * copied bytes; a full copy, or a field after the copy, is not cut.
 */
START_TEST(stack_copy_is_cut_to_what_the_kernel_copied)
{
	const uint64_t t = SAMPLE_TYPE | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	const uint64_t regs_mask = 0x1c0;	/* bp, sp, ip */
	unsigned char stack[256], cut[4096];
	struct record_builder b;
	struct decoded_sample ds, dc;
	const struct perf_event_header *hdr;
	size_t len;

	for (size_t i = 0; i < sizeof(stack); i++)
		stack[i] = (unsigned char)i;
	rb_begin(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	rb_u32x2(&b, 100, 101);
	rb_u64(&b, 123456789);
	rb_u32x2(&b, 1, 0);
	rb_u64(&b, 1);
	rb_u64(&b, 0x401000);
	rb_u64(&b, PERF_SAMPLE_REGS_ABI_64);
	rb_u64(&b, 0x7ffc0010);	/* bp */
	rb_u64(&b, 0x7ffc0000);	/* sp */
	rb_u64(&b, 0x401000);	/* ip */
	rb_u64(&b, sizeof(stack));
	rb_put(&b, stack, sizeof(stack));
	rb_u64(&b, 20);
	hdr = rb_end(&b);
	ck_assert_int_eq(decode__sample(hdr, t, regs_mask, &ds), 0);
	len = decode__cut_stack_len(hdr, t, &ds);
	ck_assert_uint_eq(len, hdr->size - sizeof(stack) + 24);
	decode__cut_stack(hdr, &ds, len, cut);
	ck_assert_uint_eq(((struct perf_event_header *)cut)->size, len);
	ck_assert_int_eq(decode__sample((struct perf_event_header *)cut, t, regs_mask, &dc), 0);
	ck_assert_uint_eq(dc.id.pid, 100);
	ck_assert_uint_eq(dc.id.time, 123456789);
	ck_assert_uint_eq(dc.nr_ips, 1);
	ck_assert_uint_eq(dc.nr_regs, 3);
	ck_assert_uint_eq(dc.regs[1], 0x7ffc0000);
	ck_assert_uint_eq(dc.stack_size, 20);
	ck_assert_int_eq(memcmp(dc.stack, stack, 20), 0);
	/* Nothing to cut: the kernel copied it all. */
	memcpy(cut, hdr, hdr->size);
	memcpy(cut + hdr->size - 8, &(uint64_t){ sizeof(stack) }, 8);
	ck_assert_int_eq(decode__sample((struct perf_event_header *)cut, t, regs_mask, &dc), 0);
	ck_assert_uint_eq(decode__cut_stack_len((struct perf_event_header *)cut, t, &dc), 0);
	/* A field the kernel writes after the copy (PERF_SAMPLE_WEIGHT): left whole. */
	ck_assert_uint_eq(decode__cut_stack_len(hdr, t | PERF_SAMPLE_WEIGHT, &ds), 0);
	ck_assert_uint_eq(decode__stack_room(hdr, t | PERF_SAMPLE_WEIGHT, &ds), 0);

	/*
	 * The copy completed with bytes read since (stackfill.h): the kernel's
	 * 20, then the extra ones, at most the 256 the ring had room for.
	 */
	unsigned char extra[300];

	memset(extra, 0xab, sizeof(extra));
	ck_assert_uint_eq(decode__stack_room(hdr, t, &ds), sizeof(stack) - 20);
	len = decode__fill_stack(hdr, &ds, extra, 13, cut);
	ck_assert_uint_eq(len, hdr->size - sizeof(stack) + 40);
	ck_assert_int_eq(decode__sample((struct perf_event_header *)cut, t, regs_mask, &dc), 0);
	ck_assert_uint_eq(dc.stack_size, 33);
	ck_assert_int_eq(memcmp(dc.stack, stack, 20), 0);
	ck_assert_int_eq(memcmp(dc.stack + 20, extra, 13), 0);
	ck_assert_uint_eq(dc.regs[1], 0x7ffc0000);
	len = decode__fill_stack(hdr, &ds, extra, sizeof(extra), cut);
	ck_assert_uint_eq(len, hdr->size);
	ck_assert_int_eq(decode__sample((struct perf_event_header *)cut, t, regs_mask, &dc), 0);
	ck_assert_uint_eq(dc.stack_size, sizeof(stack));
	ck_assert_int_eq(memcmp(dc.stack + 20, extra, sizeof(stack) - 20), 0);
}
END_TEST

START_TEST(mmap2_with_trailer)
{
	struct record_builder b;
	struct decoded_mmap mm;
	struct sample_id id;

	rb_begin(&b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	rb_u32x2(&b, 200, 200);
	rb_u64(&b, 0x7f0000001000);
	rb_u64(&b, 0x2000);
	rb_u64(&b, 0x1000);
	rb_u32x2(&b, 8, 1);
	rb_u64(&b, 4242);
	rb_u64(&b, 0);
	rb_u32x2(&b, PROT_READ | PROT_EXEC, MAP_PRIVATE);
	rb_str(&b, "/usr/lib/libfoo.so");
	rb_trailer(&b, 200, 200, 555, 0);
	ck_assert_int_eq(decode__mmap(rb_end(&b), SAMPLE_TYPE, true, &mm), 0);
	ck_assert_uint_eq(mm.pid, 200);
	ck_assert_uint_eq(mm.addr, 0x7f0000001000);
	ck_assert_uint_eq(mm.len, 0x2000);
	ck_assert_uint_eq(mm.pgoff, 0x1000);
	ck_assert_uint_eq(mm.maj, 8);
	ck_assert_uint_eq(mm.ino, 4242);
	ck_assert(mm.exec);
	ck_assert_str_eq(mm.filename, "/usr/lib/libfoo.so");
	ck_assert_int_eq(decode__sample_id(&b.hdr, SAMPLE_TYPE, true, &id), 0);
	ck_assert_uint_eq(id.time, 555);
	ck_assert_int_eq(decode__sample_id(&b.hdr, SAMPLE_TYPE, false, &id), -ENOENT);
}
END_TEST

/* 5.12's attr.build_id: the build-id in place of maj, min, ino and ino_generation. */
static const struct perf_event_header *mmap2_build_id(struct record_builder *b, uint8_t size)
{
	unsigned char ident[24] = { size };

	for (int i = 0; i < 20; i++)
		ident[4 + i] = (unsigned char)(0xa0 + i);
	rb_begin(b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	rb_u32x2(b, 300, 300);
	rb_u64(b, 0x400000);
	rb_u64(b, 0x1000);
	rb_u64(b, 0);
	rb_put(b, ident, sizeof(ident));
	rb_u32x2(b, PROT_READ | PROT_EXEC, MAP_PRIVATE);
	rb_str(b, "/usr/bin/prog");
	rb_trailer(b, 300, 300, 777, 0);
	return rb_end(b);
}

START_TEST(mmap2_with_build_id)
{
	struct record_builder b;
	struct decoded_mmap mm;

	ck_assert_int_eq(decode__mmap(mmap2_build_id(&b, 20), SAMPLE_TYPE, true, &mm), 0);
	ck_assert_uint_eq(mm.build_id_size, 20);
	ck_assert_uint_eq(mm.build_id[0], 0xa0);
	ck_assert_uint_eq(mm.build_id[19], 0xb3);
	ck_assert_uint_eq(mm.maj, 0);
	ck_assert_uint_eq(mm.ino, 0);
	ck_assert(mm.exec);
	ck_assert_str_eq(mm.filename, "/usr/bin/prog");
	/* A size the union cannot hold is a bad record, not a read past the build-id. */
	ck_assert_int_eq(decode__mmap(mmap2_build_id(&b, 21), SAMPLE_TYPE, true, &mm), -EBADMSG);
}
END_TEST

START_TEST(filename_without_nul_is_rejected)
{
	struct record_builder b;
	struct decoded_mmap mm;

	rb_begin(&b, PERF_RECORD_MMAP, 0);
	rb_u32x2(&b, 1, 1);
	rb_u64(&b, 0x1000);
	rb_u64(&b, 0x1000);
	rb_u64(&b, 0);
	rb_put(&b, "ABCDEFGH", 8);	/* no terminator before the trailer */
	rb_trailer(&b, 1, 1, 1, 0);
	ck_assert_int_eq(decode__mmap(rb_end(&b), SAMPLE_TYPE, true, &mm), -EBADMSG);
}
END_TEST

START_TEST(comm_exec_fork_lost)
{
	struct record_builder b;
	struct decoded_comm cm;
	struct decoded_task tk;
	uint64_t lost;

	rb_begin(&b, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	rb_u32x2(&b, 300, 301);
	rb_str(&b, "worker");
	rb_trailer(&b, 300, 301, 9, 1);
	ck_assert_int_eq(decode__comm(rb_end(&b), SAMPLE_TYPE, true, &cm), 0);
	ck_assert(cm.exec);
	ck_assert_uint_eq(cm.tid, 301);
	ck_assert_str_eq(cm.comm, "worker");

	rb_begin(&b, PERF_RECORD_FORK, 0);
	rb_u32x2(&b, 400, 300);
	rb_u32x2(&b, 400, 301);
	rb_u64(&b, 10);
	ck_assert_int_eq(decode__task(rb_end(&b), &tk), 0);
	ck_assert_uint_eq(tk.pid, 400);
	ck_assert_uint_eq(tk.ppid, 300);
	ck_assert_uint_eq(tk.ptid, 301);

	rb_begin(&b, PERF_RECORD_LOST, 0);
	rb_u64(&b, 1);
	rb_u64(&b, 17);
	ck_assert_int_eq(decode__lost(rb_end(&b), &lost), 0);
	ck_assert_uint_eq(lost, 17);

	rb_begin(&b, PERF_RECORD_LOST, 0);
	rb_u64(&b, 1);
	ck_assert_int_eq(decode__lost(rb_end(&b), &lost), -EBADMSG);
}
END_TEST

Suite *decode_suite(void)
{
	Suite *s = suite_create("decode");
	TCase *tc = tcase_create("records");

	tcase_add_test(tc, sample_fields_and_callchain);
	tcase_add_test(tc, callchain_longer_than_record_is_rejected);
	tcase_add_test(tc, guest_frames_are_dropped);
	tcase_add_test(tc, stack_copy_is_cut_to_what_the_kernel_copied);
	tcase_add_test(tc, mmap2_with_trailer);
	tcase_add_test(tc, mmap2_with_build_id);
	tcase_add_test(tc, filename_without_nul_is_rejected);
	tcase_add_test(tc, comm_exec_fork_lost);
	suite_add_tcase(s, tc);
	return s;
}
