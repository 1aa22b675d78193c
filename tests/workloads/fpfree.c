// SPDX-License-Identifier: GPL-2.0
/*
 * Frame pointers everywhere, and no code without them: static, no libc, no
 * dynamic loader (whose code keeps no frame pointers on Debian), its own
 * _start and system calls. The one kind of process whose every binary
 * keeps frame pointers on a Debian 12 host: --unwind auto walks it by
 * frame pointers and takes no stack copies (-p).
 * Usage: fpfree SECONDS (whole seconds; prints pid=PID first)
 */
#include <stddef.h>

static volatile unsigned long sink;

static long sys1(long nr, long a)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a) : "rcx", "r11", "memory");
	return ret;
}

static long sys2(long nr, long a, long b)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b) : "rcx", "r11", "memory");
	return ret;
}

static long sys3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
}

/* "pid=PID\n" on standard output. */
static void print_pid(void)
{
	char buf[32] = "pid=", digits[16];
	long pid = sys1(39 /* getpid */, 0), n = 0, len = 4;

	do
		digits[n++] = (char)('0' + pid % 10);
	while ((pid /= 10) && n < 15);
	while (n)
		buf[len++] = digits[--n];
	buf[len++] = '\n';
	sys3(1 /* write */, 1, (long)buf, len);
}

struct ts {
	long sec, nsec;
};

static long seconds_now(void)
{
	struct ts t;

	sys2(228 /* clock_gettime */, 1 /* CLOCK_MONOTONIC */, (long)&t);
	return t.sec;
}

__attribute__((noinline)) void fpfree_c(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink = sink * 33 + i;
}

__attribute__((noinline)) void fpfree_b(unsigned long n)
{
	fpfree_c(n);
	sink++;
}

__attribute__((noinline)) void fpfree_a(unsigned long n)
{
	fpfree_b(n);
	sink++;
}

__attribute__((noinline)) int fpfree_main(long seconds)
{
	long end = seconds_now() + seconds;

	print_pid();

	while (seconds_now() < end)
		fpfree_a(100000);
	return 0;
}

/* Seconds from argv[1]: digits only. */
__attribute__((noinline, used)) void fpfree_start(long *sp)
{
	long argc = sp[0], seconds = 2;
	const char *arg = argc > 1 ? (const char *)sp[2] : NULL;

	if (arg && *arg) {
		seconds = 0;
		for (; *arg >= '0' && *arg <= '9'; arg++)
			seconds = seconds * 10 + (*arg - '0');
	}
	sys1(60 /* exit */, fpfree_main(seconds));
}

/* The entry: rbp 0 ends the frame chain, the stack aligned as the ABI wants for a call. */
__asm__(".globl _start\n"
	"_start:\n"
	"	xor %ebp, %ebp\n"
	"	mov %rsp, %rdi\n"
	"	and $-16, %rsp\n"
	"	call fpfree_start\n"
	"	hlt\n");
