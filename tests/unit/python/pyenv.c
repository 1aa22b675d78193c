// SPDX-License-Identifier: GPL-2.0
/* The real interpreters the python suites run (pyenv.h). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/python/pyenv.h"

const char *const py_test_minors[PY_TEST_NR_MINORS] = { "2.7",  "3.6",  "3.7",  "3.8",
							"3.9",  "3.10", "3.11", "3.12",
							"3.13", "debian" };

/* The interpreter binary of a version, or NULL when it is not installed. */
const char *py_test_interpreter(const char *minor, char *path, size_t len)
{
	const char *root = getenv("PYENV_ROOT"), *home = getenv("HOME");
	char versions[256];
	struct dirent *de;
	DIR *dir;

	if (!strcmp(minor, "debian")) {
		struct stat st;

		/* Debian's own: a regular file, not a link into pyenv. */
		if (lstat("/usr/bin/python3.11", &st) || !S_ISREG(st.st_mode))
			return NULL;
		snprintf(path, len, "/usr/bin/python3.11");
		return path;
	}
	if (root)
		snprintf(versions, sizeof(versions), "%s/versions", root);
	else
		snprintf(versions, sizeof(versions), "%s/.pyenv/versions", home ? home : "/root");
	dir = opendir(versions);
	if (!dir)
		return NULL;
	path[0] = '\0';
	while ((de = readdir(dir))) {
		size_t n = strlen(minor);

		if (strncmp(de->d_name, minor, n) || de->d_name[n] != '.')
			continue;
		if (snprintf(path, len, "%s/%.64s/bin/python%s", versions, de->d_name, minor) >=
			    (int)len ||
		    access(path, X_OK))
			path[0] = '\0';
		else
			break;
	}
	closedir(dir);
	return path[0] ? path : NULL;
}


bool py_test_library(const char *exe, char *lib, size_t len)
{
	const char *slash = strrchr(exe, '/');
	struct dirent *de;
	bool found = false;
	char dir[600];
	DIR *d;

	if (!slash || slash - exe < 4 || strncmp(slash - 4, "/bin", 4))
		return false;
	snprintf(dir, sizeof(dir), "%.*s/lib", (int)(slash - exe - 4), exe);
	d = opendir(dir);
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (!strncmp(de->d_name, "libpython", 9) && n > 7 &&
		    !strcmp(de->d_name + n - 7, ".so.1.0"))
			found = snprintf(lib, len, "%s/%s", dir, de->d_name) < (int)len;
	}
	closedir(d);
	return found;
}
