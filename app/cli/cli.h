/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The programs: the name the binary is run by selects the command line
 * (profile, or offcputime), which fills the run's options and runs it.
 */
#ifndef APP_CLI_CLI_H
#define APP_CLI_CLI_H

#include <stdbool.h>

/* What tests may change that no command-line option reaches (tests/seams/). */
struct cli_seams {
	bool no_task_regs;	/* the bpf stack-copy program of kernels before 5.15 */
};

/* main(): returns the exit status. seams is NULL in the product. */
int cli__main(int argc, char **argv, const struct cli_seams *seams);

#endif
