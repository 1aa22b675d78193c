// SPDX-License-Identifier: GPL-2.0
/*
 * The OS side of Python threads: where glibc keeps a thread's tid in its
 * struct pthread (what a pthread_t of 3.10 and before leads to), and the
 * tids of a process as its own pid namespace and ours see them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/lib/userfile.h"
#include "core/sym/debugfile.h"
#include "interp/python/elfscan.h"
#include "interp/python/pyint.h"

/* A struct pthread is about 2 KiB (glibc 2.36: 2368 bytes): the tid lies within. */
#define PTHREAD_MAX_SIZE 16384

int py_glibc_tid_offset(int fd, uint32_t *offset)
{
	struct py_sym_want w = { .name = "_thread_db_pthread_tid" };
	struct elf_file h;
	uint32_t desc[3];
	int own, err = -ENOENT;

	if (!elf_file__ready())
		return -ENOENT;
	own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (own < 0 || elf_file__open_fd(own, &h))
		return -ENOENT;
	/* {size in bits, count, offset}, as libthread_db reads it (nptl/db_info.c). */
	if (py_elf__symbols(h.elf, &w, 1) && w.size >= sizeof(desc) &&
	    !py_elf__read_vaddr(h.elf, w.value, desc, sizeof(desc)) && desc[0] == 32 &&
	    desc[1] == 1 && desc[2] + 4 <= PTHREAD_MAX_SIZE) {
		*offset = desc[2];
		err = 0;
	}
	elf_file__close(&h);
	return err;
}

/* The first and last numbers of an "NSpid:" line: ours, then the process's own. */
static bool parse_nspid(const char *status, struct py_nstid *t)
{
	const char *line = strstr(status, "\nNSpid:");
	unsigned long first, last = 0;
	char *end;
	int n = 0;

	if (!line)
		return false;
	line += strlen("\nNSpid:");
	for (;;) {
		unsigned long v;

		while (*line == ' ' || *line == '\t')
			line++;
		if (*line < '0' || *line > '9')
			break;
		v = strtoul(line, &end, 10);
		if (end == line || v > UINT32_MAX)
			return false;
		if (!n++)
			first = v;
		last = v;
		line = end;
	}
	if (!n)
		return false;
	t->host_tid = (uint32_t)first;
	t->ns_tid = (uint32_t)last;
	return true;
}

int py_nstids(pid_t pid, struct py_nstid *out, size_t max)
{
	char dir_path[64];
	struct dirent *de;
	size_t nr = 0;
	DIR *dir;
	int dfd;

	snprintf(dir_path, sizeof(dir_path), "/proc/%d/task", (int)pid);
	dir = opendir(dir_path);
	if (!dir)
		return -errno;
	dfd = dirfd(dir);
	while (nr < max && (de = readdir(dir))) {
		char name[300], *text = NULL;
		bool truncated;
		size_t len;
		int fd;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(name, sizeof(name), "%s/status", de->d_name);
		fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;	/* the thread ended */
		/* NSpid is never the first line (Name is): it follows a newline. */
		if (!userfile__read_all(fd, 8192, &text, &len, &truncated) && text &&
		    parse_nspid(text, &out[nr]))
			nr++;
		free(text);
		close(fd);
	}
	closedir(dir);
	return (int)nr;
}
