// SPDX-License-Identifier: GPL-2.0
/*
 * The profile binary with the seams tests need and no option reaches:
 * PROFILE_TEST_NO_TASK_REGS=1 loads the bpf stack-copy program of kernels
 * without bpf_task_pt_regs (before 5.15) on this one.
 */
#include <stdlib.h>

#include "core/cli/cli.h"

int main(int argc, char **argv)
{
	struct cli_seams seams = { .no_task_regs = getenv("PROFILE_TEST_NO_TASK_REGS") != NULL };

	return cli__main(argc, argv, &seams);
}
