// SPDX-License-Identifier: GPL-2.0
/* What the Python integration suites share (pyrun.h). */
#include "tests/integration/python/pyrun.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/python/pyenv.h"

#define TRUNCATED "[python: truncated]"
#define UNREADABLE "[python: unreadable]"
/* The walk's bound: deeper stacks keep their innermost frames and the mark (bpf/python_maps.h). */
#define MAX_PY_FRAMES 128

const char *pyt_workload(const char *name)
{
	static char paths[4][600];
	static int next;
	const char *src = getenv("PROFILE_SRCDIR");
	char *p = paths[next++ % 4];

	snprintf(p, sizeof(paths[0]), "%s/tests/workloads/python/%s", src ? src : ".", name);
	return p;
}

const char *pyt_interpreter(const char *suite, const char *minor, char *path, size_t len)
{
	const char *p = py_test_interpreter(minor, path, len);

	if (!p)
		fprintf(stderr, "%s: Python %s is not installed here: its tests are skipped\n",
			suite, minor);
	return p;
}

const char *pyt_default(char *path, size_t len, const char **minor)
{
	static const char *const order[] = { "3.12", "3.13", "3.11", "3.10", "3.9",
					     "3.8",  "3.7",  "3.6",  "debian" };

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (py_test_interpreter(order[i], path, len)) {
			*minor = order[i];
			return path;
		}
	fprintf(stderr, "python: no Python 3 interpreter installed here: skipped\n");
	return NULL;
}

const char *pyt_version(const char *minor)
{
	return strcmp(minor, "debian") ? minor : "3.11";
}

bool pyt_at_least(const char *minor, int major, int min)
{
	int a = 0, b = 0;

	sscanf(pyt_version(minor), "%d.%d", &a, &b);
	return a > major || (a == major && b >= min);
}

void pyt_comm(const char *interpreter, char *comm, size_t len)
{
	const char *base = strrchr(interpreter, '/');

	snprintf(comm, len, "%.15s", base ? base + 1 : interpreter);
}

struct run_result pyt_r;
char pyt_dir[64];

void pyt_setup(void)
{
	pyt_mkdir(pyt_dir);
}

void pyt_teardown(void)
{
	run_result_free(&pyt_r);
	pyt_rmdir(pyt_dir);
	unsetenv("PROFILE_TRUTH");
}

static bool bug_known(unsigned int bug);

/* Whether every failure in fails is a stack never seen ("0 of 0 stacks exact"). */
static bool only_unseen(const char *fails)
{
	bool any = false;

	for (const char *l = fails; *l;) {
		const char *end = strchrnul(l, '\n');
		bool header = end - l > 0 && l[end - l - 1] == ':';

		if (end > l && !header) {
			if (!memmem(l, (size_t)(end - l), " 0 of 0 stacks exact", 20))
				return false;
			any = true;
		}
		l = *end ? end + 1 : end;
	}
	return any;
}

/*
 * Runs whose failures are open bugs of issue 35 as a whole (see pyrun.h):
 * 6, pyframes on the perf backend; 7, pyshares' app.py on the perf backend.
 */
static unsigned int open_bug(const char *suite, const char *what, const char *be,
			     const char *fails)
{
	if (!strcmp(suite, "pyframes") && !strcmp(be, "perf"))
		return 6;
	if (!strcmp(suite, "pyshares") && !strncmp(what, "app", 3) && !strcmp(be, "perf"))
		return 7;
	if (!strcmp(suite, "pyframes") && only_unseen(fails) &&
	    strstr(pyt_r.err, "their thread was not known yet"))
		return 8;
	return 0;
}

void pyt_done(const char *suite, const char *what, const char *be, const char *tag,
	      const char *fails)
{
	unsigned int bug = open_bug(suite, what, be, fails);
	char name[128];

	if (!fails[0])
		return;
	snprintf(name, sizeof(name), "%s-%s-%s", suite, what, be);
	pyt_keep(name, &pyt_r, pyt_dir);
	if (bug && bug_known(bug)) {
		fprintf(stderr, "KNOWN (issue 35 bug %u): %s:\n%s", bug, tag, fails);
		return;
	}
	ck_abort_msg("%s:\n%s-v: %.2000s", tag, fails, pyt_r.err);
}

void pyt_mkdir(char dir[64])
{
	snprintf(dir, 64, "/tmp/profile-python-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

/* dir and what it holds (the tests make files and one level of directories). */
void pyt_rmdir(const char *dir)
{
	struct dirent *de;
	char path[600];
	DIR *d;

	if (!dir[0])
		return;
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (de->d_type == DT_DIR)
			pyt_rmdir(path);
		else
			unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

const char *pyt_short_file(const char *path)
{
	static const char *const dirs[] = { "site-packages/", "dist-packages/" };
	const char *best = NULL, *slash;

	for (size_t i = 0; i < 2; i++)
		for (const char *p = strstr(path, dirs[i]); p; p = strstr(p + 1, dirs[i]))
			if (!best || p + strlen(dirs[i]) > best)
				best = p + strlen(dirs[i]);
	if (best)
		return best;
	slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* "name|file|line": split in place (names and files hold no '|' in these workloads). */
static int parse_frame(char *s, struct pyt_frame *f)
{
	char *bar1 = strchr(s, '|'), *bar2 = bar1 ? strrchr(bar1 + 1, '|') : NULL;

	if (!bar1 || !bar2)
		return -EINVAL;
	*bar1 = *bar2 = '\0';
	f->name = strdup(s);
	f->file = strdup(bar1 + 1);
	f->line = atoi(bar2 + 1);
	return f->name && f->file ? 0 : -ENOMEM;
}

int pyt_read_truth(const char *path, struct pyt_stack *out, size_t max)
{
	FILE *f = fopen(path, "re");
	char *line = NULL, *save;
	size_t cap = 0, nr = 0;

	if (!f)
		return -errno;
	while (nr < max && getline(&line, &cap, f) > 0) {
		struct pyt_stack *s = &out[nr];
		char *tab = strchr(line, '\t');

		line[strcspn(line, "\n")] = '\0';
		if (!tab || !strncmp(line, "time\t", 5))
			continue;
		*tab = '\0';
		memset(s, 0, sizeof(*s));
		snprintf(s->label, sizeof(s->label), "%s", line);
		for (char *t = strtok_r(tab + 1, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
			s->frames = realloc(s->frames, (s->nr + 1) * sizeof(*s->frames));
			ck_assert_ptr_nonnull(s->frames);
			ck_assert_msg(!parse_frame(t, &s->frames[s->nr]), "%s: bad frame %s", path,
				      t);
			s->nr++;
		}
		if (s->nr)
			nr++;
	}
	free(line);
	fclose(f);
	return (int)nr;
}

void pyt_truth_free(struct pyt_stack *s, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		for (size_t j = 0; j < s[i].nr; j++) {
			free(s[i].frames[j].name);
			free(s[i].frames[j].file);
		}
		free(s[i].frames);
		s[i].frames = NULL;
		s[i].nr = 0;
	}
}

const struct pyt_stack *pyt_find(const struct pyt_stack *s, size_t nr, const char *label)
{
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(s[i].label, label))
			return &s[i];
	return NULL;
}

bool pyt_is_python_frame(const char *f, size_t len)
{
	const char *open;

	if (len > 9 && !memcmp(f, "[python: ", 9) && f[len - 1] == ']')
		return true;
	/* "name (file:LINE)", or "name (file)" where the line could not be told. */
	if (len < 5 || f[len - 1] != ')')
		return false;
	open = memrchr(f, '(', len);
	return open && open > f + 1 && open[-1] == ' ' && open + 2 < f + len;
}

bool pyt_has_line(const char *f, size_t len)
{
	size_t i;

	for (i = len - 1; i > 0 && f[i - 1] >= '0' && f[i - 1] <= '9'; i--)
		;
	return i < len - 1 && i > 1 && f[i - 1] == ':';
}

/* One folded line: its frames (comm first) and its count. */
struct line {
	const char **frame;
	size_t *len, nr, cap;
	uint64_t count;
};

/* The line at s into l; returns where the next starts, NULL at the end. */
static const char *next_line(const char *s, struct line *l)
{
	const char *nl, *sp, *p;
	size_t n;

	if (!s || !*s)
		return NULL;
	nl = strchr(s, '\n');
	n = nl ? (size_t)(nl - s) : strlen(s);
	sp = memrchr(s, ' ', n);
	l->nr = 0;
	l->count = sp ? strtoull(sp + 1, NULL, 10) : 0;
	for (p = s; sp && p <= sp;) {
		const char *semi = memchr(p, ';', sp - p);
		const char *end = semi ? semi : sp;

		if (l->nr == l->cap) {
			l->cap = l->cap ? 2 * l->cap : 256;
			l->frame = realloc(l->frame, l->cap * sizeof(*l->frame));
			l->len = realloc(l->len, l->cap * sizeof(*l->len));
			ck_assert(l->frame && l->len);
		}
		l->frame[l->nr] = p;
		l->len[l->nr++] = end - p;
		p = end + 1;
	}
	return nl ? nl + 1 : s + n;
}

static void line_free(struct line *l)
{
	free(l->frame);
	free(l->len);
}

/* The index of the line's innermost Python frame, or -1. */
static long innermost(const struct line *l)
{
	for (size_t i = l->nr; i-- > 1;)
		if (pyt_is_python_frame(l->frame[i], l->len[i]))
			return (long)i;
	return -1;
}

static bool frame_is(const struct line *l, size_t i, const char *want)
{
	return l->len[i] == strlen(want) && !memcmp(l->frame[i], want, l->len[i]);
}

/* Whether the n bytes at s are digits and ')' (a frame's line and its end). */
static bool line_end(const char *s, size_t n)
{
	if (n < 2 || s[n - 1] != ')')
		return false;
	for (size_t j = 0; j < n - 1; j++)
		if (s[j] < '0' || s[j] > '9')
			return false;
	return true;
}

/* Whether frame i starts with s (NUL-terminated); s's length into n. */
static bool starts(const struct line *l, size_t i, const char *s, size_t *n)
{
	*n = strlen(s);
	return l->len[i] >= *n && !memcmp(l->frame[i], s, *n);
}

/* Whether frame i is of the function f, at any line: "name (short:LINE)"; with PYT_BUG4 "name (short)" too. */
static bool frame_of(const struct line *l, size_t i, const struct pyt_frame *f,
		     unsigned int tolerate)
{
	const char *fr = l->frame[i];
	char *s;
	size_t n;
	bool ok;

	ck_assert_int_ge(asprintf(&s, "%s (%s:", f->name, pyt_short_file(f->file)), 0);
	ok = starts(l, i, s, &n) && line_end(fr + n, l->len[i] - n);
	s[n - 1] = ')';
	if (!ok && (tolerate & PYT_BUG4))
		ok = frame_is(l, i, s);
	free(s);
	return ok;
}

/*
 * Whether frame i is f at its line (want: "name (short:LINE)"), or what
 * the bugs in tolerate make of it: 4, "name (short)" or "[python: unreadable]".
 */
static bool frame_at(const struct line *l, size_t i, const char *want, const struct pyt_frame *f,
		     unsigned int tolerate)
{
	if (frame_is(l, i, want))
		return true;
	return (tolerate & PYT_BUG4) &&
	       (frame_is(l, i, UNREADABLE) ||
		(frame_of(l, i, f, PYT_BUG4) && !pyt_has_line(l->frame[i], l->len[i])));
}

/*
 * Bug 4 at a stack's leaf: frame in "[python: unreadable]", nr frames
 * after a frame of root (the workloads' frames unnamed under inturn.py's).
 */
static bool unnamed_leaf(const struct line *l, long in, const struct pyt_frame *root, size_t nr)
{
	return frame_is(l, in, UNREADABLE) && (size_t)in >= nr &&
	       frame_of(l, in + 1 - nr, root, PYT_BUG4);
}

void pyt_match(const char *folded, const struct pyt_stack *t, struct pyt_match *m)
{
	pyt_match_tolerant(folded, t, 0, NULL, m);
}

/* Whether f is one of the recorded functions that C code calls (c_called, NULL-terminated). */
static bool called_by_c(const char *const *c_called, const struct pyt_frame *f)
{
	for (; c_called && *c_called; c_called++)
		if (!strcmp(*c_called, f->name))
			return true;
	return false;
}

void pyt_match_tolerant(const char *folded, const struct pyt_stack *t, unsigned int tolerate,
			const char *const *c_called, struct pyt_match *m)
{
	bool cut = t->nr > MAX_PY_FRAMES;
	/* The frames expected before the leaf, root first. */
	size_t first = cut ? t->nr - MAX_PY_FRAMES : 0, nr_want = t->nr - 1 - first + cut;
	char **want = calloc(nr_want ? nr_want : 1, sizeof(*want));
	const struct pyt_frame **of = calloc(nr_want ? nr_want : 1, sizeof(*of));
	struct line l = { 0 };
	size_t k = 0;

	ck_assert(want && of);
	if (cut)
		want[k++] = strdup(TRUNCATED);
	for (size_t i = first; i + 1 < t->nr; i++) {
		of[k] = &t->frames[i];
		ck_assert_int_ge(asprintf(&want[k++], "%s (%s:%d)", t->frames[i].name,
					  pyt_short_file(t->frames[i].file), t->frames[i].line),
				 0);
	}
	memset(m, 0, sizeof(*m));
	for (const char *s = next_line(folded, &l); s; s = next_line(s, &l)) {
		long in = innermost(&l);
		bool anchored = false, exact = true;
		size_t pos = (size_t)in;

		if (in < 0 ||
		    (!frame_of(&l, in, &t->frames[t->nr - 1], tolerate) &&
		     !((tolerate & PYT_BUG4) && !cut && unnamed_leaf(&l, in, t->frames, t->nr))))
			continue;
		for (size_t i = 1; i < l.nr && !anchored; i++)
			anchored = cut ? frame_is(&l, i, TRUNCATED)
				       : frame_of(&l, i, &t->frames[0], tolerate);
		if (!anchored)
			continue;
		m->candidates += l.count;
		/* Leaf to root: want[i]'s callee is frames[first + i + 1 - cut]. */
		for (size_t i = nr_want; exact && i-- > 0;) {
			if (called_by_c(c_called, &t->frames[first + i + 1 - cut]))
				while (pos > 1 && !pyt_is_python_frame(l.frame[pos - 1], l.len[pos - 1]))
					pos--;
			exact = --pos >= 1;
			exact = exact && (of[i] ? frame_at(&l, pos, want[i], of[i], tolerate)
						: frame_is(&l, pos, want[i]));
		}
		if (exact)
			m->exact += l.count;
	}
	line_free(&l);
	for (size_t i = 0; i < nr_want; i++)
		free(want[i]);
	free(want);
	free(of);
}

uint64_t pyt_python_samples(const char *folded)
{
	struct line l = { 0 };
	uint64_t sum = 0;

	for (const char *s = next_line(folded, &l); s; s = next_line(s, &l))
		if (innermost(&l) >= 0)
			sum += l.count;
	line_free(&l);
	return sum;
}

uint64_t pyt_caller_samples(const char *folded, const struct pyt_stack *t)
{
	const struct pyt_frame *caller = t->nr >= 2 ? &t->frames[t->nr - 2] : NULL;
	struct line l = { 0 };
	uint64_t sum = 0;

	for (const char *s = next_line(folded, &l); s; s = next_line(s, &l)) {
		bool root = false, under = !caller;

		if (!t->nr || innermost(&l) < 0)
			continue;
		for (size_t i = 1; i < l.nr && !(root && under); i++) {
			root = root || frame_of(&l, i, &t->frames[0], 0);
			under = under || (root && frame_of(&l, i, caller, 0));
		}
		if (root && under)
			sum += l.count;
	}
	line_free(&l);
	return sum;
}

uint64_t pyt_innermost(const char *folded, const char *prefix)
{
	struct line l = { 0 };
	uint64_t sum = 0;

	for (const char *s = next_line(folded, &l); s; s = next_line(s, &l)) {
		long in = innermost(&l);

		if (in >= 0 && l.len[in] >= strlen(prefix) &&
		    !memcmp(l.frame[in], prefix, strlen(prefix)))
			sum += l.count;
	}
	line_free(&l);
	return sum;
}

uint64_t pyt_native_under(const char *folded, const char *prefix, const char *py,
			  const char *native)
{
	struct line l = { 0 };
	uint64_t sum = 0;

	for (const char *s = folded, *next; (next = next_line(s, &l)); s = next) {
		bool under = false;

		if (strncmp(s, prefix, strlen(prefix)))
			continue;
		for (size_t i = 1; i < l.nr && !under; i++) {
			if (!frame_is(&l, i, py))
				continue;
			for (size_t j = i + 1; j < l.nr && !under; j++) {
				under = frame_is(&l, j, native);
				if (pyt_is_python_frame(l.frame[j], l.len[j]))
					break;
			}
		}
		if (under)
			sum += l.count;
	}
	line_free(&l);
	return sum;
}

static bool starts_with(const struct line *l, size_t i, const char *prefix)
{
	return l->len[i] >= strlen(prefix) && !memcmp(l->frame[i], prefix, strlen(prefix));
}

uint64_t pyt_with_frame(const char *folded, const char *prefix, const char *below)
{
	struct line l = { 0 };
	uint64_t sum = 0;

	for (const char *s = next_line(folded, &l); s; s = next_line(s, &l)) {
		size_t i = 1, j;

		while (i < l.nr && !(starts_with(&l, i, prefix) &&
				     pyt_is_python_frame(l.frame[i], l.len[i])))
			i++;
		if (i == l.nr)
			continue;
		for (j = i + 1; below && j < l.nr && !starts_with(&l, j, below); j++)
			;
		if (!below || j < l.nr)
			sum += l.count;
	}
	line_free(&l);
	return sum;
}

void pyt_fail(char *fails, size_t len, const char *fmt, ...)
{
	size_t n = strlen(fails);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(fails + n, len - n, fmt, ap);
	va_end(ap);
}

/* Whether bug (its number) is known: its flag true (pyrun.h), PYTEST_STRICT=1 not set. */
static bool bug_known(unsigned int bug)
{
	const char *strict = getenv("PYTEST_STRICT");

	if (strict && !strcmp(strict, "1"))
		return false;
	switch (bug) {
	case 4:
		return PYT_KNOWN_BUG4_UNNAMED;
	case 6:
		return PYT_KNOWN_BUG6_PERF_FRAMES;
	case 7:
		return PYT_KNOWN_BUG7_APP_SHARES;
	case 8:
		return PYT_KNOWN_BUG8_BRIEF_THREAD;
	case 5:
		return PYT_KNOWN_BUG5_OFFCPU_EARLY;
	case 9:
		return PYT_KNOWN_BUG9_PERF_JOIN_UNREADABLE;
	}
	return false;
}

void pyt_known(char *fails, size_t len, unsigned int bugs, const char *fmt, ...)
{
	char which[32] = "", what[1024];
	bool known = bugs != 0;
	va_list ap;

	for (unsigned int b = 2; b <= 9; b++) {
		size_t n = strlen(which);

		if (!(bugs & (1u << b)))
			continue;
		known = known && bug_known(b);
		snprintf(which + n, sizeof(which) - n, "%s%u", n ? " and " : "", b);
	}
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (known)
		fprintf(stderr, "KNOWN (issue 35 bug %s): %s\n", which, what);
	else if (bugs)
		pyt_fail(fails, len, "(issue 35 bug %s) %s\n", which, what);
	else
		pyt_fail(fails, len, "%s\n", what);
}

static void keep_text(const char *art, const char *name, const char *ext, const char *text)
{
	char path[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/python/%s.%s", art, name, ext);
	f = fopen(path, "we");
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

void pyt_keep(const char *name, const struct run_result *r, const char *dir)
{
	const char *art = getenv("PROFILE_ARTIFACTS");
	char path[600], line[4096];
	struct dirent *de;
	FILE *out;
	DIR *d;

	if (!art)
		return;
	snprintf(path, sizeof(path), "%s/python", art);
	mkdir(path, 0755);
	keep_text(art, name, "out", r->out);
	keep_text(art, name, "err", r->err);
	snprintf(path, sizeof(path), "%s/python/%s.truth", art, name);
	d = dir ? opendir(dir) : NULL;
	out = d ? fopen(path, "we") : NULL;
	while (out && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		FILE *in;

		if (n < 6 || strcmp(de->d_name + n - 6, ".truth"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		in = fopen(path, "re");
		fprintf(out, "== %s\n", de->d_name);
		while (in && fgets(line, sizeof(line), in))
			fputs(line, out);
		if (in)
			fclose(in);
	}
	if (out)
		fclose(out);
	if (d)
		closedir(d);
	fprintf(stderr, "python: %s: the profile kept in %s/python\n", name, art);
}

/* Whether the frame "name (file)" (len bytes) is of one of files. */
static bool of_files(const char *f, size_t len, const char *const *files)
{
	const char *open = memrchr(f, '(', len);

	for (size_t i = 0; open && files[i]; i++)
		if ((size_t)(f + len - open) == strlen(files[i]) + 2 &&
		    !memcmp(open + 1, files[i], strlen(files[i])))
			return true;
	return false;
}

uint64_t pyt_lineless(const char *folded, const char *const *files, char *examples, size_t len)
{
	struct line l = { 0 };
	uint64_t sum = 0;

	if (len)
		examples[0] = '\0';
	for (const char *s = next_line(folded, &l); s; s = next_line(s, &l))
		for (size_t i = 1; i < l.nr; i++) {
			size_t n;

			if (!pyt_is_python_frame(l.frame[i], l.len[i]) || l.frame[i][0] == '[' ||
			    pyt_has_line(l.frame[i], l.len[i]) ||
			    !of_files(l.frame[i], l.len[i], files))
				continue;
			sum += l.count;
			n = strlen(examples);
			if (n + l.len[i] + 3 < len && !memmem(examples, n, l.frame[i], l.len[i]))
				snprintf(examples + n, len - n, "%s%.*s", n ? "; " : "",
					 (int)l.len[i], l.frame[i]);
		}
	line_free(&l);
	return sum;
}
