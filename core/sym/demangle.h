/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C++ names as profilers print frames: demangled, without the return type
 * of a template function and without the parameter list, as perf and
 * `c++filt -p` print them: "void ns::f<int>(int)" -> "ns::f<int>".
 */
#ifndef CORE_SYM_DEMANGLE_H
#define CORE_SYM_DEMANGLE_H

#include <stddef.h>

/* The name of the function (or object) in demangled, cut in place; demangled itself if none. */
char *demangle_short_name(char *demangled);

/* The mangled name (len bytes, not NUL-terminated) shortened; NULL if it is not C++. Free it. */
char *demangle_cxx(const char *name, size_t len);

#endif
