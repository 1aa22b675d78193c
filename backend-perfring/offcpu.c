// SPDX-License-Identifier: GPL-2.0
#include "backend-perfring/offcpu.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend-perfring/decode.h"
#include "backend-perfring/pywaits.h"
#include "backend-perfring/ringsample.h"
#include "compat/host.h"
#include "compat/perf_event.h"
#include "compat/tracepoint.h"
#include "core/lib/clock.h"
#include "core/lib/hashmap.h"

/* A thread switched out: when, and its stacks then. */
struct thread_off {
	pid_t pid, tid;
	uint64_t time;
	bool start_at_record;		/* time moved to its switch-out record's */
	char comm[TASK_COMM_LEN];
	unsigned int nr_kernel, nr_user;
	int kernel_err, user_err;
	uint64_t ips[2 * MAX_STACK_DEPTH];	/* kernel leaf..root, then user leaf..root */
	/*
	 * Its interpreter's frames (Python), read by the reader thread as it
	 * copied its switch-out record, else when the drain handles it, at
	 * interp_read (CLOCK_MONOTONIC ns, as record times): while it is
	 * blocked, unless its wait was shorter.
	 */
	unsigned int nr_interp;
	uint32_t interp_status;
	uint64_t interp_read;
	bool read_at_switch;		/* by the Python waits' reader (pywaits.h) */
	struct interp_frame interp[MAX_INTERP_DEPTH];
};

struct perf_offcpu {
	const struct backend_config *cfg;
	struct pipeline *pipeline;
	enum offcpu_source source;
	struct sched_switch_layout layout;
	uint64_t sample_type, regs_user;
	struct hashmap off;		/* tid -> struct thread_off, while switched out */
	struct hashmap last_in;		/* tid -> its latest switch-in time (as the value) */
	uint64_t last_time;
	uint64_t switches, missed_in, bad, reordered, still_off;
	uint64_t interp_waits;		/* waits counted with Python frames */
	uint64_t interp_late;		/* of those, over before their frames were read */
	bool finished;
	bool switch_records;		/* switch-ins (also) come as PERF_RECORD_SWITCH(_CPU_WIDE) */
	struct py_waits *py_waits;	/* Python frames read at the switch-outs, or NULL */
	bool monotonic;			/* record times are CLOCK_MONOTONIC, as reads' */
};

static uint64_t value_hash(const void *key)
{
	return hash_u64((uint64_t)(uintptr_t)key);
}

static bool value_equal(const void *a, const void *b)
{
	return a == b;
}

#define TID_KEY(tid) ((void *)(uintptr_t)(uint32_t)(tid))

static void base_attr(struct perf_event_attr *attr, const struct backend_config *c)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->sample_period = 1;
	/* With --unwind dwarf, the user stack copied at switch-out; auto walks frame pointers. */
	perfring__stack_attr(attr, c, c->off_cpu_dwarf);
	/* Times comparable with our own clock: the end of the run for threads still away. */
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
	attr->disabled = 1;
	attr->sample_id_all = 1;
	attr->watermark = 1;
}

int perf_offcpu__attr(const struct backend_config *c, enum offcpu_source source,
		      struct perf_event_attr *attr, char *why, size_t len)
{
	struct sched_switch_layout layout;
	int id, err;

	base_attr(attr, c);
	switch (source) {
	case OFFCPU_TRACEPOINT:
		err = sched_switch__read(&layout, &id, geteuid() == 0, why, len);
		if (err)
			return err;
		attr->type = PERF_TYPE_TRACEPOINT;
		attr->config = (uint64_t)id;
		attr->sample_type |= PERF_SAMPLE_RAW;
		/*
		 * Switch-ins from perf's own switch records: some kernels (this
		 * project's VMs) emit no sched_switch for some switches out of the
		 * idle task, and a thread woken there would seem never to return.
		 */
		attr->context_switch = 1;
		break;
	case OFFCPU_SWITCH_SAMPLES:
	case OFFCPU_SWITCHES_ONLY:
		attr->type = PERF_TYPE_SOFTWARE;
		attr->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
		/* PERF_RECORD_SWITCH: the switch-ins (4.3). */
		attr->context_switch = 1;
		/* Where the kernel is off limits, the switch records still come. */
		attr->exclude_kernel = source == OFFCPU_SWITCHES_ONLY;
		if (c->launch) {
			attr->inherit = 1;
			attr->enable_on_exec = 1;
		} else if (c->nr_pids || c->nr_tids) {
			attr->inherit = 1;
		}
		break;
	}
	return 0;
}

/* Open and close one event of this source; 0 or -errno. */
static int try_source(const struct backend_config *c, enum offcpu_source source, pid_t task,
		      char *why, size_t len)
{
	struct perf_attr_ladder ladder = { 0 };
	struct perf_event_attr attr;
	int fd, err = perf_offcpu__attr(c, source, &attr, why, len);

	if (err)
		return err;
	attr.enable_on_exec = 0;
	fd = source == OFFCPU_TRACEPOINT ? perf_attr__open(&ladder, &attr, -1, 0)
					 : perf_attr__open(&ladder, &attr, task, -1);
	if (fd < 0) {
		perf_open_error(fd, source == OFFCPU_TRACEPOINT, why, len);
		return fd;
	}
	close(fd);
	return 0;
}

int perf_offcpu__probe(const struct backend_config *c, pid_t target, enum offcpu_source *source,
		       char *why, size_t len)
{
	/* Events on a cgroup are CPU-wide: only the tracepoint is, with every switch. */
	bool per_task = (c->launch || c->nr_pids || c->nr_tids) && !c->nr_cgroups;
	char tp_why[512] = "";
	int err;

	/* Every switch, with the state it was in: what --state and system-wide need. */
	err = try_source(c, OFFCPU_TRACEPOINT, -1, tp_why, sizeof(tp_why));
	if (!err) {
		*source = OFFCPU_TRACEPOINT;
		return 0;
	}
	if (c->state >= 0 || !per_task) {
		snprintf(why, len, "%s%s", c->state >= 0 ? "--state needs the sched:sched_switch "
							   "tracepoint: " : "", tp_why);
		return err;
	}
	if (!try_source(c, OFFCPU_SWITCH_SAMPLES, target, why, len)) {
		*source = OFFCPU_SWITCH_SAMPLES;
		return 0;
	}
	err = try_source(c, OFFCPU_SWITCHES_ONLY, target, why, len);
	if (err)
		return err;
	*source = OFFCPU_SWITCHES_ONLY;
	snprintf(why, len, "off-CPU time is measured per thread without stacks: "
		 "kernel.perf_event_paranoid is %d, which withholds samples taken in the kernel, "
		 "where every switch is; kernel.perf_event_paranoid=1, CAP_PERFMON or root would "
		 "add them", perf_event_paranoid());
	return 0;
}

int perf_offcpu__new(struct perf_offcpu **out, const struct backend_config *cfg,
		     struct pipeline *p, enum offcpu_source source, const struct perf_event_attr *attr,
		     char *why, size_t len)
{
	struct perf_offcpu *o = calloc(1, sizeof(*o));
	int err;

	*out = NULL;
	if (!o)
		return -ENOMEM;
	o->cfg = cfg;
	o->pipeline = p;
	o->source = source;
	o->sample_type = attr->sample_type;
	o->switch_records = source != OFFCPU_TRACEPOINT;
	o->regs_user = attr->sample_regs_user;
	hashmap__init(&o->off, value_hash, value_equal);
	hashmap__init(&o->last_in, value_hash, value_equal);
	if (source == OFFCPU_TRACEPOINT) {
		err = sched_switch__read(&o->layout, NULL, false, why, len);
		if (err) {
			perf_offcpu__free(o);
			return err;
		}
	}
	*out = o;
	return 0;
}

void perf_offcpu__free(struct perf_offcpu *o)
{
	struct hashmap_entry *ent;
	size_t bkt;

	if (!o)
		return;
	hashmap__for_each(&o->off, bkt, ent)
		free(ent->value);
	hashmap__clear(&o->off);
	hashmap__clear(&o->last_in);
	free(o);
}

/* A field of the tracepoint's record, bounds-checked: 0 when it is not there. */
static uint64_t raw_field(const struct decoded_sample *ds, uint32_t off, uint32_t size)
{
	uint64_t v = 0;

	if (size > sizeof(v) || off > ds->raw_size || size > ds->raw_size - off)
		return 0;
	memcpy(&v, ds->raw + off, size);	/* little-endian: the low bytes */
	return v;
}

/* The thread switched in at time: its interval ends, and is counted. */
static int switch_in(struct perf_offcpu *o, pid_t tid, uint64_t time)
{
	struct thread_off *t;
	uint64_t us;
	struct sample s;
	int err = 0;

	if (!tid)
		return 0;
	/* Remembered so that a switch-out read late (another CPU's ring) is not taken for new. */
	if (hashmap__set(&o->last_in, TID_KEY(tid), (void *)(uintptr_t)time))
		return -ENOMEM;
	t = hashmap__remove(&o->off, TID_KEY(tid));
	if (!t)
		return 0;
	if (time < t->time) {
		o->bad++;
	} else {
		/* -m/-M in whole µs as bcc compares them; the time counted in ns. */
		us = (time - t->time) / 1000;
		if (us >= o->cfg->min_block_us && us <= o->cfg->max_block_us) {
			/*
			 * Read after the thread ran again: where it went on to,
			 * maybe (the exec's own waits got the frames of the
			 * script read at the drain). Shown without them.
			 */
			bool late = t->nr_interp && o->monotonic && t->interp_read > time;

			o->interp_waits += t->nr_interp > 0;
			o->interp_late += late;
			if (t->read_at_switch)
				py_waits__outcome(o->py_waits, time, late);
			if (late) {
				t->nr_interp = 0;
				t->interp_status = INTERP_NONE;
			}
			s = (struct sample){ .pid = t->pid, .tid = t->tid, .cpu = -1,
					     .kernel_ips = t->ips, .nr_kernel = t->nr_kernel,
					     .user_ips = t->ips + t->nr_kernel,
					     .nr_user = t->nr_user, .kernel_err = t->kernel_err,
					     .user_err = t->user_err, .kind = WEIGHT_OFFCPU_NS,
					     .weight = time - t->time,
					     .interp_frames = t->nr_interp ? t->interp : NULL,
					     .nr_interp = t->nr_interp,
					     .interp_status = t->interp_status,
					     /* Its stacks' time: the image, the lifetime it is of. */
					     .time = t->time, .time_end = t->time };
			memcpy(s.comm, t->comm, sizeof(s.comm));
			err = pipeline__count(o->pipeline, &s);
		}
	}
	free(t);
	return err;
}

/*
 * The thread switched out at time with the stacks of s (filters already
 * passed), its interpreted frames read at interp_read.
 */
static int switch_out(struct perf_offcpu *o, struct sample *s, uint64_t time, uint64_t interp_read,
		      bool read_at_switch)
{
	struct thread_off *t = hashmap__find(&o->off, TID_KEY(s->tid));
	uintptr_t in = (uintptr_t)hashmap__find(&o->last_in, TID_KEY(s->tid));

	if (in && time < in) {
		o->reordered++;
		return 0;
	}
	if (!t) {
		t = malloc(sizeof(*t));
		if (!t || hashmap__add(&o->off, TID_KEY(s->tid), t)) {
			free(t);
			return -ENOMEM;
		}
	} else {
		o->missed_in++;		/* away again without having come back: its end is lost */
	}
	t->pid = s->pid;
	t->tid = s->tid;
	t->time = time;
	t->start_at_record = false;
	memcpy(t->comm, s->comm, sizeof(t->comm));
	t->nr_kernel = s->nr_kernel > MAX_STACK_DEPTH ? MAX_STACK_DEPTH : s->nr_kernel;
	t->nr_user = s->nr_user > MAX_STACK_DEPTH ? MAX_STACK_DEPTH : s->nr_user;
	t->kernel_err = s->kernel_err;
	t->user_err = s->user_err;
	sample__copy_ips(s, t->ips, t->nr_kernel, t->nr_user);
	t->nr_interp = s->interp_frames ? s->nr_interp : 0;
	if (t->nr_interp > MAX_INTERP_DEPTH)
		t->nr_interp = MAX_INTERP_DEPTH;
	t->interp_status = s->interp_status;
	t->interp_read = interp_read;
	t->read_at_switch = read_at_switch;
	if (t->nr_interp)
		memcpy(t->interp, s->interp_frames, t->nr_interp * sizeof(t->interp[0]));
	return 0;
}

/* Whether prev's state passes --state, and prev comes back at all (not exiting). */
static bool state_wanted(const struct perf_offcpu *o, uint64_t state)
{
	int want = o->cfg->state;

	if (state & o->layout.exit_states)
		return false;
	state &= o->layout.state_mask;
	if (want < 0)
		return true;
	return want == 0 ? state == 0 : (state & (uint64_t)want) != 0;
}

void perf_offcpu__use_py_waits(struct perf_offcpu *o, struct py_waits *w, bool monotonic)
{
	o->py_waits = w;
	o->monotonic = monotonic;
}

int perf_offcpu__sample(struct perf_offcpu *o, const struct perf_event_header *hdr,
			const struct offcpu_early_interp *early)
{
	uint64_t interp_read = 0;
	bool at_switch = false;
	uint64_t kernel[MAX_STACK_DEPTH], user[MAX_STACK_DEPTH], unwound[MAX_STACK_DEPTH];
	struct interp_frame interp[MAX_INTERP_DEPTH];
	struct decoded_sample ds;
	struct user_snapshot snap;
	struct sample s;
	int err;

	if (decode__sample(hdr, o->sample_type, o->regs_user, &ds))
		return -EBADMSG;
	o->switches++;
	if (ds.id.time > o->last_time)
		o->last_time = ds.id.time;
	if (o->source == OFFCPU_TRACEPOINT) {
		const struct sched_switch_layout *l = &o->layout;
		pid_t next = (pid_t)raw_field(&ds, l->next_pid_off, 4);
		uint64_t state = raw_field(&ds, l->prev_state_off, l->prev_state_size);

		/*
		 * The switch-in is next's, at the same instant as prev's switch-out.
		 * A switch record for it comes later (stamped after the switch's
		 * tracing work, which the kernel charges to next as CPU) and finds
		 * it already in; it only serves the switches out of the idle task
		 * that this kernel sometimes reports with no sched_switch at all.
		 */
		err = switch_in(o, next, ds.id.time);
		if (err || !state_wanted(o, state))
			return err;
	}
	/*
	 * The sample is the switching-out task's (prev: still current at the
	 * switch). Its ids are -1 once exit has released it (perf_event_tid:
	 * no pid left), and it is preempted there often beside a CPU hog: an
	 * exit, not a wait. Stored, all such threads would share one entry,
	 * which no switch-in ends (sched_switch's next_pid is its old tid),
	 * and the next would count as a missed switch-in (issue 36: 2 of 6
	 * runs of blocking preempt 3 beside a hog).
	 */
	if ((pid_t)ds.id.tid < 0 || !pipeline__wants_thread(o->pipeline, ds.id.pid, ds.id.tid))
		return 0;
	perfring__convert_sample(&ds, o->pipeline->procs, kernel, user, &s);
	if (o->regs_user) {
		s.nr_user = 0;
		if (perfring__user_snapshot(&ds, o->regs_user, &snap)) {
			s.user_snapshot = &snap;
			pipeline__unwind_now(o->pipeline, &s, unwound);
		}
	}
	/*
	 * Blocked, the thread's Python stack stays as it was until it runs
	 * again: read by the reader thread as it copied the record, else now
	 * (at the drain, when a short wait may be over).
	 */
	s.read_interp = o->cfg->interp;
	if (s.read_interp && early) {
		s.interp_frames = early->frames;
		s.nr_interp = early->nr;
		s.interp_status = early->status;
		s.read_interp = false;
		interp_read = early->read_ns;
	} else if (s.read_interp && py_waits__take(o->py_waits, s.tid, ds.id.time, interp,
						   &s.nr_interp, &s.interp_status, &interp_read)) {
		s.interp_frames = interp;
		s.read_interp = false;
		at_switch = true;
	}
	pipeline__interp_now(o->pipeline, &s, interp);
	/*
	 * Named now, while the thread waits: its wait is counted at its end,
	 * which may be its process's, and named at the tick after, too late
	 * (a script's last wait under "[python: unreadable]").
	 */
	if (s.interp_frames && s.nr_interp)
		pipeline__interp_name_now(o->pipeline, s.pid, s.interp_frames, s.nr_interp);
	/* The clock only for a read that was made: not on every switch-out of the host. */
	if (s.nr_interp && !interp_read)
		interp_read = (uint64_t)mono_ns();
	/* Walked over the switch-out's own stack copy: as of the switch, never late. */
	if (s.nr_interp && (s.interp_status & INTERP_COPIED))
		interp_read = ds.id.time;
	return switch_out(o, &s, ds.id.time, s.nr_interp ? interp_read : 0, at_switch);
}

/* A sample's own cost, at most, under the slowest emulation we run on: farther, another switch. */
#define SAMPLE_COST_MAX_NS 10000000ull

/*
 * The switch-out record that follows a context-switch sample (the kernel
 * emits the sample, then the record, then stops the thread's cpu-clock
 * event). The sample's time is taken before its callchains are walked and
 * written, which the thread's own cpu-clock event counts as on-CPU: from
 * the sample, each wait would count those microseconds twice, and a
 * thread switching 60,000 times a second (pingpong) read 1.22-1.25 of
 * its wall clock under --wall; from the record, 1.03-1.04.
 */
static void start_at_record(struct perf_offcpu *o, pid_t tid, uint64_t time)
{
	struct thread_off *t = hashmap__find(&o->off, TID_KEY(tid));

	if (t && !t->start_at_record && time >= t->time && time - t->time <= SAMPLE_COST_MAX_NS) {
		t->time = time;
		t->start_at_record = true;
	}
}

int perf_offcpu__switch(struct perf_offcpu *o, pid_t pid, pid_t tid, uint64_t time, bool out)
{
	struct sample s;

	if (time > o->last_time)
		o->last_time = time;
	if (!out)
		return switch_in(o, tid, time);
	/* With samples, the switch-out is the sample, which has the stacks. */
	if (o->source == OFFCPU_SWITCH_SAMPLES) {
		start_at_record(o, tid, time);
		return 0;
	}
	if (o->source != OFFCPU_SWITCHES_ONLY || !pipeline__wants_thread(o->pipeline, pid, tid))
		return 0;
	o->switches++;
	memset(&s, 0, sizeof(s));
	s.pid = pid;
	s.tid = tid;
	snprintf(s.comm, sizeof(s.comm), "%s",
		 proctrack__comm_at(o->pipeline->procs, pid, tid, time));
	/* Stacks withheld (paranoid 2): each part a placeholder, with the reason. */
	s.kernel_err = o->cfg->kernel_stacks ? -EACCES : 0;
	s.user_err = o->cfg->user_stacks ? -EACCES : 0;
	return switch_out(o, &s, time, 0, false);
}

int perf_offcpu__finish(struct perf_offcpu *o, uint64_t end)
{
	struct hashmap_entry *ent;
	size_t bkt;
	int err = 0;

	pid_t *tids;
	size_t n = 0;

	if (o->finished)
		return 0;
	o->finished = true;
	/* switch_in() frees entries: collect the threads first. */
	tids = calloc(o->off.size + 1, sizeof(*tids));
	if (!tids)
		return -ENOMEM;
	hashmap__for_each(&o->off, bkt, ent)
		if (((struct thread_off *)ent->value)->time <= end)
			tids[n++] = ((struct thread_off *)ent->value)->tid;
	for (size_t i = 0; i < n && !err; i++) {
		o->still_off++;
		err = switch_in(o, tids[i], end);
	}
	free(tids);
	return err;
}

void perf_offcpu__use_switch_records(struct perf_offcpu *o, bool yes)
{
	o->switch_records = yes || o->source != OFFCPU_TRACEPOINT;
}

uint64_t perf_offcpu__last_time(const struct perf_offcpu *o)
{
	return o->last_time;
}

void perf_offcpu__stats(const struct perf_offcpu *o, struct backend_stats *st)
{
	st->switches += o->switches;
	st->offcpu_bad_intervals += o->bad + o->reordered;
	st->offcpu_missed_switch_in += o->missed_in;
	st->offcpu_still_off += o->still_off;
	st->offcpu_interp_waits += o->interp_waits;
	st->offcpu_interp_late += o->interp_late;
}
