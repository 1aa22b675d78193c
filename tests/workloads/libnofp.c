// SPDX-License-Identifier: GPL-2.0
/* A library without frame pointers, for nofp's dlopen mode. */
static volatile unsigned long sink;

__attribute__((noinline)) void libnofp_inner(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink = sink * 37 + i;
}

__attribute__((noinline)) void libnofp_outer(unsigned long n)
{
	libnofp_inner(n);
	sink++;
}
