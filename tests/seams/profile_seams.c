// SPDX-License-Identifier: GPL-2.0
/*
 * The profile binary with the seams tests need and no option reaches:
 * PROFILE_TEST_NO_TASK_REGS=1 loads the bpf stack-copy program of kernels
 * without bpf_task_pt_regs (before 5.15) on this one;
 * PROFILE_TEST_DWARF_PIECES_ON_STACK=1 with it, Linux 4.9's (pieces sent
 * from the BPF stack); PROFILE_TEST_SLOW_BPF_LOAD=1 makes each BPF load
 * spend seconds in the verifier first.
 */
#include <stdlib.h>

#include "backend-bpf/dwarf.h"
#include "backend-bpf/interruptible.h"
#include "core/cli/cli.h"

int main(int argc, char **argv)
{
	struct cli_seams seams = { .no_task_regs = getenv("PROFILE_TEST_NO_TASK_REGS") != NULL };

	bpf_dwarf__test_pieces_on_stack = getenv("PROFILE_TEST_DWARF_PIECES_ON_STACK") != NULL;
	bpf_interruptible__test_slow = getenv("PROFILE_TEST_SLOW_BPF_LOAD") != NULL;

	return cli__main(argc, argv, &seams);
}
