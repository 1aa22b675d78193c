/* SPDX-License-Identifier: GPL-2.0 */
/* The symfixture workload, running, with the addresses it printed. */
#ifndef TESTS_SUPPORT_FIXTURE_H
#define TESTS_SUPPORT_FIXTURE_H

#include <stdint.h>
#include <sys/types.h>

#include "core/proc/proctrack.h"

struct sym_fixture {
	pid_t pid;
	int stdin_fd;
	uint64_t alpha, beta, gamma, main;	/* run-time addresses */
	struct addr_space as;			/* its maps, read while it runs */
};

struct agg;

/* Count one stack of process pid, resolving in as. */
void fixture_count(struct agg *agg, const struct addr_space *as, pid_t pid, const char *comm,
		   const uint64_t *kernel, unsigned int nk, const uint64_t *user, unsigned int nu,
		   int kernel_err, uint64_t weight);

/* Start it, read its addresses and maps, and stop it again. */
void sym_fixture_load(struct sym_fixture *f, const char *path);
void sym_fixture_free(struct sym_fixture *f);

#endif
