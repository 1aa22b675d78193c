/* SPDX-License-Identifier: GPL-2.0 */
/* Tests only: a minimal filler of the native unwinder's maps (native_filler.c). */
#ifndef TESTS_SEAMS_NATIVE_FILLER_H
#define TESTS_SEAMS_NATIVE_FILLER_H

#include "backend-bpf/native.h"

/* PID's executable file mappings and their tables into the maps, PID into native_procs. */
void native_filler__add(const struct native_maps_fds *fds, int pid);

#endif
