/* SPDX-License-Identifier: GPL-2.0 */
/* The filters of bcc's pinned id maps (bpf/idmap.bpf.h), as the loader names them. */
#ifndef BPF_IDMAP_MAPS_H
#define BPF_IDMAP_MAPS_H

#define IDMAP_CGROUP 1		/* --cgroupmap: keys are cgroup v2 ids */
#define IDMAP_MNTNS 2		/* --mntnsmap: keys are mount namespace ids */

#endif
