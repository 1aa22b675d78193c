// SPDX-License-Identifier: GPL-2.0
/* profile: sample stack traces at a timed interval, report how often each was seen. */
#include <stdio.h>

#include "backend-bpf/bpfbackend.h"
#include "backend-perfring/perfring.h"
#include "core/options.h"
#include "core/profile.h"

/* In order of preference for --backend auto. */
static const struct backend_ops *const backends[] = {
	&bpf_backend_ops,
	&perfring_backend_ops,
	NULL,
};

int main(int argc, char **argv)
{
	struct profile_opts opts;
	char err[512];
	int code;

	switch (options__parse(argc, argv, &opts, err, sizeof(err))) {
	case OPTIONS_HELP:
		code = 0;
		break;
	case OPTIONS_USAGE_ERROR:
		fprintf(stderr, "profile: error: %s\n", err);
		code = EXIT_USAGE;
		break;
	default:
		code = profile__run(&opts, backends);
		break;
	}
	options__free(&opts);
	return code;
}
