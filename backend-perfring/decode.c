// SPDX-License-Identifier: GPL-2.0
#include "backend-perfring/decode.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "compat/perf_event.h"

/* A bounds-checked cursor over one record's body. */
struct cursor {
	const unsigned char *p;
	const unsigned char *end;
};

static bool take(struct cursor *c, void *dst, size_t n)
{
	if ((size_t)(c->end - c->p) < n)
		return false;
	if (dst)
		memcpy(dst, c->p, n);
	c->p += n;
	return true;
}

static struct cursor body(const struct perf_event_header *hdr)
{
	const unsigned char *start = (const unsigned char *)(hdr + 1);

	return (struct cursor){ start, (const unsigned char *)hdr + hdr->size };
}

unsigned int decode__sample_id_size(uint64_t t)
{
	unsigned int n = 0;

	n += (t & PERF_SAMPLE_TID) ? 8 : 0;
	n += (t & PERF_SAMPLE_TIME) ? 8 : 0;
	n += (t & PERF_SAMPLE_ID) ? 8 : 0;
	n += (t & PERF_SAMPLE_STREAM_ID) ? 8 : 0;
	n += (t & PERF_SAMPLE_CPU) ? 8 : 0;
	n += (t & PERF_SAMPLE_IDENTIFIER) ? 8 : 0;
	return n;
}

/* The fields a sample may have before its stack copy, in perf_output_sample()'s order. */
#define FIELDS_TO_STACK_USER                                                                    \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |          \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |            \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |        \
	 PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)

/* The copy's offset in the record and its room (sample_stack_user); false: not this shape. */
static bool stack_layout(const struct perf_event_header *hdr, uint64_t t,
			 const struct decoded_sample *ds, size_t *data, size_t *size)
{
	if (!(t & PERF_SAMPLE_STACK_USER) || (t & ~(uint64_t)FIELDS_TO_STACK_USER) || !ds->stack)
		return false;
	*data = (size_t)(ds->stack - (const unsigned char *)hdr);
	/* size, the copy, dyn_size: the last fields of the record. */
	if (*data < sizeof(*hdr) + 8 || *data + 8 > hdr->size)
		return false;
	*size = hdr->size - *data - 8;
	return ds->stack_size <= *size;
}

size_t decode__cut_stack_len(const struct perf_event_header *hdr, uint64_t t,
			     const struct decoded_sample *ds)
{
	size_t data, size, keep;

	if (!stack_layout(hdr, t, ds, &data, &size))
		return 0;
	keep = (ds->stack_size + 7) & ~(size_t)7;
	return keep < size ? data + keep + 8 : 0;
}

size_t decode__stack_room(const struct perf_event_header *hdr, uint64_t t,
			  const struct decoded_sample *ds)
{
	size_t data, size;

	return stack_layout(hdr, t, ds, &data, &size) ? size - ds->stack_size : 0;
}

/* The record to out: up to the copy, its first n bytes, dyn_size n; the sizes for n. */
static size_t write_stack(const struct perf_event_header *hdr, const struct decoded_sample *ds,
			  const void *extra, size_t extra_len, void *out)
{
	unsigned char *o = out;
	size_t data = (size_t)(ds->stack - (const unsigned char *)hdr);
	uint64_t n = ds->stack_size + extra_len, keep = (n + 7) & ~(uint64_t)7;
	struct perf_event_header h = *hdr;

	memcpy(o, hdr, data + ds->stack_size);
	if (extra_len)
		memcpy(o + data + ds->stack_size, extra, extra_len);
	memset(o + data + n, 0, keep - n);
	memcpy(o + data + keep, &n, 8);
	memcpy(o + data - 8, &keep, 8);
	h.size = (uint16_t)(data + keep + 8);
	memcpy(o, &h, sizeof(h));
	return h.size;
}

void decode__cut_stack(const struct perf_event_header *hdr, const struct decoded_sample *ds,
		       size_t len, void *out)
{
	(void)len;	/* what decode__cut_stack_len gave: write_stack's */
	write_stack(hdr, ds, NULL, 0, out);
}

size_t decode__fill_stack(const struct perf_event_header *hdr, const struct decoded_sample *ds,
			  const void *extra, size_t extra_len, void *out)
{
	size_t data = (size_t)(ds->stack - (const unsigned char *)hdr);
	size_t room = hdr->size - data - 8 - ds->stack_size;

	return write_stack(hdr, ds, extra, extra_len < room ? extra_len : room, out);
}

int decode__sample(const struct perf_event_header *hdr, uint64_t t, uint64_t regs_mask,
		   struct decoded_sample *out)
{
	struct cursor c = body(hdr);
	uint32_t pair[2];

	memset(out, 0, sizeof(*out));
	if (hdr->type != PERF_RECORD_SAMPLE)
		return -EINVAL;
	if ((t & PERF_SAMPLE_IDENTIFIER) && !take(&c, NULL, 8))
		return -EBADMSG;
	if ((t & PERF_SAMPLE_IP) && !take(&c, NULL, 8))
		return -EBADMSG;
	if (t & PERF_SAMPLE_TID) {
		if (!take(&c, pair, 8))
			return -EBADMSG;
		out->id.pid = pair[0];
		out->id.tid = pair[1];
	}
	if ((t & PERF_SAMPLE_TIME) && !take(&c, &out->id.time, 8))
		return -EBADMSG;
	if ((t & PERF_SAMPLE_ADDR) && !take(&c, NULL, 8))
		return -EBADMSG;
	if ((t & PERF_SAMPLE_ID) && !take(&c, NULL, 8))
		return -EBADMSG;
	if ((t & PERF_SAMPLE_STREAM_ID) && !take(&c, NULL, 8))
		return -EBADMSG;
	if (t & PERF_SAMPLE_CPU) {
		if (!take(&c, pair, 8))
			return -EBADMSG;
		out->id.cpu = pair[0];
	}
	if ((t & PERF_SAMPLE_PERIOD) && !take(&c, NULL, 8))
		return -EBADMSG;
	if (t & PERF_SAMPLE_CALLCHAIN) {
		if (!take(&c, &out->nr_ips, 8))
			return -EBADMSG;
		if (out->nr_ips > (uint64_t)(c.end - c.p) / 8)
			return -EBADMSG;
		out->ips = (const uint64_t *)c.p;
		c.p += out->nr_ips * 8;
	}
	if (t & PERF_SAMPLE_RAW) {
		uint32_t size;

		/* A tracepoint's record: u32 size, then size bytes (padded to 8 with the size). */
		if (!take(&c, &size, 4) || size > (uint64_t)(c.end - c.p))
			return -EBADMSG;
		out->raw = c.p;
		out->raw_size = size;
		c.p += size;
	}
	if (t & PERF_SAMPLE_BRANCH_STACK)
		return -EINVAL;	/* never requested: its layout is not parsed here */
	if (t & PERF_SAMPLE_REGS_USER) {
		if (!take(&c, &out->regs_abi, 8))
			return -EBADMSG;
		/* No registers follow for a kernel thread (abi NONE). */
		if (out->regs_abi != PERF_SAMPLE_REGS_ABI_NONE) {
			out->nr_regs = __builtin_popcountll(regs_mask);
			if ((size_t)(c.end - c.p) < out->nr_regs * 8u)
				return -EBADMSG;
			out->regs = (const uint64_t *)c.p;
			c.p += out->nr_regs * 8u;
		}
	}
	if (t & PERF_SAMPLE_STACK_USER) {
		uint64_t size;

		if (!take(&c, &size, 8) || size > (uint64_t)(c.end - c.p))
			return -EBADMSG;
		out->stack = c.p;
		c.p += size;
		/* dyn_size, the part actually copied, follows only a non-empty dump. */
		if (size) {
			if (!take(&c, &out->stack_size, 8) || out->stack_size > size)
				return -EBADMSG;
		}
	}
	return 0;
}

/* The value of register reg (a PERF_REG_X86_* bit of mask) in a sample's regs. */
bool decode__user_reg(const struct decoded_sample *ds, uint64_t mask, unsigned int reg,
		      uint64_t *val)
{
	unsigned int idx;

	if (!ds->regs || !(mask & (1ull << reg)))
		return false;
	/* Registers are stored in the order of their bits. */
	idx = __builtin_popcountll(mask & ((1ull << reg) - 1));
	if (idx >= ds->nr_regs)
		return false;
	memcpy(val, &ds->regs[idx], 8);
	return true;
}

int decode__sample_id(const struct perf_event_header *hdr, uint64_t t, bool sample_id_all,
		      struct sample_id *out)
{
	unsigned int size = decode__sample_id_size(t);
	struct cursor c = body(hdr);
	uint32_t pair[2];

	memset(out, 0, sizeof(*out));
	if (!sample_id_all || !size)
		return -ENOENT;
	if ((size_t)(c.end - c.p) < size)
		return -EBADMSG;
	c.p = c.end - size;
	if (t & PERF_SAMPLE_TID) {
		take(&c, pair, 8);
		out->pid = pair[0];
		out->tid = pair[1];
	}
	if (t & PERF_SAMPLE_TIME)
		take(&c, &out->time, 8);
	if (t & PERF_SAMPLE_ID)
		take(&c, NULL, 8);
	if (t & PERF_SAMPLE_STREAM_ID)
		take(&c, NULL, 8);
	if (t & PERF_SAMPLE_CPU) {
		take(&c, pair, 8);
		out->cpu = pair[0];
	}
	return 0;
}

/* A string field that runs to the trailer: it must hold a NUL. */
static const char *take_string(struct cursor *c, uint64_t t, bool sample_id_all)
{
	size_t room = c->end - c->p;
	unsigned int trailer = sample_id_all ? decode__sample_id_size(t) : 0;

	if (room <= trailer)
		return NULL;
	room -= trailer;
	if (!memchr(c->p, '\0', room))
		return NULL;
	return (const char *)c->p;
}

int decode__mmap(const struct perf_event_header *hdr, uint64_t t, bool sample_id_all,
		 struct decoded_mmap *out)
{
	struct cursor c = body(hdr);
	uint32_t prot = 0, flags;

	memset(out, 0, sizeof(*out));
	if (hdr->type != PERF_RECORD_MMAP && hdr->type != PERF_RECORD_MMAP2)
		return -EINVAL;
	if (!take(&c, &out->pid, 4) || !take(&c, &out->tid, 4) || !take(&c, &out->addr, 8) ||
	    !take(&c, &out->len, 8) || !take(&c, &out->pgoff, 8))
		return -EBADMSG;
	if (hdr->type == PERF_RECORD_MMAP2) {
		/* maj, min, ino, ino_generation; or build_id_size, 3 reserved bytes, build_id[20] */
		unsigned char ident[24];

		if (!take(&c, ident, sizeof(ident)) || !take(&c, &prot, 4) || !take(&c, &flags, 4))
			return -EBADMSG;
		if (hdr->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			if (ident[0] > sizeof(out->build_id))
				return -EBADMSG;
			out->build_id_size = ident[0];
			memcpy(out->build_id, ident + 4, sizeof(out->build_id));
		} else {
			memcpy(&out->maj, ident, 4);
			memcpy(&out->min, ident + 4, 4);
			memcpy(&out->ino, ident + 8, 8);
		}
		out->exec = prot & PROT_EXEC;
	} else {
		/* PERF_RECORD_MISC_MMAP_DATA marks data maps; we never ask for those. */
		out->exec = !(hdr->misc & PERF_RECORD_MISC_MMAP_DATA);
	}
	out->filename = take_string(&c, t, sample_id_all);
	return out->filename ? 0 : -EBADMSG;
}

int decode__comm(const struct perf_event_header *hdr, uint64_t t, bool sample_id_all,
		 struct decoded_comm *out)
{
	struct cursor c = body(hdr);

	memset(out, 0, sizeof(*out));
	if (hdr->type != PERF_RECORD_COMM)
		return -EINVAL;
	if (!take(&c, &out->pid, 4) || !take(&c, &out->tid, 4))
		return -EBADMSG;
	out->exec = hdr->misc & PERF_RECORD_MISC_COMM_EXEC;
	out->comm = take_string(&c, t, sample_id_all);
	return out->comm ? 0 : -EBADMSG;
}

int decode__task(const struct perf_event_header *hdr, struct decoded_task *out)
{
	struct cursor c = body(hdr);

	memset(out, 0, sizeof(*out));
	if (hdr->type != PERF_RECORD_FORK && hdr->type != PERF_RECORD_EXIT)
		return -EINVAL;
	if (!take(&c, &out->pid, 4) || !take(&c, &out->ppid, 4) || !take(&c, &out->tid, 4) ||
	    !take(&c, &out->ptid, 4))
		return -EBADMSG;
	return 0;
}

int decode__switch(const struct perf_event_header *hdr, uint64_t sample_type, bool sample_id_all,
		   struct decoded_switch *out)
{
	if (hdr->type != PERF_RECORD_SWITCH && hdr->type != PERF_RECORD_SWITCH_CPU_WIDE)
		return -EINVAL;
	out->out = hdr->misc & PERF_RECORD_MISC_SWITCH_OUT;
	return decode__sample_id(hdr, sample_type, sample_id_all, &out->id);
}

int decode__lost(const struct perf_event_header *hdr, uint64_t *lost)
{
	struct cursor c = body(hdr);

	if (hdr->type != PERF_RECORD_LOST)
		return -EINVAL;
	if (!take(&c, NULL, 8) || !take(&c, lost, 8))
		return -EBADMSG;
	return 0;
}

void decode__split_callchain(const uint64_t *ips, uint64_t nr, uint64_t *kernel,
			     unsigned int *nr_kernel, uint64_t *user, unsigned int *nr_user,
			     unsigned int max_depth)
{
	enum { CTX_NONE, CTX_KERNEL, CTX_USER } ctx = CTX_NONE;

	*nr_kernel = 0;
	*nr_user = 0;
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t ip = ips[i];

		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			if (ip == (uint64_t)PERF_CONTEXT_KERNEL)
				ctx = CTX_KERNEL;
			else if (ip == (uint64_t)PERF_CONTEXT_USER)
				ctx = CTX_USER;
			else
				ctx = CTX_NONE;	/* hypervisor, guest: not ours */
			continue;
		}
		if (ctx == CTX_KERNEL && *nr_kernel < max_depth)
			kernel[(*nr_kernel)++] = ip;
		else if (ctx == CTX_USER && *nr_user < max_depth)
			user[(*nr_user)++] = ip;
	}
}
