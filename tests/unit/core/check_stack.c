// SPDX-License-Identifier: GPL-2.0
/*
 * The stack rules every sample goes through, whichever backend took it
 * (core/agg/stack.c): where a stack ends, return addresses in no executable
 * mapping, frame-pointer loops at the depth limit.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/agg/pipeline.h"
#include "core/agg/stack.h"
#include "tests/support/tests.h"

#define TEXT_START 0x400000ULL
#define TEXT_END 0x401000ULL

static struct addr_space as;

static void setup(void)
{
	memset(&as, 0, sizeof(as));
	ck_assert_int_eq(addr_space__insert(&as, &(struct mapping){ .start = TEXT_START,
								       .end = TEXT_END,
								       .exec = true,
								       .path = "/bin/x" }),
			 0);
}

static void teardown(void)
{
	for (size_t i = 0; i < as.nr_maps; i++)
		free(as.maps[i].path);
	free(as.maps);
}

START_TEST(a_stack_ends_at_zero_or_a_context_marker)
{
	uint64_t zero[] = { 0x401, 0x402, 0, 0x403 };
	uint64_t marker[] = { 0x401, (uint64_t)-512 /* PERF_CONTEXT_USER */, 0x402 };
	uint64_t cut[] = { 0x401, STACK_TRUNCATED_IP, 0x402 };

	ck_assert_uint_eq(stack__depth(zero, 4), 2);
	ck_assert_uint_eq(stack__depth(marker, 3), 1);
	/* The unwinder's marker is the stack's last frame, kept. */
	ck_assert_uint_eq(stack__depth(cut, 3), 2);
	ck_assert_uint_eq(stack__depth(NULL, 0), 0);
}
END_TEST

/* Issue 15, case 5: "0x1 [unknown]" above _fini. */
START_TEST(a_return_address_in_no_executable_mapping_ends_the_stack)
{
	uint64_t ips[] = { 0x7f0000000000ULL /* the leaf: JIT, no mapping known */, TEXT_START + 0x10,
			   0x1, TEXT_START + 0x20 };
	struct addr_space unknown = { 0 };

	ck_assert_uint_eq(stack__user_depth(&as, ips, 4), 2);
	/* A process whose mappings could not be read keeps what it has. */
	ck_assert_uint_eq(stack__user_depth(&unknown, ips, 4), 4);
	ck_assert_uint_eq(stack__user_depth(NULL, ips, 4), 4);
	/* A return address just past the mapping's end belongs to its last call. */
	ips[2] = TEXT_END;
	ck_assert_uint_eq(stack__user_depth(&as, ips, 4), 4);
}
END_TEST

/* Issue 15, case 4: a self-referential frame pointer, 126 identical frames. */
START_TEST(a_frame_pointer_loop_is_one_frame_and_a_cut)
{
	uint64_t ips[MAX_STACK_DEPTH], deep[MAX_STACK_DEPTH];
	unsigned int n;

	for (unsigned int i = 0; i < MAX_STACK_DEPTH; i++) {
		ips[i] = i < 7 ? TEXT_START + 0x100 + i : TEXT_START + 0x800;
		/* A real recursion alternates between two return addresses or more. */
		deep[i] = TEXT_START + 0x200 + (i % 2);
	}
	n = stack__collapse_loop(ips, MAX_STACK_DEPTH);
	ck_assert_uint_eq(n, 9);
	ck_assert_uint_eq(ips[7], TEXT_START + 0x800);
	ck_assert_uint_eq(ips[8], STACK_TRUNCATED_IP);
	ck_assert_uint_eq(stack__collapse_loop(deep, MAX_STACK_DEPTH), MAX_STACK_DEPTH);
	/* Cut at the limit all the same (issue 20): the marker in the last slot. */
	ck_assert_uint_eq(deep[MAX_STACK_DEPTH - 2], TEXT_START + 0x200 + 1);
	ck_assert_uint_eq(deep[MAX_STACK_DEPTH - 1], STACK_TRUNCATED_IP);
	/* Shorter than the limit: the walk ended by itself, nothing to collapse. */
	ck_assert_uint_eq(stack__collapse_loop(ips + 20, 50), 50);
}
END_TEST

/* Both rules applied by the pipeline, to every backend's samples. */
START_TEST(the_pipeline_applies_them)
{
	struct pipeline_config pc = { .user_stacks = true, .kernel_stacks = true };
	uint64_t ips[MAX_STACK_DEPTH];
	struct pipeline p;
	struct sample s = { .pid = 3000000, .tid = 3000000, .comm = "x", .user_ips = ips,
			    .nr_user = MAX_STACK_DEPTH, .kind = WEIGHT_SAMPLES, .weight = 1 };
	struct agg_entry *e;
	size_t id;

	for (unsigned int i = 0; i < MAX_STACK_DEPTH; i++)
		ips[i] = TEXT_START + (i < 3 ? 0x100 * i + 4 : 0x804);
	ck_assert_int_eq(pipeline__init(&p, &pc), 0);
	ck_assert_int_eq(proctrack__exec(p.procs, s.pid, "x", 0), 0);
	ck_assert_int_eq(proctrack__mmap(p.procs, s.pid, &as.maps[0]), 0);
	ck_assert_int_eq(pipeline__add(&p, &s), 0);
	ck_assert_uint_eq(agg__size(&p.agg), 1);
	agg__for_each(&p.agg, id, e) {
		ck_assert_uint_eq(e->raw->nr_user, 5);
		ck_assert_uint_eq(e->raw->ips[e->raw->nr_kernel + 4], STACK_TRUNCATED_IP);
	}
	pipeline__fini(&p);
}
END_TEST

/* Issue 15, cases 3 and 6: a sample of the old image after the tracker saw the exec. */
START_TEST(a_stack_of_the_image_before_an_exec_resolves_there)
{
	struct pipeline_config pc = { .user_stacks = true, .kernel_stacks = true };
	uint64_t ips[] = { TEXT_START + 0x10, TEXT_START + 0x20 };
	struct pipeline p;
	struct sample s = { .pid = 3000001, .tid = 3000001, .comm = "new", .user_ips = ips,
			    .nr_user = 2, .kind = WEIGHT_SAMPLES, .weight = 1 };
	struct agg_entry *e;
	size_t id;

	ck_assert_int_eq(pipeline__init(&p, &pc), 0);
	ck_assert_int_eq(proctrack__exec(p.procs, s.pid, "old", 0), 0);
	ck_assert_int_eq(proctrack__mmap(p.procs, s.pid, &as.maps[0]), 0);
	/* The exec: the process is "new" and has nothing mapped yet. */
	ck_assert_int_eq(proctrack__exec(p.procs, s.pid, "new", 0), 0);
	ck_assert_int_eq(pipeline__add(&p, &s), 0);
	agg__for_each(&p.agg, id, e) {
		ck_assert_uint_eq(e->raw->nr_user, 2);
		ck_assert_ptr_nonnull(e->raw->as);
		ck_assert_uint_eq(e->raw->as->nr_maps, 1);
	}
	pipeline__fini(&p);
}
END_TEST

/* The image of pid 3000002 whose mapping holds addr in the aggregate (one entry). */
static const struct addr_space *counted_in(struct pipeline *p, uint64_t addr, uint64_t t0,
					   uint64_t t1)
{
	uint64_t ips[] = { addr };
	struct sample s = { .pid = 3000002, .tid = 3000002, .comm = "same", .user_ips = ips,
			    .nr_user = 1, .kind = WEIGHT_SAMPLES, .weight = 1 };
	const struct addr_space *as = NULL;
	struct agg_entry *e;
	size_t id;

	pipeline__set_window(p, t0, t1);
	agg__fini(&p->agg);
	agg__init(&p->agg);
	ck_assert_int_eq(pipeline__add(p, &s), 0);
	agg__for_each(&p->agg, id, e)
		as = e->raw->as;
	return as;
}

static struct mapping file_map(uint64_t start, uint64_t ino, const char *path)
{
	return (struct mapping){ .start = start, .end = start + 0x1000, .ino = ino, .dev = 1,
				 .exec = true, .path = (char *)path };
}

/*
 * Counts summed in the kernel carry the window they were summed over: in
 * it, a process that exec'd has two images, told apart by the addresses,
 * never by the comm (both images here have the same one).
 */
START_TEST(counts_of_a_window_pick_the_image_by_address)
{
	struct pipeline_config pc = { .user_stacks = true, .kernel_stacks = true };
	struct mapping a = file_map(0x10000, 11, "/a"), b = file_map(0x50000, 12, "/b"),
		       c = file_map(0x50000, 13, "/c");
	struct addr_space *img_a, *img_b;
	struct pipeline p;

	ck_assert_int_eq(pipeline__init(&p, &pc), 0);
	ck_assert_int_eq(proctrack__exec(p.procs, 3000002, "same", 10), 0);
	ck_assert_int_eq(proctrack__mmap(p.procs, 3000002, &a), 0);
	img_a = proctrack__addr_space(p.procs, 3000002);
	ck_assert_int_eq(proctrack__exec(p.procs, 3000002, "same", 20), 0);
	ck_assert_int_eq(proctrack__mmap(p.procs, 3000002, &b), 0);
	img_b = proctrack__addr_space(p.procs, 3000002);

	ck_assert_ptr_eq(counted_in(&p, 0x50100, 5, 30), img_b);
	ck_assert_ptr_eq(counted_in(&p, 0x10100, 5, 30), img_a);
	ck_assert_ptr_eq(counted_in(&p, 0x10100, 12, 15), img_a);
	ck_assert_uint_eq(p.ambiguous_images, 0);
	/* A third image with b's layout but another file: 0x50100 is b's or c's. */
	ck_assert_int_eq(proctrack__exec(p.procs, 3000002, "same", 25), 0);
	ck_assert_int_eq(proctrack__mmap(p.procs, 3000002, &c), 0);
	ck_assert_ptr_null(counted_in(&p, 0x50100, 5, 30));
	ck_assert_uint_eq(p.ambiguous_images, 1);
	/* After c began, only c ran. */
	ck_assert_ptr_eq(counted_in(&p, 0x50100, 26, 30), proctrack__addr_space(p.procs, 3000002));
	pipeline__fini(&p);
}
END_TEST

/*
 * A kernel-summed off-CPU interval whose native user stack was lost (its
 * stack map's slot held another stack) but whose Python frames the walk
 * read: they keep the process's image, which names them (the kernel
 * matrix's 5.4 printed a sleeping thread's 3.2 s as "[python: unreadable]").
 */
START_TEST(interpreted_frames_without_a_user_stack_keep_their_image)
{
	struct pipeline_config pc = { .user_stacks = true, .kernel_stacks = true };
	struct interp_frame py[] = { { .code = 0x7000, .lasti = 4, .ident = 1 },
				     { .code = 0x8000, .lasti = 8, .ident = 2 } };
	struct sample s = { .pid = 3000003, .tid = 3000004, .comm = "python3", .nr_user = 0,
			    .user_err = -EEXIST, .interp_frames = py, .nr_interp = 2,
			    .kind = WEIGHT_OFFCPU_NS, .weight = 1000 };
	struct agg_entry *e;
	struct pipeline p;
	size_t id, n = 0;

	ck_assert_int_eq(pipeline__init(&p, &pc), 0);
	ck_assert_int_eq(proctrack__exec(p.procs, s.pid, "python3", 0), 0);
	ck_assert_int_eq(proctrack__mmap(p.procs, s.pid, &as.maps[0]), 0);
	pipeline__set_window(&p, 1, 2);
	ck_assert_int_eq(pipeline__add(&p, &s), 0);
	agg__for_each(&p.agg, id, e) {
		n++;
		ck_assert_uint_eq(e->raw->nr_user, 0);
		ck_assert_uint_eq(e->raw->nr_interp, 2);
		ck_assert_ptr_eq(e->raw->as, proctrack__addr_space(p.procs, s.pid));
	}
	ck_assert_uint_eq(n, 1);
	/* Without interpreted frames such a stack has no image: nothing to name by it. */
	s.nr_interp = 0;
	s.interp_frames = NULL;
	s.tid = 3000005;
	agg__fini(&p.agg);
	agg__init(&p.agg);
	ck_assert_int_eq(pipeline__add(&p, &s), 0);
	agg__for_each(&p.agg, id, e)
		ck_assert_ptr_null(e->raw->as);
	pipeline__fini(&p);
}
END_TEST

Suite *stack_suite(void)
{
	Suite *s = suite_create("stack");
	TCase *tc = tcase_create("rules");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, a_stack_ends_at_zero_or_a_context_marker);
	tcase_add_test(tc, a_return_address_in_no_executable_mapping_ends_the_stack);
	tcase_add_test(tc, a_frame_pointer_loop_is_one_frame_and_a_cut);
	tcase_add_test(tc, the_pipeline_applies_them);
	tcase_add_test(tc, a_stack_of_the_image_before_an_exec_resolves_there);
	tcase_add_test(tc, counts_of_a_window_pick_the_image_by_address);
	tcase_add_test(tc, interpreted_frames_without_a_user_stack_keep_their_image);
	suite_add_tcase(s, tc);
	return s;
}
