// SPDX-License-Identifier: GPL-2.0
#include "app/cli/cli.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "app/cli/options.h"
#include "app/run/run.h"
#include "backend-bpf/bpfbackend.h"
#include "backend-perfring/perfring.h"
#include "core/lib/log.h"

/* In order of preference for --backend auto. */
static const struct backend_ops *const backends[] = {
	&bpf_backend_ops,
	&perfring_backend_ops,
	NULL,
};

/*
 * Started with standard input, output or error closed, the next file
 * opened would take its number and receive the report or the messages:
 * hold each missing one open on /dev/null.
 */
static void reopen_standard_fds(void)
{
	for (int fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", fd ? O_WRONLY : O_RDONLY) < 0)
			_exit(1);
}

/* The name the binary was run by, without its directory. */
static const char *program_name(const char *argv0)
{
	const char *slash = argv0 ? strrchr(argv0, '/') : NULL;

	return slash ? slash + 1 : argv0 ? argv0 : "profile";
}

int cli__main(int argc, char **argv, const struct cli_seams *seams)
{
	bool offcputime = !strcmp(program_name(argv[0]), "offcputime");
	struct run_opts opts;
	enum options_result res;
	char err[512];
	int code;

	reopen_standard_fds();
	log_set_program(offcputime ? "offcputime" : "profile");
	res = offcputime ? offcputime__parse(argc, argv, &opts, err, sizeof(err))
			 : options__parse(argc, argv, &opts, err, sizeof(err));
	switch (res) {
	case OPTIONS_HELP:
		code = 0;
		break;
	case OPTIONS_USAGE_ERROR:
		/* bcc's own checks say "ERROR: ..." themselves. */
		if (!strncmp(err, "ERROR: ", 7))
			fprintf(stderr, "%s\n", err);
		else
			fprintf(stderr, "%s: error: %s\n", log_program(), err);
		code = EXIT_USAGE;
		break;
	default:
		opts.test_no_task_regs = seams && seams->no_task_regs;
		code = opts.diff_base ? run__diff(&opts) : run__main(&opts, backends);
		break;
	}
	options__free(&opts);
	return code;
}
