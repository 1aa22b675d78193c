/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An interactive flame graph in one self-contained SVG, in the manner of
 * flamegraph.pl: frames sized by samples, kernel frames coloured apart,
 * hover details, click to zoom, search with the matched percentage.
 */
#ifndef CORE_FLAMEGRAPH_H
#define CORE_FLAMEGRAPH_H

#include <stdio.h>

#include "core/report.h"

/*
 * stacks: folded stacks as report__collect gives them with annotations
 * (kernel frames end in "_[k]") and the "-" delimiter. title: one line.
 */
int flamegraph__write(FILE *out, const struct printed_stacks *stacks, const char *title);

#endif
