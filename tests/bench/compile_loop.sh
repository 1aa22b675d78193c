#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make bench's busy host: WORKERS loops of `gcc -O2 -c` over this project's
# core/ sources, at normal priority, until killed. Each compile forks gcc,
# cc1 and as: thousands of short-lived processes with deep stacks (issue 22),
# the side-band records (fork/comm/mmap/exit) a profiler must keep up with.
# Usage: compile_loop.sh WORKERS OUTDIR
set -u
workers=$1
out=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
cd "$root" || exit 1
i=0
while [ "$i" -lt "$workers" ]; do
	(
		while :; do
			for f in core/*/*.c; do
				gcc -O2 -g -std=gnu11 -I. -D_GNU_SOURCE -c "$f" -o "$out/$i.o" 2>/dev/null
			done
		done
	) &
	i=$((i + 1))
done
wait
