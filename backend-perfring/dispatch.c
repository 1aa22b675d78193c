// SPDX-License-Identifier: GPL-2.0
/*
 * A drain of the ring set: the records taken from the reader (or the
 * rings), ordered by time, each to its handler: side-band records to
 * sideband.c, samples, switches, raw data and losses to the owner's.
 */
#include "backend-perfring/ringset_internal.h"

#include <stdlib.h>

#include "backend-perfring/decode.h"
#include "core/lib/clock.h"

static int cmp_batch_rec(const void *a, const void *b)
{
	const struct batch_rec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int handle_switch(struct ring_set *rs, const struct perf_event_header *hdr)
{
	struct decoded_switch sw;

	if (!rs->on_switch)
		return 0;
	if (decode__switch(hdr, rs->sample_type, rs->sample_id_all, &sw)) {
		rs->bad_records++;
		return 0;
	}
	return rs->on_switch(rs->on_switch_ctx, sw.id.pid, sw.id.tid, sw.id.time, sw.out);
}

static int handle_raw(struct ring_set *rs, const struct perf_event_header *hdr)
{
	struct decoded_sample ds;

	if (decode__sample(hdr, rs->sample_type, rs->regs_user, &ds) || !ds.raw) {
		rs->bad_records++;
		return 0;
	}
	return rs->on_raw(rs->on_raw_ctx, (rs->sample_type & PERF_SAMPLE_CPU) ? (int)ds.id.cpu : -1,
			  ds.id.time, ds.raw, ds.raw_size);
}

static int handle_record(struct ring_set *rs, const struct perf_event_header *hdr)
{
	uint64_t lost;

	switch (hdr->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
		return sideband__record(rs, hdr);
	case PERF_RECORD_SAMPLE:
		if (rs->on_raw)
			return handle_raw(rs, hdr);
		return rs->on_sample ? rs->on_sample(rs->on_sample_ctx, hdr) : 0;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		return handle_switch(rs, hdr);
	case PERF_RECORD_EXIT:
		return sideband__exit(rs, hdr);
	case PERF_RECORD_LOST:
		if (decode__lost(hdr, &lost)) {
			rs->bad_records++;
			return 0;
		}
		rs->lost += lost;
		if (rs->on_lost) {
			struct sample_id id;
			bool cpu_known = (rs->sample_type & PERF_SAMPLE_CPU) && rs->sample_id_all &&
					 !decode__sample_id(hdr, rs->sample_type, rs->sample_id_all,
							    &id);

			rs->on_lost(rs->on_lost_ctx, cpu_known ? (int)id.cpu : -1, lost);
		}
		return 0;
	default:
		return 0;	/* THROTTLE, ...: nothing to keep */
	}
}

/* One part of a drain: the batch's records in time order, each to its handler. */
static int handle_batch(struct ring_set *rs)
{
	struct batch *bt = &rs->batch;
	int err = 0;

	if (bt->nr)	/* recs is NULL until the first record */
		qsort(bt->recs, bt->nr, sizeof(*bt->recs), cmp_batch_rec);
	for (size_t i = 0; i < bt->nr && !err; i++) {
		rs->cur_interp = bt->recs[i].interp == NO_INTERP
					 ? NULL
					 : (const void *)(bt->bytes + bt->recs[i].interp);
		err = handle_record(rs, (const struct perf_event_header *)(bt->bytes +
									   bt->recs[i].offset));
	}
	rs->cur_interp = NULL;
	return err;
}

static int drain(struct ring_set *rs, bool now)
{
	struct batch *bt = &rs->batch;
	int err = 0, more;

	/*
	 * Taken once per drain (two clock reads per record added up in fork
	 * storms), for the side-band records and for comms read from /proc,
	 * checked against the samples' times (issue 32).
	 */
	rs->mono_to_wall_ns = ring_set__monotonic(rs) ? mono_to_wall_ns() : 0;
	proctrack__set_clock_to_wall(rs->pipeline->procs, rs->mono_to_wall_ns);
	map_inode__forget(&rs->maps);
	do {
		/* Swapped with the reader's pending at the take: each is trimmed in turn. */
		batch__trim(bt);
		bt->len = 0;
		bt->nr = 0;
		/* No thread (any more), or every record now: the rings too, after what it had. */
		more = ring_reader__take(rs, !rs->reader.on || now);
		if (more < 0)
			return more;
		err = handle_batch(rs);
	} while (!err && more);
	if (!err && rs->lost != rs->lost_resynced)
		err = sideband__resync(rs);
	ring_reader__settle(rs);
	return err;
}

int ring_set__drain(struct ring_set *rs)
{
	return drain(rs, false);
}

int ring_set__drain_now(struct ring_set *rs)
{
	return drain(rs, true);
}

void ring_set__read_interp_early(struct ring_set *rs)
{
	rs->interp_early = rs->cfg && rs->cfg->interp && rs->cfg->interp_reader;
}

void ring_set__read_interp_at_each_sample(struct ring_set *rs)
{
	ring_set__read_interp_early(rs);
	rs->wake_always = rs->interp_early && rs->wake_each_sample;
}

bool ring_set__sample_interp(const struct ring_set *rs, const struct interp_frame **frames,
			     unsigned int *nr, uint32_t *status, uint64_t *read_ns)
{
	if (!rs->cur_interp)
		return false;
	if (read_ns)
		*read_ns = rs->cur_interp->read_ns;
	*frames = rs->cur_interp->frames;
	*nr = rs->cur_interp->nr;
	*status = rs->cur_interp->status;
	return true;
}
