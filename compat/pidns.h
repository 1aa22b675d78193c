/* SPDX-License-Identifier: GPL-2.0 */
/* Which pid namespace the profiler runs in. */
#ifndef COMPAT_PIDNS_H
#define COMPAT_PIDNS_H

#include <stdbool.h>
#include <stdint.h>

/*
 * True when this process runs in a pid namespace other than the initial one
 * (a container): pids it sees, and is given, are that namespace's. dev/ino
 * identify it (stat of /proc/self/ns/pid, as bpf_get_ns_current_pid_tgid
 * wants them).
 */
bool pidns__in_child(uint64_t *dev, uint64_t *ino);

#endif
