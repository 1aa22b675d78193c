// SPDX-License-Identifier: GPL-2.0
/*
 * Symbolization fixture: prints the run-time addresses of some of its
 * functions, one "name address" per line, then waits for stdin to close.
 */
#include <stdio.h>
#include <unistd.h>

__attribute__((noinline, used)) void fixture_alpha(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline, used)) int fixture_beta(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline, used)) static long fixture_gamma_static(long x)
{
	return x ^ 0x5a5a;
}

int main(void)
{
	char c;

	printf("fixture_alpha %p\n", (void *)fixture_alpha);
	printf("fixture_beta %p\n", (void *)fixture_beta);
	printf("fixture_gamma_static %p\n", (void *)fixture_gamma_static);
	printf("main %p\n", (void *)main);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
