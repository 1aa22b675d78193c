// SPDX-License-Identifier: GPL-2.0
/* profile: sample stack traces at a timed interval, report how often each was seen. */
#include <stddef.h>

#include "core/cli/cli.h"

int main(int argc, char **argv)
{
	return cli__main(argc, argv, NULL);
}
