// SPDX-License-Identifier: GPL-2.0
/* A shared library for the dlopen workload: its hot function lives only here. */
static volatile unsigned long sink;

__attribute__((noinline)) void libspin_hot(void)
{
	for (unsigned long i = 0; i < 100000; i++)
		sink = sink * 31 + i;
}
