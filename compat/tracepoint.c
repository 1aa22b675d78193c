// SPDX-License-Identifier: GPL-2.0
#include "compat/tracepoint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define TRACEFS_DIR "/sys/kernel/tracing"
#define DEBUGFS_DIR "/sys/kernel/debug"
/* A format file is a few KiB; anything near this is not one. */
#define FORMAT_MAX_SIZE (1 << 20)

static void say(char *reason, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(char *reason, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (!reason || !size)
		return;
	va_start(ap, fmt);
	vsnprintf(reason, size, fmt, ap);
	va_end(ap);
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

static bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

static const char *skip_space(const char *p, const char *end)
{
	while (p < end && is_space(*p))
		p++;
	return p;
}

static bool starts_with(const char *p, const char *end, const char *prefix)
{
	size_t n = strlen(prefix);

	return (size_t)(end - p) >= n && !memcmp(p, prefix, n);
}

/* Copy [p, end) into dst (NUL-terminated); false if it does not fit. */
static bool copy_str(char *dst, size_t size, const char *p, const char *end)
{
	size_t n = end - p;

	if (n >= size)
		return false;
	memcpy(dst, p, n);
	dst[n] = '\0';
	return true;
}

/* A decimal number below 2^32 at *pp; advances *pp past it. */
static bool parse_u32(const char **pp, const char *end, uint32_t *val)
{
	const char *p = *pp;
	uint64_t v = 0;

	if (p >= end || *p < '0' || *p > '9')
		return false;
	while (p < end && *p >= '0' && *p <= '9') {
		v = v * 10 + (*p++ - '0');
		if (v > UINT32_MAX)
			return false;
	}
	*pp = p;
	*val = (uint32_t)v;
	return true;
}

/* A C integer literal (decimal or 0x hex, optional U/L suffixes) below 2^64. */
static bool parse_u64_literal(const char **pp, const char *end, uint64_t *val)
{
	const char *p = *pp;
	unsigned int base = 10, digits = 0;
	uint64_t v = 0;

	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	for (; p < end; p++, digits++) {
		unsigned int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (base == 16 && *p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (base == 16 && *p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			break;
		if (v > (UINT64_MAX - d) / base)
			return false;
		v = v * base + d;
	}
	if (!digits)
		return false;
	while (p < end && (*p == 'u' || *p == 'U' || *p == 'l' || *p == 'L'))
		p++;
	if (p < end && is_ident(*p))
		return false;
	*pp = p;
	*val = v;
	return true;
}

/*
 * "TYPE NAME" or "TYPE NAME[N]" of [p, end) into f. -EINVAL if malformed;
 * 1 if the name does not fit (the field is left out).
 */
static int parse_decl(struct tp_field *f, const char *p, const char *end)
{
	const char *name, *name_end, *suffix, *type_end, *q;
	size_t n = 0;

	p = skip_space(p, end);
	while (end > p && is_space(end[-1]))
		end--;
	suffix = end;
	if (end > p && end[-1] == ']') {
		suffix = memrchr(p, '[', end - p);
		if (!suffix)
			return -EINVAL;
	}
	name_end = suffix;
	while (name_end > p && is_space(name_end[-1]))
		name_end--;
	name = name_end;
	while (name > p && is_ident(name[-1]))
		name--;
	type_end = name;
	while (type_end > p && is_space(type_end[-1]))
		type_end--;
	/* A C identifier after the type: "int a", "char *a", not "a[4" or "int 4". */
	if (name == name_end || type_end == p || (*name >= '0' && *name <= '9') ||
	    (type_end == name && name[-1] != '*'))
		return -EINVAL;
	if (!copy_str(f->name, sizeof(f->name), name, name_end))
		return 1;
	/* The type is only informative: truncated if need be. */
	for (q = p; q < type_end && n < sizeof(f->type) - 1; q++)
		f->type[n++] = *q;
	for (q = suffix; q < end && n < sizeof(f->type) - 1; q++)
		f->type[n++] = *q;
	f->type[n] = '\0';
	return 0;
}

/* One "field:DECL; offset:N; size:N; signed:N;" line (p after "field:"). */
static int parse_field(struct tp_format *fmt, const char *p, const char *end, char *reason,
		       size_t reason_size)
{
	const char *semi = memchr(p, ';', end - p);
	bool have_offset = false, have_size = false;
	struct tp_field f;
	int err;

	memset(&f, 0, sizeof(f));
	/* Text files have none; the strings below would end early. */
	if (memchr(p, '\0', end - p)) {
		say(reason, reason_size, "NUL byte in a field line");
		return -EINVAL;
	}
	if (!semi) {
		say(reason, reason_size, "field line without ';'");
		return -EINVAL;
	}
	err = parse_decl(&f, p, semi);
	if (err < 0) {
		say(reason, reason_size, "field declaration '%.*s' is not 'TYPE NAME'",
		    (int)(semi - p > 64 ? 64 : semi - p), p);
		return err;
	}
	for (p = skip_space(semi + 1, end); p < end; p = skip_space(p, end)) {
		const char *colon = memchr(p, ':', end - p);
		const char *key = p;
		uint32_t v;

		if (!colon) {
			say(reason, reason_size, "field %s: '%.*s' is not 'key:value;'", f.name,
			    (int)(end - p > 32 ? 32 : end - p), p);
			return -EINVAL;
		}
		p = colon + 1;
		if (!parse_u32(&p, end, &v) || p >= end || *p != ';') {
			say(reason, reason_size, "field %s: %.*s is not a number below 2^32",
			    f.name, (int)(colon - key > 32 ? 32 : colon - key), key);
			return -EINVAL;
		}
		p++;
		if (colon - key == 6 && !memcmp(key, "offset", 6)) {
			f.offset = v;
			have_offset = true;
		} else if (colon - key == 4 && !memcmp(key, "size", 4)) {
			f.size = v;
			have_size = true;
		} else if (colon - key == 6 && !memcmp(key, "signed", 6)) {
			f.is_signed = v != 0;
		}
		/* Other keys (none so far) are for others. */
	}
	if (!have_offset || !have_size) {
		say(reason, reason_size, "field %s: no %s", f.name,
		    have_offset ? "size" : "offset");
		return -EINVAL;
	}
	if (f.offset > TP_MAX_RECORD || f.size > TP_MAX_RECORD - f.offset) {
		say(reason, reason_size, "field %s: offset %u size %u beyond a record's %u bytes",
		    f.name, f.offset, f.size, TP_MAX_RECORD);
		return -EINVAL;
	}
	if (err == 1)
		return 0;	/* a name longer than any we look up */
	if (fmt->nr_fields >= TP_MAX_FIELDS) {
		say(reason, reason_size, "more than %d fields", TP_MAX_FIELDS);
		return -E2BIG;
	}
	fmt->fields[fmt->nr_fields++] = f;
	return 0;
}

/* Every { NUMBER, "NAME" } of the print fmt (p to end): __print_flags/__print_symbolic. */
static void parse_flags(struct tp_format *fmt, const char *p, const char *end)
{
	while (fmt->nr_flags < TP_MAX_FLAGS && (p = memchr(p, '{', end - p))) {
		struct tp_flag fl;
		const char *q = skip_space(p + 1, end), *name;

		p++;
		if (!parse_u64_literal(&q, end, &fl.value))
			continue;
		q = skip_space(q, end);
		if (q >= end || *q++ != ',')
			continue;
		q = skip_space(q, end);
		if (q >= end || *q++ != '"')
			continue;
		name = q;
		q = memchr(q, '"', end - q);
		if (!q || !copy_str(fl.name, sizeof(fl.name), name, q))
			continue;
		q = skip_space(q + 1, end);
		if (q >= end || *q != '}')
			continue;
		fmt->flags[fmt->nr_flags++] = fl;
		p = q + 1;
	}
}

int tp_format__parse(struct tp_format *fmt, const char *text, size_t len, char *reason,
		     size_t reason_size)
{
	const char *p = text, *end = text + len;
	int err;

	memset(fmt, 0, sizeof(*fmt));
	fmt->id = -1;
	while (p < end) {
		const char *eol = memchr(p, '\n', end - p), *q;

		if (!eol)
			eol = end;
		q = skip_space(p, eol);
		if (starts_with(q, eol, "field:")) {
			err = parse_field(fmt, q + 6, eol, reason, reason_size);
			if (err)
				return err;
		} else if (starts_with(q, eol, "name:")) {
			const char *n = skip_space(q + 5, eol), *ne = eol;

			while (ne > n && is_space(ne[-1]))
				ne--;
			if (!copy_str(fmt->name, sizeof(fmt->name), n, ne))
				fmt->name[0] = '\0';
		} else if (starts_with(q, eol, "ID:")) {
			uint32_t id;

			q = skip_space(q + 3, eol);
			if (!parse_u32(&q, eol, &id) || id > INT32_MAX) {
				say(reason, reason_size, "ID is not a number");
				return -EINVAL;
			}
			fmt->id = (int)id;
		} else if (starts_with(q, eol, "print fmt:")) {
			parse_flags(fmt, q, eol);
		}
		p = eol + (eol < end);
	}
	if (!fmt->nr_fields) {
		say(reason, reason_size, "no field");
		return -EINVAL;
	}
	return 0;
}

const struct tp_field *tp_format__field(const struct tp_format *fmt, const char *name)
{
	for (unsigned int i = 0; i < fmt->nr_fields; i++)
		if (!strcmp(fmt->fields[i].name, name))
			return &fmt->fields[i];
	return NULL;
}

int tp_format__flag(const struct tp_format *fmt, const char *name, uint64_t *value)
{
	for (unsigned int i = 0; i < fmt->nr_flags; i++) {
		if (!strcmp(fmt->flags[i].name, name)) {
			*value = fmt->flags[i].value;
			return 0;
		}
	}
	return -ENOENT;
}

/* Undo /proc/mounts' octal escapes (\040 for a space) in place. */
static void unescape_mount(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

/* 0 if dir/events is a directory, else -errno (-EACCES: tracefs is root's, mode 0700). */
static int events_dir(const char *dir)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/events", dir);
	if (stat(path, &st))
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

static bool has_events(const char *dir)
{
	return events_dir(dir) == 0;
}

static int set_path(char *path, size_t size, const char *dir)
{
	if ((size_t)snprintf(path, size, "%s", dir) >= size)
		return -ENAMETOOLONG;
	return 0;
}

/*
 * A mounted tracefs (or debugfs's tracing directory) from /proc/mounts: 0,
 * -ENOENT, or -EACCES with the directory in path when it is mounted but
 * this process may not look into it.
 */
static int find_mounted(char *path, size_t size)
{
	char line[4096], tracefs[4096] = "", debugfs[4096] = "";
	FILE *f = fopen("/proc/mounts", "re");
	int err;

	if (!f) {
		/* No /proc: the usual places, if something is mounted there. */
		if (has_events(TRACEFS_DIR))
			return set_path(path, size, TRACEFS_DIR);
		if (has_events(DEBUGFS_DIR "/tracing"))
			return set_path(path, size, DEBUGFS_DIR "/tracing");
		return -ENOENT;
	}
	while (fgets(line, sizeof(line), f)) {
		char mnt[4096], type[64];

		if (sscanf(line, "%*s %4095s %63s", mnt, type) != 2)
			continue;
		unescape_mount(mnt);
		if (!strcmp(type, "tracefs") && (!tracefs[0] || !strcmp(mnt, TRACEFS_DIR)))
			snprintf(tracefs, sizeof(tracefs), "%s", mnt);
		else if (!strcmp(type, "debugfs") && !debugfs[0])
			snprintf(debugfs, sizeof(debugfs), "%.4080s/tracing", mnt);
	}
	fclose(f);
	if (tracefs[0]) {
		err = events_dir(tracefs);
		if (!err || err == -EACCES || err == -EPERM)
			return set_path(path, size, tracefs) ?: (err ? -EACCES : 0);
	}
	/* Since 4.1 tracefs is mounted there on first access. */
	if (debugfs[0]) {
		err = events_dir(debugfs);
		if (!err || err == -EACCES || err == -EPERM)
			return set_path(path, size, debugfs) ?: (err ? -EACCES : 0);
	}
	return -ENOENT;
}

int tracefs__find(char *path, size_t size, bool mount_it, char *reason, size_t reason_size)
{
	int err, tracefs_err, debugfs_err;

	err = find_mounted(path, size);
	if (err == -EACCES) {
		say(reason, reason_size, "tracefs at %s: %s (root only)", path, strerror(-err));
		return err;
	}
	if (err != -ENOENT) {
		if (err)
			say(reason, reason_size, "tracefs path too long");
		return err;
	}
	if (!mount_it) {
		say(reason, reason_size, "tracefs is not mounted (mount -t tracefs nodev %s)",
		    TRACEFS_DIR);
		return -ENOENT;
	}
	tracefs_err = mount("nodev", TRACEFS_DIR, "tracefs", 0, NULL) ? errno : ENOENT;
	if (has_events(TRACEFS_DIR))
		return set_path(path, size, TRACEFS_DIR);
	if (tracefs_err == EPERM || tracefs_err == EACCES) {
		say(reason, reason_size, "tracefs is not mounted and mounting it at %s: %s",
		    TRACEFS_DIR, strerror(tracefs_err));
		return -tracefs_err;
	}
	/* Before 4.1 (no tracefs, no /sys/kernel/tracing) tracing lives in debugfs. */
	debugfs_err = mount("nodev", DEBUGFS_DIR, "debugfs", 0, NULL) ? errno : ENOENT;
	if (has_events(DEBUGFS_DIR "/tracing"))
		return set_path(path, size, DEBUGFS_DIR "/tracing");
	say(reason, reason_size,
	    "tracefs is not mounted and mounting it failed (tracefs at %s: %s; debugfs at %s: %s)",
	    TRACEFS_DIR, strerror(tracefs_err), DEBUGFS_DIR, strerror(debugfs_err));
	if (debugfs_err == EPERM || debugfs_err == EACCES)
		return -debugfs_err;
	return -ENODEV;
}

/* The whole file into a new NUL-terminated buffer: its length, or -errno. */
static ssize_t read_file(const char *path, char **out)
{
	size_t len = 0, cap = 8192;
	char *buf = malloc(cap + 1);
	ssize_t n, err;
	int fd;

	if (!buf)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto err_out;
	}
	while ((n = read(fd, buf + len, cap - len)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto err_close;
		}
		len += n;
		if (len == cap) {
			char *nb;

			if (cap >= FORMAT_MAX_SIZE) {
				err = -EFBIG;
				goto err_close;
			}
			cap *= 2;
			nb = realloc(buf, cap + 1);
			if (!nb) {
				err = -ENOMEM;
				goto err_close;
			}
			buf = nb;
		}
	}
	close(fd);
	buf[len] = '\0';
	*out = buf;
	return (ssize_t)len;
err_close:
	close(fd);
err_out:
	free(buf);
	return err;
}

int tracepoint__read(const char *dir, const char *category, const char *name,
		     struct tp_format *fmt, char *reason, size_t reason_size)
{
	char path[4096], *text = NULL, why[192] = "";
	const char *what = "id";
	ssize_t len;
	uint32_t id = 0;
	int err;

	snprintf(path, sizeof(path), "%s/events/%s/%s/id", dir, category, name);
	len = read_file(path, &text);
	if (len >= 0) {
		const char *p = skip_space(text, text + len);

		if (!parse_u32(&p, text + len, &id) || id > INT32_MAX) {
			free(text);
			say(reason, reason_size, "%s: not a tracepoint id", path);
			return -EINVAL;
		}
		free(text);
		what = "format";
		snprintf(path, sizeof(path), "%s/events/%s/%s/format", dir, category, name);
		len = read_file(path, &text);
	}
	if (len < 0) {
		err = (int)len;
		if (err == -ENOENT)
			say(reason, reason_size, "tracepoint %s:%s not found in %s/events",
			    category, name, dir);
		else if (err == -EACCES || err == -EPERM)
			say(reason, reason_size,
			    "tracepoint %s:%s: reading its %s: %s (needs root)", category, name,
			    what, strerror(-err));
		else
			say(reason, reason_size, "tracepoint %s:%s: reading %s: %s", category, name,
			    path, strerror(-err));
		return err;
	}
	err = tp_format__parse(fmt, text, len, why, sizeof(why));
	free(text);
	if (err) {
		say(reason, reason_size, "%s: %s", path, why);
		return err;
	}
	fmt->id = (int)id;
	return 0;
}

static int want_field(const struct tp_format *fmt, const char *name, uint32_t size1,
		      uint32_t size2, const struct tp_field **out, char *reason, size_t reason_size)
{
	const struct tp_field *f = tp_format__field(fmt, name);

	if (!f) {
		say(reason, reason_size, "sched_switch has no field %s", name);
		return -EINVAL;
	}
	if (f->size != size1 && f->size != size2) {
		say(reason, reason_size, "sched_switch field %s has size %u", name, f->size);
		return -EINVAL;
	}
	*out = f;
	return 0;
}

int sched_switch__layout(const struct tp_format *fmt, struct sched_switch_layout *layout,
			 char *reason, size_t reason_size)
{
	static const char *const exit_letters[] = { "X", "Z", "x" };
	const struct tp_field *prev_pid, *next_pid, *prev_state;
	uint64_t v;
	int err;

	memset(layout, 0, sizeof(*layout));
	err = want_field(fmt, "prev_pid", 4, 4, &prev_pid, reason, reason_size);
	if (!err)
		err = want_field(fmt, "next_pid", 4, 4, &next_pid, reason, reason_size);
	if (!err)
		err = want_field(fmt, "prev_state", 4, 8, &prev_state, reason, reason_size);
	if (err)
		return err;
	/* Offset 0 is the common header's: the program reads it as "not set". */
	if (!next_pid->offset) {
		say(reason, reason_size, "sched_switch field next_pid at offset 0");
		return -EINVAL;
	}
	layout->prev_pid_off = prev_pid->offset;
	layout->next_pid_off = next_pid->offset;
	layout->prev_state_off = prev_state->offset;
	layout->prev_state_size = prev_state->size;
	/* The format's one table is the state letters' (the marker is not in it). */
	for (unsigned int i = 0; i < fmt->nr_flags; i++)
		layout->state_mask |= fmt->flags[i].value;
	if (!layout->state_mask)
		layout->state_mask = 0xff;
	for (size_t i = 0; i < sizeof(exit_letters) / sizeof(exit_letters[0]); i++)
		if (!tp_format__flag(fmt, exit_letters[i], &v))
			layout->exit_states |= v;
	return 0;
}

int sched_switch__read(struct sched_switch_layout *layout, int *id, bool mount, char *why,
		       size_t len)
{
	struct tp_format *fmt = calloc(1, sizeof(*fmt));
	char dir[4096], reason[256] = "";
	int err;

	if (!fmt) {
		snprintf(why, len, "sched:sched_switch: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	err = tracefs__find(dir, sizeof(dir), mount, reason, sizeof(reason));
	if (!err)
		err = tracepoint__read(dir, "sched", "sched_switch", fmt, reason, sizeof(reason));
	if (!err)
		err = sched_switch__layout(fmt, layout, reason, sizeof(reason));
	if (!err && id)
		*id = fmt->id;
	if (err)
		snprintf(why, len, "sched:sched_switch: %s", reason[0] ? reason : strerror(-err));
	free(fmt);
	return err;
}
