// SPDX-License-Identifier: GPL-2.0
/* Records beyond the reader's budget, in an unlinked file (spill.h). */
#include "backend-perfring/spill.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/lib/log.h"

/* Past this, records stay in the rings and the kernel counts what it loses. */
#define SPILL_MAX (1ULL << 30)

void spill__init(struct spill *sp)
{
	*sp = (struct spill){ .fd = -1 };
}

void spill__fini(struct spill *sp)
{
	if (sp->fd >= 0)
		close(sp->fd);
	sp->fd = -1;
}

bool spill__pending(const struct spill *sp)
{
	return sp->write_off > sp->read_off;
}

/* An unlinked file in dir: O_TMPFILE (3.11), else a name removed at once. */
static int open_unlinked(const char *dir)
{
	char path[4096];
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd >= 0 ? fd : -errno;
	if (snprintf(path, sizeof(path), "%s/profile-spill.XXXXXX", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	unlink(path);
	return fd;
}

static int spill_open(struct spill *sp)
{
	const char *dir = getenv("TMPDIR");
	int fd = open_unlinked(dir && *dir ? dir : "/tmp");

	if (fd < 0) {
		pr_warn("warning: cannot keep the records the main thread is behind on in a "
			"file in %s: %s; the rings may fill\n", dir && *dir ? dir : "/tmp",
			strerror(-fd));
		return fd;
	}
	sp->fd = fd;
	return 0;
}

int spill__write(struct spill *sp, const void *rec, size_t len)
{
	const char *p = rec;
	uint64_t off = sp->write_off;

	if (sp->err)
		return sp->err;
	if (sp->write_off - sp->read_off + len > SPILL_MAX)
		return -ENOSPC;
	if (sp->fd < 0) {
		sp->err = spill_open(sp);
		if (sp->err)
			return sp->err;
	}
	while (len) {
		ssize_t n = pwrite(sp->fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* The part written is past write_off: overwritten by the next. */
			sp->err = n < 0 ? -errno : -EIO;
			pr_warn("warning: writing records to the spill file: %s; the rings may "
				"fill\n", strerror(-sp->err));
			return sp->err;
		}
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	sp->bytes += off - sp->write_off;
	sp->write_off = off;
	if (sp->write_off - sp->read_off > sp->peak)
		sp->peak = sp->write_off - sp->read_off;
	return 0;
}

long spill__read(struct spill *sp, uint64_t from, uint64_t to, void *out, size_t max)
{
	size_t want = to - from < max ? (size_t)(to - from) : max, got = 0, whole = 0;

	while (got < want) {
		ssize_t n = pread(sp->fd, (char *)out + got, want - got, (off_t)(from + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		got += (size_t)n;
	}
	/* Whole records only: the file holds the reader's, each whole and 8-byte sized. */
	while (whole + sizeof(struct perf_event_header) <= got) {
		const struct perf_event_header *h = (const void *)((char *)out + whole);

		if (h->size < sizeof(*h) || h->size % 8)
			return -EBADMSG;
		if (whole + h->size > got)
			break;
		whole += h->size;
	}
	return (long)whole;
}

void spill__consumed(struct spill *sp, uint64_t off)
{
	sp->read_off = off;
	if (sp->read_off < sp->write_off)
		return;
	/* All read: start again at 0, and give the disk back. */
	sp->read_off = sp->write_off = 0;
	if (ftruncate(sp->fd, 0))
		pr_debug("spill file: ftruncate: %s\n", strerror(errno));
}
