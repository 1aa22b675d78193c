/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pinned BPF maps that another tool manages, as bcc's --cgroupmap and
 * --mntnsmap take them (Inspektor Gadget fills them with the cgroup ids or
 * mount namespace ids of the containers to trace): the path is checked to
 * be an object in a BPF filesystem, the map is opened read-only and its
 * type and key checked, all before any program is loaded.
 */
#ifndef COMPAT_BPFPIN_H
#define COMPAT_BPFPIN_H

#include <stddef.h>

/*
 * Open the map pinned at path, which must be a hash map with 8-byte keys
 * (a cgroup id, a mount namespace id; values are not read). what names the
 * option in messages. Returns an fd (close-on-exec) or -errno with a
 * one-line reason in why.
 */
int bpfpin__open_id_set(const char *path, const char *what, char *why, size_t len);

#endif
