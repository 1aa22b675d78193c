// SPDX-License-Identifier: GPL-2.0
/* A binary's verdict for --unwind auto, and -v's words for it (verdict.h). */
#include "unwind/tables/verdict.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int unwind_verdict__of_image(const struct unwind_image *img, struct unwind_verdict *out)
{
	struct unwind_table *t = NULL;

	*out = (struct unwind_verdict){ 0 };
	out->err = unwind_table__compile(img, &t);
	if (out->err)
		return out->err;
	unwind_table__fp_share(t, &out->share);
	out->rows = t->nr_rows;
	out->bytes = t->stats.bytes;
	unwind_table__free(t);
	return 0;
}

int unwind_verdict__of_fd(int fd, struct unwind_verdict *out)
{
	struct unwind_image img;
	int err = unwind_image__open_fd(&img, fd);

	if (err) {
		/* Not ELF64 for this machine: no tables we could use. */
		*out = (struct unwind_verdict){ .err = err == -ENOEXEC ? -ENOENT : err };
		return out->err;
	}
	err = unwind_verdict__of_image(&img, out);
	unwind_image__close(&img);
	return err;
}

bool unwind_verdict__needs_tables(const struct unwind_verdict *v)
{
	if (v->err == -ENOENT || v->err == -EBADMSG)
		return false;
	return v->err || !v->share.keeps;
}

void unwind_verdict__share_words(const struct unwind_fp_share *share, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRIu32 " of %" PRIu32 " functions set up rbp", share->rbp_frames,
		 share->functions);
}

void unwind_verdict__describe(const struct unwind_verdict *v, enum unwind_way way, char *buf,
			      size_t len)
{
	char share[96];

	if (v->err == -ENOENT || v->err == -EBADMSG) {
		snprintf(buf, len, "frame pointers (%s)",
			 v->err == -ENOENT ? "no .eh_frame or .debug_frame"
					   : "its unwind tables are unusable");
		return;
	}
	if (v->err)
		snprintf(share, sizeof(share), "not read: %s", strerror(-v->err));
	else
		unwind_verdict__share_words(&v->share, share, sizeof(share));
	switch (way) {
	case UNWIND_WAY_FP:
		snprintf(buf, len, "frame pointers (%s)", share);
		break;
	case UNWIND_WAY_TABLES:
		snprintf(buf, len, ".eh_frame tables (%" PRIu32 " rows, %" PRIu64 " bytes; %s)",
			 v->rows, v->bytes, share);
		break;
	case UNWIND_WAY_COPIES:
		snprintf(buf, len, "copies (.eh_frame over each sample's stack copy; %s)", share);
		break;
	}
}
