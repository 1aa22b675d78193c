/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoint metadata from tracefs: where tracefs is (mounting it if need
 * be, as perf does), an event's id and its record layout. A BPF tracepoint
 * program needs the id to attach on kernels without raw tracepoints (before
 * 4.17) and the field offsets, which differ across kernels, to read the
 * record without BTF.
 */
#ifndef COMPAT_TRACEPOINT_H
#define COMPAT_TRACEPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TP_NAME_LEN 64
#define TP_MAX_FIELDS 64
#define TP_MAX_FLAGS 64
/* A perf trace record is at most 64 KiB: no field lies beyond. */
#define TP_MAX_RECORD 65536

/* One "field:TYPE NAME; offset:N; size:N; signed:N;" line. */
struct tp_field {
	char name[TP_NAME_LEN];		/* without an array suffix: "prev_comm" */
	char type[TP_NAME_LEN];		/* as written, array suffix included: "char[16]" */
	uint32_t offset;
	uint32_t size;
	bool is_signed;			/* false where the kernel does not say (before 2.6.32) */
};

/* A { VALUE, "NAME" } entry of the print fmt's flag and symbol tables. */
struct tp_flag {
	uint64_t value;
	char name[16];
};

struct tp_format {
	char name[TP_NAME_LEN];		/* "name:" line, "" if absent */
	int id;				/* "ID:" line, -1 if absent */
	unsigned int nr_fields;
	struct tp_field fields[TP_MAX_FIELDS];
	/* Up to TP_MAX_FLAGS table entries; more, or entries with no plain number, are left out. */
	unsigned int nr_flags;
	struct tp_flag flags[TP_MAX_FLAGS];
};

/*
 * Parse the text of an event's format file (len bytes, no NUL needed).
 * Returns 0, -EINVAL on a malformed field line (or no field at all), or
 * -E2BIG beyond TP_MAX_FIELDS fields; a one-line reason in reason.
 */
int tp_format__parse(struct tp_format *fmt, const char *text, size_t len, char *reason,
		     size_t reason_size);
/* The field called name, or NULL. */
const struct tp_field *tp_format__field(const struct tp_format *fmt, const char *name);
/* The value of the first table entry called name: 0, or -ENOENT. */
int tp_format__flag(const struct tp_format *fmt, const char *name, uint64_t *value);

/*
 * The tracefs directory into path: a tracefs mount from /proc/mounts
 * (/sys/kernel/tracing first), else debugfs's tracing directory, else, if
 * mount is set, tracefs newly mounted at /sys/kernel/tracing (debugfs at
 * /sys/kernel/debug before 4.1, which has no tracefs). Returns 0, or -errno
 * with a one-line reason: -ENOENT (not mounted, mount not asked), -EACCES
 * (mounted, but not readable by this process: path holds it), -EPERM/-EACCES
 * (mount not permitted), -ENODEV (neither filesystem in this kernel).
 */
int tracefs__find(char *path, size_t size, bool mount, char *reason, size_t reason_size);

/*
 * Read events/CATEGORY/NAME/{id,format} under the tracefs directory dir into
 * fmt (fmt->id from the id file). Returns 0, or -errno with a one-line
 * reason: -ENOENT (no such tracepoint), -EACCES/-EPERM (not permitted), or
 * the parser's errors.
 */
int tracepoint__read(const char *dir, const char *category, const char *name,
		     struct tp_format *fmt, char *reason, size_t reason_size);

/* What an off-CPU program needs of sched:sched_switch. */
struct sched_switch_layout {
	uint32_t prev_pid_off;
	uint32_t next_pid_off;
	uint32_t prev_state_off;
	uint32_t prev_state_size;	/* 4 or 8 */
	/*
	 * The task-state bits of prev_state: the values of the print fmt's
	 * state letters ("S", "D", ...), so not the "preempted" marker above
	 * them; 0xff if the format has no table.
	 */
	uint64_t state_mask;
	/* The letters of a thread that exited: "X", "Z" (4.14+), "x" (TASK_DEAD, before). */
	uint64_t exit_states;
};

/*
 * The layout from sched_switch's format: 0, or -EINVAL with a reason when a
 * field is missing or of a size the program cannot read.
 */
int sched_switch__layout(const struct tp_format *fmt, struct sched_switch_layout *layout,
			 char *reason, size_t reason_size);

/*
 * All of the above for sched:sched_switch: find tracefs (mounting it when
 * mount is set), read the event, take its layout; *id is the event's id
 * for perf_event_open. Returns 0, or -errno with a one-line reason.
 */
int sched_switch__read(struct sched_switch_layout *layout, int *id, bool mount, char *why,
		       size_t len);

#endif
