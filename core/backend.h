/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interface every backend implements. A backend turns kernel data into
 * struct sample and hands it to core__add_sample(); it prints nothing of the
 * report itself.
 */
#ifndef CORE_BACKEND_H
#define CORE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/core.h"

struct backend;

#define PROBE_USER_ONLY 1
#define PROBE_PARTIAL 2

struct backend_stats {
	uint64_t samples;	/* samples taken (before filtering) */
	uint64_t lost;		/* samples the kernel could not deliver */
	const char *lost_reason;	/* why, for the warning */
	bool hash_full;		/* in-kernel count table ran out of room */
};

struct backend_ops {
	const char *name;
	/*
	 * 0 if this backend can run here with these options; PROBE_USER_ONLY
	 * if it can, but without kernel samples (why says what would enable
	 * them); otherwise -errno and a one-line reason in why.
	 */
	int (*probe)(const struct profile_opts *opts, char *why, size_t why_len);
	/* Set up events; target is the launched command's pid, or -1. */
	int (*open)(struct backend **b, struct profile_core *core, pid_t target);
	int (*start)(struct backend *b);
	/* Block until data may be ready, wake_fd is readable, or timeout. */
	int (*wait)(struct backend *b, int wake_fd, int timeout_ms);
	/* Move what the kernel has into the core. */
	int (*drain)(struct backend *b);
	int (*stop)(struct backend *b);
	void (*stats)(const struct backend *b, struct backend_stats *st);
	void (*close)(struct backend *b);
};

#endif
