// SPDX-License-Identifier: GPL-2.0
#include "backend-bpf/convert.h"

#include <errno.h>
#include <string.h>

static unsigned int stack_depth(const uint64_t *ips)
{
	unsigned int n = 0;

	while (n < PROFILE_MAX_STACK_DEPTH && ips[n])
		n++;
	return n;
}

/* -EFAULT: no stack of that kind (a user-mode sample has no kernel stack). */
static int stack_error(int32_t id)
{
	if (id >= 0 || id == -EFAULT || id == PROFILE_STACK_NOT_TAKEN)
		return 0;
	return id;
}

void bpf_convert__sample(const struct profile_key *key, uint64_t count, const uint64_t *kstack,
			 const uint64_t *ustack, uint64_t *kbuf, struct sample *out)
{
	unsigned int nk = 0;

	memset(out, 0, sizeof(*out));
	out->pid = (pid_t)key->tgid;
	out->tid = key->tid ? (pid_t)key->tid : (pid_t)key->tgid;
	out->cpu = -1;
	out->kind = WEIGHT_SAMPLES;
	memcpy(out->comm, key->comm, sizeof(out->comm) - 1);
	out->weight = count;
	out->kernel_err = stack_error(key->kernel_stack_id);
	out->user_err = stack_error(key->user_stack_id);
	/* An id whose stack is gone is a missed stack, not an empty one. */
	if (key->kernel_stack_id >= 0 && !kstack)
		out->kernel_err = -ENOENT;
	if (key->user_stack_id >= 0 && !ustack)
		out->user_err = -ENOENT;

	if (key->kernel_stack_id >= 0 && kstack) {
		unsigned int depth = stack_depth(kstack);

		/*
		 * Kernels whose stack walk starts above the interrupted
		 * function lack the leaf; bcc prepends it always, which
		 * repeats it where the walk includes it. Prepend only if absent.
		 */
		if (key->kernel_ip && (!depth || kstack[0] != key->kernel_ip))
			kbuf[nk++] = key->kernel_ip;
		if (depth > MAX_STACK_DEPTH - nk)
			depth = MAX_STACK_DEPTH - nk;
		memcpy(kbuf + nk, kstack, depth * sizeof(*kbuf));
		nk += depth;
	}
	out->kernel_ips = kbuf;
	out->nr_kernel = nk;
	if (key->user_stack_id >= 0 && ustack) {
		out->user_ips = ustack;
		out->nr_user = stack_depth(ustack);
	}
}
