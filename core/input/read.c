// SPDX-License-Identifier: GPL-2.0
#include "core/input/read.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/lib/userfile.h"

int profile__read_file(const char *path, struct profile *out, struct errmsg *err)
{
	uint64_t size;
	size_t len;
	bool truncated;
	char *buf;
	int fd, ret;

	profile__init(out);
	fd = userfile__open(path, false, PROFILE_FILE_MAX, &size);
	if (fd < 0) {
		errmsg__set(err, "%s: %s", path, fd == -EINVAL ? "not a regular file"
						 : fd == -EFBIG ? "too large for a profile"
								: strerror(-fd));
		return fd;
	}
	ret = userfile__read_all(fd, PROFILE_FILE_MAX, &buf, &len, &truncated);
	close(fd);
	if (ret) {
		errmsg__set(err, "%s: %s", path, strerror(-ret));
		return ret;
	}
	/* gzip's magic: pprof; anything else is read as folded stacks. */
	if (len >= 2 && (unsigned char)buf[0] == 0x1f && (unsigned char)buf[1] == 0x8b)
		ret = profile__read_pprof((const unsigned char *)buf, len, out, err);
	else
		ret = profile__read_folded(buf, len, out, err);
	free(buf);
	if (ret) {
		char what[sizeof(err->text)];

		snprintf(what, sizeof(what), "%s", err->text);
		errmsg__set(err, "%s: %s", path, what);
	}
	return ret;
}
