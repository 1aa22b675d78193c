// SPDX-License-Identifier: GPL-2.0
/*
 * Hand-written assembly as ld.so, libc and openssl have it: code under
 * labels that have no type and no size, in a section of its own (asm_hot).
 * asm_spin is a global label with a loop under the local label
 * asm_spin_loop, then data the assembler marks with a mapping symbol;
 * asm_typed is a typed, sized function with a label at its start and one
 * inside; asm_tail is the section's last label. Usage: asmlabels [seconds]
 */
#include <stdlib.h>
#include <time.h>

__asm__(".pushsection asm_hot, \"ax\", @progbits\n"
	".globl asm_spin\n"
	".p2align 4\n"
	"asm_spin:\n"
	"\"$x\":\n"			/* mapping symbols (AArch64 style) are noise */
	"	mov %rdi, %rax\n"
	"asm_spin_loop:\n"
	"	dec %rax\n"
	"	jnz asm_spin_loop\n"
	"	ret\n"
	"\"$d\":\n"
	"	.byte 0x0f, 0x0b, 0xcc, 0xcc\n"
	".globl asm_typed\n"
	".type asm_typed, @function\n"
	".p2align 4\n"
	"asm_typed:\n"
	"asm_typed_start:\n"		/* same address: the typed symbol's name wins */
	"	lea 1(%rdi), %rax\n"
	"asm_typed_inside:\n"		/* inside a sized function: still the function */
	"	add $2, %rax\n"
	"	ret\n"
	".size asm_typed, .-asm_typed\n"
	".p2align 4\n"
	"asm_tail:\n"			/* no symbol after it: bounded by the section */
	"	mov %rdi, %rax\n"
	"	ret\n"
	".popsection\n");

void asm_spin(long n);
long asm_typed(long x);

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 0.0);
	volatile long sink = 0;

	do {
		asm_spin(1000000);
		sink = sink + asm_typed(sink);
	} while (now() < end);
	return 0;
}
