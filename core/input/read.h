/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Profiles read back from files: folded stacks ("comm;root;...;leaf count"
 * lines, as this tool, FlameGraph's stackcollapse scripts and bcc write
 * them) and pprof files (gzip'ed profile.proto, as this tool writes them).
 * Files are anyone's: every length is bounded, every index checked.
 */
#ifndef CORE_INPUT_READ_H
#define CORE_INPUT_READ_H

#include <stddef.h>

#include "core/lib/log.h"
#include "core/model/profile.h"

/* Largest profile file read: more is not a profile of this tool. */
#define PROFILE_FILE_MAX (512u << 20)

/* A profile of one column ("samples") from path, folded or pprof by its first bytes. */
int profile__read_file(const char *path, struct profile *out, struct errmsg *err);

/* The same from bytes in memory (len of them, no NUL needed). */
int profile__read_folded(const char *text, size_t len, struct profile *out, struct errmsg *err);
int profile__read_pprof(const unsigned char *gz, size_t len, struct profile *out,
			struct errmsg *err);

#endif
