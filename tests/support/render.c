// SPDX-License-Identifier: GPL-2.0
#include "tests/support/render.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/model/resolve.h"
#include "core/output/writer.h"
#include "tests/support/tests.h"

void render_profile(const struct agg *agg, struct symbolizer *sym, const struct render_opts *o,
		    struct profile *p)
{
	struct resolve_spec spec = {
		.kind = PROFILE_ON_CPU,
		.user_frames = !o->kernel_only,
		.kernel_frames = !o->user_only,
		.period_ns = o->period_ns,
		/* As the run asks: source lines for pprof, inlined frames with --inline. */
		.source_lines = o->format == FORMAT_PPROF,
		.inline_frames = o->inline_frames,
		/* As the run does: frames shared across processes where no address is printed. */
		.frames_by_file = o->format != FORMAT_PPROF && !o->addresses,
	};
	struct resolve_meta meta = {
		.start_ns = o->start_ns,
		.duration_ns = o->duration_ns,
		.title = o->title,
		.comment = o->comment,
	};
	struct resolver *r = resolver__new(sym, &spec);

	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(resolver__build(r, agg, &meta, p), 0);
	resolver__free(r);
}

/* The report of o->format, as the run writes it, and what it printed (the warnings' count). */
static char *write_rendered(const struct agg *agg, struct symbolizer *sym,
			    const struct render_opts *o, size_t *len, struct writer_printed *printed)
{
	static int (*const writers[])(FILE *, const struct profile *, const struct writer_opts *) = {
		[FORMAT_BCC] = writer__bcc,
		[FORMAT_FOLDED] = writer__folded,
		[FORMAT_SVG] = writer__svg,
		[FORMAT_PPROF] = writer__pprof,
	};
	struct writer_opts wo = { .delimited = o->delimited,
				  .annotations = o->annotations,
				  .addresses = o->addresses,
				  .printed = printed };
	struct profile p;
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	ck_assert_ptr_nonnull(f);
	render_profile(agg, sym, o, &p);
	ck_assert_int_eq(writers[o->format](f, &p, &wo), 0);
	fclose(f);
	profile__fini(&p);
	if (len)
		*len = n;
	return buf;
}

char *render(const struct agg *agg, struct symbolizer *sym, const struct render_opts *o,
	     size_t *len)
{
	return write_rendered(agg, sym, o, len, NULL);
}

uint64_t render_missed(const struct agg *agg, struct symbolizer *sym, const struct render_opts *o)
{
	struct writer_printed printed = { .missed_stacks = UINT64_MAX };

	free(write_rendered(agg, sym, o, NULL, &printed));
	ck_assert_uint_ne(printed.missed_stacks, UINT64_MAX);
	return printed.missed_stacks;
}

char *render_warnings(const struct agg *agg, struct symbolizer *sym, const struct render_opts *o)
{
	struct profile p;
	bool collision, map_full;
	uint64_t missed = render_missed(agg, sym, o);
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	render_profile(agg, sym, o, &p);
	profile__missed_stacks(&p, &collision, &map_full);
	if (missed)
		fprintf(f, "WARNING: %" PRIu64 " stack traces could not be displayed.%s\n", missed,
			collision ? " Consider increasing --stack-storage-size." : "");
	fclose(f);
	profile__fini(&p);
	return buf;
}
