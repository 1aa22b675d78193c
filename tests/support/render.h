/* SPDX-License-Identifier: GPL-2.0 */
/* Reports of an aggregate, made as the run makes them: resolved once, then a writer. */
#ifndef TESTS_SUPPORT_RENDER_H
#define TESTS_SUPPORT_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "app/run/run.h"
#include "core/agg/agg.h"
#include "core/model/profile.h"
#include "core/sym/symbolize.h"

struct render_opts {
	enum output_format format;
	bool delimited, annotations, addresses;	/* -d, -a, -A */
	bool user_only, kernel_only;		/* -U, -K */
	bool inline_frames;			/* --inline */
	uint64_t period_ns;
	uint64_t start_ns, duration_ns;
	const char *title, *comment;
};

/* Resolve agg into p (free with profile__fini). */
void render_profile(const struct agg *agg, struct symbolizer *sym, const struct render_opts *o,
		    struct profile *p);
/* The report as a writer prints it (NUL-terminated; *len bytes for pprof); free it. */
char *render(const struct agg *agg, struct symbolizer *sym, const struct render_opts *o,
	     size_t *len);
/* The missed-stack markers the writer of o->format printed: the warning's N. */
uint64_t render_missed(const struct agg *agg, struct symbolizer *sym, const struct render_opts *o);
/* bcc's "WARNING: N stack traces could not be displayed." line(s), or "". Free it. */
char *render_warnings(const struct agg *agg, struct symbolizer *sym, const struct render_opts *o);

#endif
