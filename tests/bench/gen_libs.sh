#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Generates the symbolization benchmark's workload into DIR: 50 shared
# libraries of 10 functions each and a program that dlopens them all and
# walks PATHS distinct call paths across them (path p: library p % 50, then
# its functions by the digits of p / 50). Usage: gen_libs.sh DIR [PATHS]
set -eu
dir=$1
paths=${2:-10000}
mkdir -p "$dir"
cc=${CC:-clang}
flags="-O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline -fno-optimize-sibling-calls"

for n in $(seq 0 49); do
	{
		echo "static volatile unsigned long sink;"
		echo "static void step$n(unsigned level, unsigned path);"
		for f in 0 1 2 3 4 5 6 7 8 9; do
			echo "__attribute__((noinline)) static void lib${n}_f$f(unsigned l, unsigned p) { step$n(l, p); }"
		done
		echo "static void (*const t[10])(unsigned, unsigned) = { lib${n}_f0, lib${n}_f1, lib${n}_f2, lib${n}_f3, lib${n}_f4, lib${n}_f5, lib${n}_f6, lib${n}_f7, lib${n}_f8, lib${n}_f9 };"
		echo "__attribute__((noinline)) static void step$n(unsigned level, unsigned path) {"
		echo "  if (!level) { for (int i = 0; i < 300; i++) sink = sink * 31 + i; return; }"
		echo "  t[path % 10](level - 1, path / 10); }"
		echo "void lib${n}_entry(unsigned path) { step$n(3, path); }"
	} > "$dir/lib$n.c"
	$cc $flags -shared -fPIC -o "$dir/lib$n.so" "$dir/lib$n.c" &
done
wait
cat > "$dir/main.c" <<EOT
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static void (*entry[50])(unsigned);
int main(int argc, char **argv)
{
	char path[4096], name[32];
	double secs = argc > 1 ? atof(argv[1]) : 10;
	struct timespec a, b;
	for (int n = 0; n < 50; n++) {
		snprintf(path, sizeof(path), "%s/lib%d.so", "$dir", n);
		void *h = dlopen(path, RTLD_NOW);
		snprintf(name, sizeof(name), "lib%d_entry", n);
		if (!h || !(entry[n] = (void (*)(unsigned))dlsym(h, name))) return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (unsigned p = 0;; p = (p + 1) % $paths) {
		entry[p % 50](p / 50);
		if (p % 1000 == 0) {
			clock_gettime(CLOCK_MONOTONIC, &b);
			if (b.tv_sec - a.tv_sec + (b.tv_nsec - a.tv_nsec) / 1e9 > secs) return 0;
		}
	}
}
EOT
$cc $flags -o "$dir/many_binaries" "$dir/main.c" -ldl
