/* SPDX-License-Identifier: GPL-2.0 */
/* CPU masks as the kernel prints them ("0-3,8,10-11"). */
#ifndef COMPAT_CPUS_H
#define COMPAT_CPUS_H

/*
 * Parse a CPU list into a newly allocated array of CPU numbers.
 * Returns the number of CPUs, or -errno (-EINVAL on a malformed list).
 */
int cpus__parse_list(const char *list, int **cpus);

/* The online CPUs, from /sys/devices/system/cpu/online. Same return rules. */
int cpus__online(int **cpus);

#endif
