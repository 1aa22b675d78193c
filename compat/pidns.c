// SPDX-License-Identifier: GPL-2.0
#include "compat/pidns.h"

#include <sys/stat.h>

/* The initial pid namespace's inode number, fixed since Linux 3.8 (PROC_PID_INIT_INO). */
#define PID_INIT_NS_INO 0xEFFFFFFCu

bool pidns__in_child(uint64_t *dev, uint64_t *ino)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st))
		return false;	/* before 3.8 there is no way to tell: assume the initial one */
	*dev = st.st_dev;
	*ino = st.st_ino;
	return st.st_ino != PID_INIT_NS_INO;
}
