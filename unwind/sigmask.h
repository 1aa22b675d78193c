/* SPDX-License-Identifier: GPL-2.0 */
/*
 * While on, sigprocmask() on this thread does nothing: libunwind's masking
 * of signals around its locks costs system calls and protects nothing here
 * (sigmask.c says why). Only the unwinder turns it on, around libunwind.
 */
#ifndef UNWIND_SIGMASK_H
#define UNWIND_SIGMASK_H

#include <stdbool.h>

void unwind_sigmask__quiet(bool on);

#endif
