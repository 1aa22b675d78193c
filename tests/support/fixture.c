// SPDX-License-Identifier: GPL-2.0
#include "tests/support/fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/agg/agg.h"
#include "tests/support/tests.h"

void sym_fixture_load(struct sym_fixture *f, const char *path)
{
	int in[2], out[2];
	char line[256], maps[64];
	FILE *fp;

	memset(f, 0, sizeof(*f));
	ck_assert(pipe(in) == 0 && pipe(out) == 0);
	f->pid = fork();
	ck_assert_int_ge(f->pid, 0);
	if (f->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(path, path, (char *)NULL);
		_exit(126);
	}
	close(in[0]);
	close(out[1]);
	fp = fdopen(out[0], "r");
	while (fgets(line, sizeof(line), fp)) {
		char name[64];
		void *addr;

		if (sscanf(line, "%63s %p", name, &addr) != 2)
			continue;
		if (!strcmp(name, "fixture_alpha"))
			f->alpha = (uintptr_t)addr;
		else if (!strcmp(name, "fixture_beta"))
			f->beta = (uintptr_t)addr;
		else if (!strcmp(name, "fixture_gamma_static"))
			f->gamma = (uintptr_t)addr;
		else if (!strcmp(name, "main")) {
			f->main = (uintptr_t)addr;
			break;
		}
	}
	ck_assert_msg(f->alpha && f->beta && f->gamma && f->main, "%s printed no addresses", path);
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)f->pid);
	ck_assert_int_eq(addr_space__load_maps_file(&f->as, maps), 0);
	close(in[1]);
	fclose(fp);
	waitpid(f->pid, NULL, 0);
}

void fixture_count(struct agg *agg, const struct addr_space *as, pid_t pid, const char *comm,
		   const uint64_t *kernel, unsigned int nk, const uint64_t *user, unsigned int nu,
		   int kernel_err, uint64_t weight)
{
	struct sample s = { .pid = pid, .tid = pid, .kernel_ips = kernel, .nr_kernel = nk,
			    .user_ips = user, .nr_user = nu, .kernel_err = kernel_err,
			    .weight = weight };

	snprintf(s.comm, sizeof(s.comm), "%s", comm);
	ck_assert_int_eq(agg__add(agg, &s, as, 0), 0);
}

void sym_fixture_free(struct sym_fixture *f)
{
	for (size_t i = 0; i < f->as.nr_maps; i++)
		free(f->as.maps[i].path);
	free(f->as.maps);
	memset(f, 0, sizeof(*f));
}
