// SPDX-License-Identifier: GPL-2.0
#include "core/sym/perfmap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/lib/userfile.h"

/*
 * What is read of one map: a long-running JVM writes a few hundred MB at
 * most; a longer line is no name any JIT writes.
 */
#define PERFMAP_MAX_SIZE (256UL << 20)
#define PERFMAP_MAX_LINE 16384

struct perfmap_sym {
	uint64_t start;
	uint64_t size;
	size_t line;		/* later lines describe newer code at the same place */
	const char *name;	/* in text */
};

struct perfmap {
	struct perfmap_sym *syms;	/* sorted by start */
	size_t nr;
	char *text;		/* the file, lines NUL-terminated in place */
};

static int cmp_sym(const void *a, const void *b)
{
	const struct perfmap_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A hex number with or without 0x, then one space; no sign, no blanks, no overflow. */
static const char *parse_hex(const char *p, uint64_t *val)
{
	const char *start;
	int d;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	start = p;
	*val = 0;
	while ((d = hex_digit(*p)) >= 0) {
		if (*val >> 60)
			return NULL;
		*val = *val << 4 | d;
		p++;
	}
	return p > start && *p == ' ' ? p + 1 : NULL;
}

/* "START SIZE name": returns false for anything else. */
static bool parse_line(char *line, struct perfmap_sym *s)
{
	const char *p = parse_hex(line, &s->start);

	if (!p || !(p = parse_hex(p, &s->size)))
		return false;
	if (!s->size || s->start + s->size < s->start || !*p)
		return false;
	s->name = p;
	return true;
}

static struct perfmap *parse(char *text, size_t len)
{
	struct perfmap *pm = calloc(1, sizeof(*pm));
	char *p = text, *end = text + len;
	size_t cap = 0, nr_lines = 0;

	if (!pm) {
		free(text);
		return NULL;
	}
	pm->text = text;
	while (p < end) {
		char *nl = memchr(p, '\n', end - p);
		struct perfmap_sym s;

		if (!nl)
			nl = end;
		*nl = '\0';
		if (nl - p <= PERFMAP_MAX_LINE && parse_line(p, &s)) {
			if (pm->nr == cap) {
				size_t ncap = cap ? cap * 2 : 256;
				struct perfmap_sym *tmp = realloc(pm->syms, ncap * sizeof(*tmp));

				if (!tmp)
					break;
				pm->syms = tmp;
				cap = ncap;
			}
			s.line = nr_lines;
			pm->syms[pm->nr++] = s;
		}
		nr_lines++;
		p = nl + 1;
	}
	/* Sorted by start, then line: the lookup takes the last, newest entry at a start. */
	if (pm->nr)
		qsort(pm->syms, pm->nr, sizeof(*pm->syms), cmp_sym);
	return pm;
}

/* Reads at most PERFMAP_MAX_SIZE: a map still being written ends in a cut line, dropped. */
static struct perfmap *read_map(int fd)
{
	bool truncated;
	size_t len;
	char *text;

	if (userfile__read_all(fd, PERFMAP_MAX_SIZE, &text, &len, &truncated))
		return NULL;
	if (truncated) {
		char *nl = memrchr(text, '\n', len);

		len = nl ? (size_t)(nl - text) : 0;
	}
	return parse(text, len);
}

struct perfmap *perfmap__load_file(const char *path)
{
	struct perfmap *pm;
	uint64_t size;
	int fd = userfile__open(path, false, UINT64_MAX, &size);

	if (fd < 0)
		return NULL;
	pm = read_map(fd);
	close(fd);
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
	char proc_path[64], root[64], name[64];
	struct perfmap *pm;
	uint64_t size;
	bool alive;
	int fd;

	*warning = NULL;
	snprintf(proc_path, sizeof(proc_path), "/proc/%d", (int)pid);
	alive = stat(proc_path, &proc_st) == 0;
	/* Under its root, by its own pid: a process in a container writes its map there. */
	if (alive) {
		snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
		snprintf(name, sizeof(name), "tmp/perf-%d.map", (int)ns_pid(pid));
	} else {
		snprintf(root, sizeof(root), "/");
		snprintf(name, sizeof(name), "tmp/perf-%d.map", (int)pid);
	}
	snprintf(path, path_len, "%s/%s", alive ? root : "", name);
	/*
	 * Anyone can create files in /tmp: no symlink followed there, and
	 * nothing but a regular file (a FIFO would block the report).
	 */
	fd = userfile__open_in(root, name, UINT64_MAX, &size);
	if (fd == -EINVAL || fd == -ELOOP) {
		*warning = fd == -ELOOP ? "a symlink in a directory others can write to" :
					  "not a regular file";
		return NULL;
	}
	if (fd < 0)
		return NULL;
	/* As perf does: a map not written by the process's user (or root) is not trusted. */
	if (fstat(fd, &st) ||
	    (st.st_uid != 0 && st.st_uid != (alive ? proc_st.st_uid : geteuid()))) {
		*warning = "not owned by the process's user or root";
		close(fd);
		return NULL;
	}
	pm = read_map(fd);
	close(fd);
	return pm;
}

void perfmap__free(struct perfmap *pm)
{
	if (!pm)
		return;
	free(pm->syms);
	free(pm->text);
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
	if (lo == 0 || addr - pm->syms[lo - 1].start >= pm->syms[lo - 1].size)
		return NULL;
	*offset = addr - pm->syms[lo - 1].start;
	return pm->syms[lo - 1].name;
}
