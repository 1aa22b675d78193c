/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The real interpreters the python suites run: pyenv's build of each minor
 * version ($PYENV_ROOT or ~/.pyenv), and Debian's /usr/bin/python3.11.
 */
#ifndef TESTS_UNIT_PYTHON_PYENV_H
#define TESTS_UNIT_PYTHON_PYENV_H

#include <stdbool.h>
#include <stddef.h>

#define PY_TEST_NR_MINORS 10
/* "2.7", "3.6" ... "3.13", then "debian". */
extern const char *const py_test_minors[PY_TEST_NR_MINORS];

/* The interpreter of minor ("3.12": pyenv's 3.12.N/bin/python3.12), or NULL when not installed. */
const char *py_test_interpreter(const char *minor, char *path, size_t len);
/* The libpython of a pyenv interpreter (PREFIX/bin/pythonX.Y -> PREFIX/lib/libpython*.so.1.0). */
bool py_test_library(const char *exe, char *lib, size_t len);

#endif
