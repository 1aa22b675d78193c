/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One struct member's place from the kernel's BTF (/sys/kernel/btf/vmlinux,
 * Linux 5.4+ with CONFIG_DEBUG_INFO_BTF), for BPF programs that read kernel
 * structures with bpf_probe_read and no CO-RE (they must load on 4.9).
 * Read as a stream: libbpf's btf__load_vmlinux_btf() holds about 12 MB for
 * 6.18's 5.5 MB file and takes 80 ms here; this keeps an index of the type
 * records (4 bytes a type) and reads the few it needs.
 */
#ifndef COMPAT_KBTF_H
#define COMPAT_KBTF_H

#include <stddef.h>
#include <stdint.h>

#define KBTF_VMLINUX "/sys/kernel/btf/vmlinux"
/* Members in a path: "se", "sum_exec_runtime". */
#define KBTF_MAX_PATH 4

/*
 * The byte offset in struct strct of the member that path names (nr names,
 * outermost first), and its size: the BTF file at file. Members of
 * anonymous structs and unions (randstruct's wrapper in task_struct) are
 * looked into; typedefs and qualifiers are seen through. Bitfields are
 * refused. Returns 0, or -errno with a one-line reason in why: -ENOENT for
 * no such file, struct or member, -EINVAL for a malformed file.
 */
int kbtf__member(const char *file, const char *strct, const char *const *path, unsigned int nr,
		 uint32_t *offset, uint32_t *size, char *why, size_t len);

#endif
