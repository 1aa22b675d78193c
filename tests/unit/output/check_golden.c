// SPDX-License-Identifier: GPL-2.0
/*
 * Golden outputs: a recorded sample set (tests/data/golden/samples.txt)
 * rendered in every format and option combination must print exactly what
 * the files under tests/data/golden/ hold. They were written by the code
 * before the sample path was typed end to end (issue 16) and pin its
 * behaviour: a change of output is a decision, made by regenerating them
 * with PROFILE_GOLDEN_UPDATE=1 and reviewing the diff.
 *
 * User frames resolve in the symfixture workload, mapped at a fixed base so
 * that addresses print the same on every run; kernel frames in a kallsyms
 * file of the set. No root needed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "core/agg/agg.h"
#include "core/sym/symbolize.h"
#include "profile.pb-c.h"
#include "tests/support/fixture.h"
#include "tests/support/render.h"
#include "tests/support/tests.h"

/* Where the fixture binary is mapped, whatever ASLR chose for the live one. */
#define FIXED_BASE 0x555555554000ULL
/* An anonymous executable mapping: JIT code without a perf map. */
#define ANON_START 0x7f1000000000ULL
#define ANON_END 0x7f1000010000ULL
#define PERIOD_NS 10101010ULL

static struct sym_fixture fx;
static struct addr_space as;
static struct agg agg;
static struct symbolizer *sym;
static char kallsyms[700];

static const char *srcdir(void)
{
	const char *d = getenv("PROFILE_SRCDIR");

	return d ? d : ".";
}

static const char *golden_path(const char *name)
{
	static char path[700];

	snprintf(path, sizeof(path), "%s/tests/data/golden/%s", srcdir(), name);
	return path;
}

/* The fixture's own mappings, moved to FIXED_BASE, and one anonymous one. */
static void build_addr_space(void)
{
	const char *bin = workload("symfixture");
	uint64_t first = 0;

	memset(&as, 0, sizeof(as));
	as.pid = 999999;	/* no such process: no perf map */
	for (size_t i = 0; i < fx.as.nr_maps; i++) {
		struct mapping m = fx.as.maps[i];

		if (strcmp(m.path, bin))
			continue;
		if (!first)
			first = m.start;
		m.start = m.start - first + FIXED_BASE;
		m.end = m.end - first + FIXED_BASE;
		ck_assert_int_eq(addr_space__insert(&as, &m), 0);
	}
	ck_assert_msg(first, "%s is not in the %zu mappings of the fixture", bin, fx.as.nr_maps);
	ck_assert_int_eq(addr_space__insert(&as, &(struct mapping){ .start = ANON_START,
								       .end = ANON_END,
								       .exec = true,
								       .path = "//anon" }),
			 0);
	/* Symbol addresses as they are at the fixed base. */
	fx.alpha = fx.alpha - first + FIXED_BASE;
	fx.beta = fx.beta - first + FIXED_BASE;
	fx.gamma = fx.gamma - first + FIXED_BASE;
	fx.main = fx.main - first + FIXED_BASE;
}

/* "alpha+4", "0xffff...", "anon+0x100", "file+0x300", "TRUNCATED" */
static uint64_t parse_ip(const char *tok)
{
	static const struct {
		const char *name;
		uint64_t *addr;
	} syms[] = { { "alpha", &fx.alpha }, { "beta", &fx.beta }, { "gamma", &fx.gamma },
		     { "main", &fx.main } };
	const char *plus = strchr(tok, '+');
	size_t len = plus ? (size_t)(plus - tok) : strlen(tok);
	uint64_t off = plus ? strtoull(plus + 1, NULL, 0) : 0;

	if (!strcmp(tok, "TRUNCATED"))
		return STACK_TRUNCATED_IP;
	if (!strncmp(tok, "anon", len) && len == 4)
		return ANON_START + off;
	if (!strncmp(tok, "file", len) && len == 4)
		return FIXED_BASE + off;
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		if (strlen(syms[i].name) == len && !strncmp(tok, syms[i].name, len))
			return *syms[i].addr + off;
	return strtoull(tok, NULL, 0);
}

static unsigned int parse_ips(char *list, uint64_t *ips, unsigned int max)
{
	unsigned int n = 0;
	char *save = NULL;

	for (char *t = strtok_r(list, ",", &save); t && n < max; t = strtok_r(NULL, ",", &save))
		if (strcmp(t, "-"))
			ips[n++] = parse_ip(t);
	return n;
}

/*
 * One stack a line: pid|comm|weight|kernel_err|user_err|kernel ips|user ips,
 * leaf first; '-' for none.
 */
static void load_samples(void)
{
	FILE *f = fopen(golden_path("samples.txt"), "r");
	char line[4096];

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		uint64_t kernel[MAX_STACK_DEPTH], user[MAX_STACK_DEPTH];
		char *field[7], *save = NULL;
		struct sample s = { 0 };
		int n = 0;

		line[strcspn(line, "\n")] = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		for (char *t = strtok_r(line, "|", &save); t && n < 7; t = strtok_r(NULL, "|", &save))
			field[n++] = t;
		ck_assert_int_eq(n, 7);
		s.pid = s.tid = atoi(field[0]);
		snprintf(s.comm, sizeof(s.comm), "%s", field[1]);
		s.weight = strtoull(field[2], NULL, 10);
		s.kernel_err = atoi(field[3]);
		s.user_err = atoi(field[4]);
		s.kernel_ips = kernel;
		s.nr_kernel = parse_ips(field[5], kernel, MAX_STACK_DEPTH);
		s.user_ips = user;
		s.nr_user = parse_ips(field[6], user, MAX_STACK_DEPTH);
		ck_assert_int_eq(agg__add(&agg, &s, s.nr_user ? &as : NULL, 0), 0);
	}
	fclose(f);
}

static void setup(void)
{
	snprintf(kallsyms, sizeof(kallsyms), "%s", golden_path("kallsyms"));
	sym_fixture_load(&fx, workload("symfixture"));
	build_addr_space();
	agg__init(&agg);
	load_samples();
	sym = symbolizer__new();
	ck_assert_ptr_nonnull(sym);
	symbolizer__set_kallsyms(sym, kallsyms);
}

static void teardown(void)
{
	symbolizer__free(sym);
	agg__fini(&agg);
	for (size_t i = 0; i < as.nr_maps; i++)
		free(as.maps[i].path);
	free(as.maps);
	sym_fixture_free(&fx);
}

/* Replace the build directory in paths, which differs between checkouts. */
static char *normalize(const char *text)
{
	const char *dir = getenv("WORKLOAD_DIR");
	size_t dl = dir ? strlen(dir) : 0, n = 0;
	char *out = malloc(strlen(text) * 2 + 64);

	ck_assert_ptr_nonnull(out);
	for (const char *p = text; *p;) {
		if (dl && !strncmp(p, dir, dl)) {
			n += sprintf(out + n, "$WORKLOAD_DIR");
			p += dl;
		} else {
			out[n++] = *p++;
		}
	}
	out[n] = '\0';
	return out;
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, got;

	if (!f)
		return NULL;
	do {
		if (len + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap);
			ck_assert_ptr_nonnull(buf);
		}
		got = fread(buf + len, 1, 4096, f);
		len += got;
	} while (got);
	fclose(f);
	buf[len] = '\0';
	return buf;
}

/* Compare with the golden file, or write it under PROFILE_GOLDEN_UPDATE=1. */
static void check_golden(const char *name, const char *raw)
{
	char *actual = normalize(raw), *expected;
	const char *art = getenv("PROFILE_ARTIFACTS");

	if (getenv("PROFILE_GOLDEN_UPDATE")) {
		FILE *f = fopen(golden_path(name), "w");

		ck_assert_ptr_nonnull(f);
		fputs(actual, f);
		fclose(f);
	}
	expected = read_file(golden_path(name));
	ck_assert_msg(expected, "missing golden file %s", golden_path(name));
	if (strcmp(expected, actual) && art) {
		char path[800];
		FILE *f;

		snprintf(path, sizeof(path), "%s/golden-actual", art);
		mkdir(path, 0755);
		snprintf(path, sizeof(path), "%s/golden-actual/%s", art, name);
		f = fopen(path, "w");
		if (f) {
			fputs(actual, f);
			fclose(f);
		}
	}
	ck_assert_msg(!strcmp(expected, actual), "%s differs from its golden file (actual in "
		      "$PROFILE_ARTIFACTS/golden-actual/%s)", name, name);
	free(expected);
	free(actual);
}

/* An in-memory stream the renderers write to. */
struct membuf {
	char *buf;
	size_t len;
	FILE *f;
};

static FILE *mb_open(struct membuf *mb)
{
	memset(mb, 0, sizeof(*mb));
	mb->f = open_memstream(&mb->buf, &mb->len);
	ck_assert_ptr_nonnull(mb->f);
	return mb->f;
}

static char *mb_close(struct membuf *mb)
{
	fclose(mb->f);
	return mb->buf;
}

/* --- the rendering calls of the API under test ---------------------------- */

struct text_case {
	const char *file;
	struct render_opts o;
};

static char *render_text(const struct render_opts *o)
{
	char *text = render(&agg, sym, o, NULL), *warn = render_warnings(&agg, sym, o), *both;

	ck_assert_int_ge(asprintf(&both, "%s%s", text, warn), 0);
	free(text);
	free(warn);
	return both;
}

static char *render_svg(void)
{
	struct render_opts o = { .format = FORMAT_SVG, .title = "profile of golden <set> & co" };

	return render(&agg, sym, &o, NULL);
}

static char *render_pprof(bool user_only, bool kernel_only, size_t *len)
{
	struct render_opts o = { .format = FORMAT_PPROF,
				 .period_ns = PERIOD_NS,
				 .start_ns = 1700000000000000000ULL,
				 .duration_ns = 3000000000ULL,
				 .comment = "golden",
				 .user_only = user_only,
				 .kernel_only = kernel_only };

	return render(&agg, sym, &o, len);	/* gzip */
}

/* --- pprof as text ---------------------------------------------------------- */

static uint8_t *gunzip(const uint8_t *in, size_t len, size_t *out_len)
{
	z_stream zs = { 0 };
	size_t cap = 1 << 20;
	uint8_t *out = malloc(cap);
	int ret;

	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = (uint8_t *)in;
	zs.avail_in = (uInt)len;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	ret = inflate(&zs, Z_FINISH);
	ck_assert_int_eq(ret, Z_STREAM_END);
	*out_len = zs.total_out;
	inflateEnd(&zs);
	return out;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static Perftools__Profiles__Mapping *find_mapping(Perftools__Profiles__Profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->n_mapping; i++)
		if (p->mapping[i]->id == id)
			return p->mapping[i];
	return NULL;
}

static Perftools__Profiles__Location *find_location(Perftools__Profiles__Profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->n_location; i++)
		if (p->location[i]->id == id)
			return p->location[i];
	ck_abort_msg("location %" PRIu64 " is not in the profile", id);
	return NULL;
}

static const char *function_name(Perftools__Profiles__Profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->n_function; i++)
		if (p->function[i]->id == id)
			return p->string_table[p->function[i]->name];
	ck_abort_msg("function %" PRIu64 " is not in the profile", id);
	return NULL;
}

/* ":file:line" of a Line whose function has a file, "" otherwise. */
static const char *line_text(Perftools__Profiles__Profile *p, const Perftools__Profiles__Line *l)
{
	static char buf[300];

	for (size_t i = 0; i < p->n_function; i++) {
		const Perftools__Profiles__Function *f = p->function[i];
		const char *file, *slash;

		if (f->id != l->function_id || !f->filename)
			continue;
		file = p->string_table[f->filename];
		slash = strrchr(file, '/');
		snprintf(buf, sizeof(buf), ":%s:%" PRId64 "(%" PRId64 ")", slash ? slash + 1 : file,
			 l->line, f->start_line);
		return buf;
	}
	return "";
}

/* Print lines[0..nr) sorted, then free them: the order of a pprof's tables means nothing. */
static void put_sorted(FILE *f, char **lines, size_t nr)
{
	qsort(lines, nr, sizeof(*lines), cmp_str);
	for (size_t i = 0; i < nr; i++) {
		fputs(lines[i], f);
		free(lines[i]);
	}
	free(lines);
}

/*
 * What the decoded profile says, independent of the order of its tables and
 * of the ids chosen: header fields, mappings, then every sample with its
 * frames spelled out (address, function, mapping file), all sorted.
 */
static char *pprof_text(const char *gz, size_t gz_len)
{
	size_t len;
	uint8_t *raw = gunzip((const uint8_t *)gz, gz_len, &len);
	Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, len, raw);
	struct membuf mb;
	char **s, **lines;
	FILE *f = mb_open(&mb);

	ck_assert_ptr_nonnull(p);
	s = p->string_table;
	for (size_t i = 0; i < p->n_sample_type; i++)
		fprintf(f, "sample_type %s/%s\n", s[p->sample_type[i]->type],
			s[p->sample_type[i]->unit]);
	if (p->period_type)
		fprintf(f, "period_type %s/%s period %" PRId64 "\n", s[p->period_type->type],
			s[p->period_type->unit], p->period);
	fprintf(f, "time_nanos %" PRId64 " duration_nanos %" PRId64 "\n", p->time_nanos,
		p->duration_nanos);
	for (size_t i = 0; i < p->n_comment; i++)
		fprintf(f, "comment %s\n", s[p->comment[i]]);
	fprintf(f, "%zu mappings, %zu locations, %zu functions, %zu samples\n", p->n_mapping,
		p->n_location, p->n_function, p->n_sample);

	lines = calloc(p->n_mapping + 1, sizeof(*lines));
	for (size_t i = 0; i < p->n_mapping; i++) {
		Perftools__Profiles__Mapping *m = p->mapping[i];

		ck_assert_int_ge(asprintf(&lines[i], "mapping %#" PRIx64 "-%#" PRIx64 " off %#" PRIx64
					  " file %s build_id %s%s%s%s%s\n",
					  m->memory_start, m->memory_limit, m->file_offset,
					  s[m->filename], s[m->build_id],
					  m->has_functions ? " has_functions" : "",
					  m->has_filenames ? " has_filenames" : "",
					  m->has_line_numbers ? " has_line_numbers" : "",
					  m->has_inline_frames ? " has_inline_frames" : ""),
				 0);
	}
	put_sorted(f, lines, p->n_mapping);

	lines = calloc(p->n_sample + 1, sizeof(*lines));
	for (size_t i = 0; i < p->n_sample; i++) {
		Perftools__Profiles__Sample *sm = p->sample[i];
		struct membuf line;
		FILE *lf = mb_open(&line);

		for (size_t j = 0; j < sm->n_label; j++) {
			Perftools__Profiles__Label *lb = sm->label[j];

			if (lb->str)
				fprintf(lf, "%s=%s ", s[lb->key], s[lb->str]);
			else
				fprintf(lf, "%s=%" PRId64 " ", s[lb->key], lb->num);
		}
		fputs("values", lf);
		for (size_t j = 0; j < sm->n_value; j++)
			fprintf(lf, " %" PRId64, sm->value[j]);
		fputs(" |", lf);
		for (size_t j = 0; j < sm->n_location_id; j++) {
			Perftools__Profiles__Location *l = find_location(p, sm->location_id[j]);
			Perftools__Profiles__Mapping *m = find_mapping(p, l->mapping_id);

			fprintf(lf, " %#" PRIx64, l->address);
			/* Source files by base name: the checkout's path is not the golden's. */
			for (size_t k = 0; k < l->n_line; k++)
				fprintf(lf, "%s%s%s", k ? "/" : " ",
					function_name(p, l->line[k]->function_id),
					line_text(p, l->line[k]));
			fprintf(lf, " @%s;", m ? s[m->filename] : "-");
		}
		fputc('\n', lf);
		lines[i] = mb_close(&line);
	}
	put_sorted(f, lines, p->n_sample);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	return mb_close(&mb);
}

static const struct text_case text_cases[] = {
	{ "bcc.txt", { .format = FORMAT_BCC } },
	{ "bcc-d.txt", { .format = FORMAT_BCC, .delimited = true } },
	{ "bcc-a.txt", { .format = FORMAT_BCC, .annotations = true } },
	{ "bcc-A.txt", { .format = FORMAT_BCC, .addresses = true } },
	{ "bcc-U.txt", { .format = FORMAT_BCC, .user_only = true } },
	{ "bcc-K.txt", { .format = FORMAT_BCC, .kernel_only = true } },
	{ "bcc-daA.txt",
	  { .format = FORMAT_BCC, .delimited = true, .annotations = true, .addresses = true } },
	{ "folded.txt", { .format = FORMAT_FOLDED } },
	{ "folded-da.txt", { .format = FORMAT_FOLDED, .delimited = true, .annotations = true } },
	{ "folded-A.txt", { .format = FORMAT_FOLDED, .addresses = true } },
	{ "folded-U.txt", { .format = FORMAT_FOLDED, .user_only = true } },
	{ "folded-K.txt", { .format = FORMAT_FOLDED, .kernel_only = true } },
};

START_TEST(text_formats_print_as_recorded)
{
	const struct text_case *c = &text_cases[_i];
	char *out = render_text(&c->o);

	check_golden(c->file, out);
	free(out);
}
END_TEST

START_TEST(svg_prints_as_recorded)
{
	char *out = render_svg();

	check_golden("flamegraph.svg", out);
	free(out);
}
END_TEST

START_TEST(pprof_decodes_as_recorded)
{
	static const char *const names[] = { "pprof.txt", "pprof-U.txt", "pprof-K.txt" };
	char *gz, *text;
	size_t len;

	gz = render_pprof(_i == 1, _i == 2, &len);
	text = pprof_text(gz, len);
	check_golden(names[_i], text);
	free(text);
	free(gz);
}
END_TEST

Suite *golden_suite(void)
{
	Suite *s = suite_create("golden");
	TCase *tc = tcase_create("golden");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, text_formats_print_as_recorded, 0,
			    sizeof(text_cases) / sizeof(text_cases[0]));
	tcase_add_test(tc, svg_prints_as_recorded);
	tcase_add_loop_test(tc, pprof_decodes_as_recorded, 0, 3);
	suite_add_tcase(s, tc);
	return s;
}
