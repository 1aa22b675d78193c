// SPDX-License-Identifier: GPL-2.0
/*
 * Runs a command under a seccomp filter that makes one system call fail
 * with EPERM, as container runtimes do with bpf() and perf_event_open.
 * perf_cloexec instead makes perf_event_open fail with EINVAL when given
 * PERF_FLAG_FD_CLOEXEC, as kernels before 3.14 do.
 * Usage: deny_syscall bpf|perf_event_open|perf_cloexec COMMAND [ARGS...]
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	unsigned int nr, fail = EPERM, flags_mask = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: deny_syscall bpf|perf_event_open|perf_cloexec COMMAND "
			"[ARGS...]\n");
		return 2;
	}
	if (!strcmp(argv[1], "bpf"))
		nr = SYS_bpf;
	else if (!strcmp(argv[1], "perf_event_open"))
		nr = SYS_perf_event_open;
	else if (!strcmp(argv[1], "perf_cloexec"))
		nr = SYS_perf_event_open, fail = EINVAL, flags_mask = 8; /* PERF_FLAG_FD_CLOEXEC */
	else {
		fprintf(stderr, "deny_syscall: unknown system call %s\n", argv[1]);
		return 2;
	}

	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 3),
		/* The low word of the flags argument (x86_64 is little-endian). */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[4])),
		flags_mask ? (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, flags_mask, 0, 1)
			   : (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (fail & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(filter) / sizeof(filter[0]), .filter = filter };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("deny_syscall: seccomp");
		return 1;
	}
	execvp(argv[2], argv + 2);
	perror("deny_syscall: exec");
	return 127;
}
