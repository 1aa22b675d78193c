// SPDX-License-Identifier: GPL-2.0
#include "core/perfmap.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct perfmap_sym {
	uint64_t start;
	uint64_t size;
	size_t line;		/* later lines describe newer code at the same place */
	char *name;
};

struct perfmap {
	struct perfmap_sym *syms;	/* sorted by start */
	size_t nr;
};

static int cmp_sym(const void *a, const void *b)
{
	const struct perfmap_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static struct perfmap *parse(FILE *f)
{
	struct perfmap *pm = calloc(1, sizeof(*pm));
	size_t cap = 0, len = 0;
	char *line = NULL;

	if (!pm)
		return NULL;
	while (getline(&line, &len, f) > 0) {
		struct perfmap_sym s;
		char *p = line, *end;

		s.start = strtoull(p, &end, 16);	/* accepts the 0x form too */
		if (end == p || *end != ' ')
			continue;
		p = end + 1;
		s.size = strtoull(p, &end, 16);
		if (end == p || *end != ' ' || !s.size)
			continue;
		p = end + 1;
		p[strcspn(p, "\n")] = '\0';
		if (pm->nr == cap) {
			size_t ncap = cap ? cap * 2 : 256;
			struct perfmap_sym *tmp = realloc(pm->syms, ncap * sizeof(*tmp));

			if (!tmp)
				break;
			pm->syms = tmp;
			cap = ncap;
		}
		s.name = strdup(p);
		if (!s.name)
			break;
		s.line = pm->nr;
		pm->syms[pm->nr++] = s;
	}
	free(line);
	/* Sorted by start, then line: the lookup takes the last, newest entry at a start. */
	qsort(pm->syms, pm->nr, sizeof(*pm->syms), cmp_sym);
	return pm;
}

struct perfmap *perfmap__load_file(const char *path)
{
	FILE *f = fopen(path, "re");
	struct perfmap *pm;

	if (!f)
		return NULL;
	pm = parse(f);
	fclose(f);
	return pm;
}

/* The pid the process sees itself as (the last NStgid), for its map file's name. */
static pid_t ns_pid(pid_t pid)
{
	char path[64], line[256];
	pid_t nspid = pid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return pid;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NStgid:", 7))
			continue;
		for (char *tok = strtok(line + 7, " \t\n"); tok; tok = strtok(NULL, " \t\n"))
			nspid = (pid_t)atoi(tok);
		break;
	}
	fclose(f);
	return nspid;
}

struct perfmap *perfmap__load(pid_t pid, const char **warning, char *path, size_t path_len)
{
	struct stat proc_st, st;
	char proc_path[64];
	struct perfmap *pm;
	bool alive;
	FILE *f;
	int fd;

	*warning = NULL;
	snprintf(proc_path, sizeof(proc_path), "/proc/%d", (int)pid);
	alive = stat(proc_path, &proc_st) == 0;
	/* Under its root, by its own pid: a process in a container writes its map there. */
	if (alive)
		snprintf(path, path_len, "/proc/%d/root/tmp/perf-%d.map", (int)pid, (int)ns_pid(pid));
	else
		snprintf(path, path_len, "/tmp/perf-%d.map", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return NULL;
	/* As perf does: a map not written by the process's user (or root) is not trusted. */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (st.st_uid != 0 && st.st_uid != (alive ? proc_st.st_uid : geteuid()))) {
		*warning = "not owned by the process's user or root";
		close(fd);
		return NULL;
	}
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return NULL;
	}
	pm = parse(f);
	fclose(f);
	return pm;
}

void perfmap__free(struct perfmap *pm)
{
	if (!pm)
		return;
	for (size_t i = 0; i < pm->nr; i++)
		free(pm->syms[i].name);
	free(pm->syms);
	free(pm);
}

const char *perfmap__lookup(const struct perfmap *pm, uint64_t addr, uint64_t *offset)
{
	size_t lo = 0, hi = pm->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= pm->syms[lo - 1].start + pm->syms[lo - 1].size)
		return NULL;
	*offset = addr - pm->syms[lo - 1].start;
	return pm->syms[lo - 1].name;
}
