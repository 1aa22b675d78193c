// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the pprof reader of profile --diff (core/input/pprof.c):
 * gzip'ed profile.proto from anyone, with ids, string indexes and inline
 * lines that may point anywhere. Each input is used twice: as given (a
 * gzip stream) and gzip'ed here, so the fuzzer also reaches the decoding
 * of the message itself. What is read is written back as pprof.
 *
 * Seeds: pprof files this tool wrote (profile --format pprof).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "core/input/read.h"
#include "core/lib/log.h"
#include "core/output/writer.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	log_set_verbosity(-1);
	return 0;
}

static void read_and_write(const unsigned char *gz, size_t len)
{
	struct writer_opts wo = { 0 };
	struct errmsg em = { "" };
	struct profile p;
	FILE *null;

	if (!profile__read_pprof(gz, len, &p, &em)) {
		null = fopen("/dev/null", "w");
		if (null) {
			writer__pprof(null, &p, &wo);
			fclose(null);
		}
	}
	profile__fini(&p);
}

/* data as a gzip stream, in *out (freed by the caller); 0 or -1. */
static int gzip(const uint8_t *data, size_t size, unsigned char **out, size_t *out_len)
{
	z_stream zs = { 0 };
	size_t cap = deflateBound(&zs, size) + 64;

	*out = malloc(cap);
	if (!*out || deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(*out);
		return -1;
	}
	zs.next_in = (unsigned char *)data;
	zs.avail_in = (uInt)size;
	zs.next_out = *out;
	zs.avail_out = (uInt)cap;
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&zs);
		free(*out);
		return -1;
	}
	*out_len = zs.total_out;
	deflateEnd(&zs);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *gz;
	size_t len;

	read_and_write(data, size);
	if (size < (1u << 20) && !gzip(data, size, &gz, &len)) {
		read_and_write(gz, len);
		free(gz);
	}
	return 0;
}
