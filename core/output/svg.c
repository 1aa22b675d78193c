// SPDX-License-Identifier: GPL-2.0
/*
 * An interactive flame graph in one self-contained SVG, in the manner of
 * flamegraph.pl: frames sized by their value, kernel frames coloured apart,
 * hover details, click to zoom, search with the matched percentage.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/lib/hashmap.h"
#include "core/lib/interrupt.h"
#include "core/lib/utf8.h"
#include "core/output/text.h"
#include "core/output/writer.h"

#define IMAGE_WIDTH 1200
#define FRAME_HEIGHT 16
#define PAD_TOP 40
#define PAD_BOTTOM 40
#define PAD_SIDE 10
#define MIN_WIDTH_PX 0.1
/* What fits in IMAGE_WIDTH at the title's 17 px, about 0.6 em per character. */
#define TITLE_MAX_CHARS 110

/*
 * What a frame is, for its palette (as flamegraph.pl's java palette tells
 * JIT, C++ and kernel frames apart): native code, the kernel's, or a
 * function of the program an interpreter runs (Python's, JavaScript's),
 * which a mixed stack would otherwise blur into the native frames around it.
 */
enum fg_kind {
	FG_NATIVE,
	FG_KERNEL,
	FG_INTERP,
};

/*
 * A frame of the graph. Siblings are told apart, sorted and coloured by key:
 * the label, with "_[k]" after kernel frames (flamegraph.pl's annotation,
 * so a kernel and a user function of one name stay apart), and their kind.
 */
struct fg_node {
	char *name;		/* the key */
	size_t label_len;	/* the label: the key without the annotation */
	enum fg_kind kind;
	uint64_t count;
	uint64_t off;		/* of count, off-CPU time (the wall-clock view colours it) */
	uint64_t base;		/* two profiles compared: the base's value (count is the new's) */
	struct fg_node **children;
	size_t nr_children, cap_children;
	/* A stack with a lost kernel (user) part ends here: its marker is on this path. */
	bool ends_kernel_lost, ends_user_lost;
};

static struct fg_node *node_new(const char *name, size_t len, enum fg_kind kind)
{
	struct fg_node *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->name = malloc(len + 5);
	if (!n->name) {
		free(n);
		return NULL;
	}
	memcpy(n->name, name, len);
	strcpy(n->name + len, kind == FG_KERNEL ? "_[k]" : "");
	n->label_len = len;
	n->kind = kind;
	return n;
}

static void node_free(struct fg_node *n)
{
	for (size_t i = 0; i < n->nr_children; i++)
		node_free(n->children[i]);
	free(n->children);
	free(n->name);
	free(n);
}

static struct fg_node *child(struct fg_node *parent, const char *name, size_t len,
			     enum fg_kind kind)
{
	struct fg_node *c;

	for (size_t i = 0; i < parent->nr_children; i++) {
		c = parent->children[i];
		if (c->kind == kind && c->label_len == len && !memcmp(c->name, name, len))
			return c;
	}
	if (parent->nr_children == parent->cap_children) {
		size_t ncap = parent->cap_children ? parent->cap_children * 2 : 4;
		struct fg_node **tmp = realloc(parent->children, ncap * sizeof(*tmp));

		if (!tmp)
			return NULL;
		parent->children = tmp;
		parent->cap_children = ncap;
	}
	c = node_new(name, len, kind);
	if (c)
		parent->children[parent->nr_children++] = c;
	return c;
}

/* What a stack adds to each of its frames: its value, and the off-CPU part of it. */
struct weight {
	uint64_t count, off, base;
};

/* Step from *n to its child named name (created if new), adding w. */
static int descend(struct fg_node **n, const char *name, size_t len, enum fg_kind kind,
		   struct weight w)
{
	*n = child(*n, name, len, kind);
	if (!*n)
		return -ENOMEM;
	(*n)->count += w.count;
	(*n)->off += w.off;
	(*n)->base += w.base;
	return 0;
}

/* The off-CPU part of a stack's value: its "off-cpu" columns. */
static uint64_t off_cpu_value(const struct profile *p, const struct profile_stack *s)
{
	uint64_t v = 0;

	for (unsigned int c = 0; c < p->nr_columns; c++)
		if (p->columns[c].in_text && !strcmp(p->columns[c].type, "off-cpu"))
			v += s->values[c];
	return v;
}

/* One stack from the root: comm, user frames root first, "-", kernel frames root first. */
static int add_stack(struct fg_node *root, const struct profile *p, const struct profile_stack *s,
		     const struct writer_opts *o, const struct frame_texts *ft, struct strbuf *sb)
{
	struct weight count = { profile__text_value(p, s), off_cpu_value(p, s),
				p->differential ? s->values[0] : 0 };
	struct fg_node *n = root;
	int err;

	root->count += count.count;
	root->off += count.off;
	root->base += count.base;
	strbuf__reset(sb);
	text__escaped(sb, s->comm, strlen(s->comm), ESCAPE_CONTROLS_AND_SEMICOLONS);
	err = sb->oom ? -ENOMEM : descend(&n, sb->buf, sb->len, FG_NATIVE, count);
	for (unsigned int i = s->nr_kernel + s->nr_user; i-- > s->nr_kernel && !err;) {
		const struct profile_frame *f = profile__frame(p, s, i);

		strbuf__reset(sb);
		frame_texts__put(sb, ft, p, s, i);
		err = sb->oom ? -ENOMEM
			      : descend(&n, sb->buf, sb->len,
					f->kind == FRAME_INTERP ? FG_INTERP : FG_NATIVE, count);
	}
	if (!err && text__delimited(s, o))
		err = descend(&n, "-", 1, FG_NATIVE, count);
	for (unsigned int i = s->nr_kernel; i-- > 0 && !err;) {
		const struct profile_frame *f = profile__frame(p, s, i);

		strbuf__reset(sb);
		frame_texts__put(sb, ft, p, s, i);
		err = sb->oom ? -ENOMEM
			      : descend(&n, sb->buf, sb->len,
					f->kind == FRAME_KERNEL ? FG_KERNEL : FG_NATIVE, count);
	}
	if (!err) {
		n->ends_kernel_lost |= profile_stack__kernel_lost(s);
		n->ends_user_lost |= profile_stack__user_lost(s);
	}
	return err;
}

/* Markers of lost stacks on the graph's paths: one per path, as folded lines merge. */
static uint64_t missed_paths(const struct fg_node *n)
{
	uint64_t nr = n->ends_kernel_lost + n->ends_user_lost;

	for (size_t i = 0; i < n->nr_children; i++)
		nr += missed_paths(n->children[i]);
	return nr;
}

static int cmp_node(const void *a, const void *b)
{
	return strcmp((*(struct fg_node *const *)a)->name, (*(struct fg_node *const *)b)->name);
}

static unsigned int sort_tree(struct fg_node *n)
{
	unsigned int depth = 0;

	if (n->nr_children)	/* a leaf has no array at all */
		qsort(n->children, n->nr_children, sizeof(*n->children), cmp_node);
	for (size_t i = 0; i < n->nr_children; i++) {
		unsigned int d = sort_tree(n->children[i]);

		if (d > depth)
			depth = d;
	}
	return depth + 1;
}

/*
 * The code point of a valid UTF-8 sequence of n bytes, and whether XML 1.0
 * may carry it as it is: its Char production leaves out C0 controls but tab,
 * LF and CR, U+FFFE and U+FFFF (a parser stops at them: a browser shows an
 * error page instead of the graph); it discourages C1 controls and the other
 * noncharacters, which some readers refuse too.
 */
static bool xml_char_ok(const unsigned char *s, size_t n)
{
	uint32_t cp = n == 1 ? s[0] : s[0] & (0xff >> (n + 1));

	for (size_t i = 1; i < n; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	if (cp < 0x20)
		return cp == '\t' || cp == '\n' || cp == '\r';
	if (cp >= 0x7f && cp <= 0x9f)
		return false;
	if (cp >= 0xfdd0 && cp <= 0xfdef)
		return false;
	/* Bidi overrides and line separators: a label would show reordered or split. */
	if (utf8__control_len(s, n) == 3)
		return false;
	return (cp & 0xfffe) != 0xfffe;	/* U+FFFE, U+FFFF, U+1FFFE ... U+10FFFF */
}

/* Text and attributes as XML 1.0 reads them; any other byte shows as \xNN. */
static void xml_escape(FILE *out, const char *s, size_t len)
{
	for (size_t i = 0; i < len && s[i]; i++) {
		const unsigned char *u = (const unsigned char *)s + i;
		size_t n;

		switch (s[i]) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		default:
			n = utf8__seq_len(u, len - i);
			if (n && xml_char_ok(u, n)) {
				fwrite(u, 1, n, out);
			} else {
				/* A bad sequence shows byte by byte; a good one that XML refuses whole. */
				n = n ? n : 1;
				for (size_t k = 0; k < n; k++)
					fprintf(out, "\\x%02x", u[k]);
			}
			i += n - 1;
		}
	}
}

/*
 * flamegraph.pl's palettes: warm for native user code, orange for the
 * kernel, green for interpreted functions (its java palette's JIT hue),
 * grey for "-", and its blue "io" palette for frames that are mostly
 * off-CPU time.
 */
static void frame_colour(const char *name, enum fg_kind kind, bool off_cpu, char *buf,
			 size_t len)
{
	uint64_t h = hash_bytes_fixed(name, strlen(name), 7);
	unsigned int v1 = h % 1000, v2 = (h >> 10) % 1000;

	if (!strcmp(name, "-"))
		snprintf(buf, len, "rgb(160,160,160)");
	else if (off_cpu)
		snprintf(buf, len, "rgb(%u,%u,%u)", 80 + v1 * 60 / 1000, 80 + v1 * 60 / 1000,
			 190 + v2 * 55 / 1000);
	else if (kind == FG_KERNEL)
		snprintf(buf, len, "rgb(%u,%u,%u)", 205 + v1 * 50 / 1000, 110 + v2 * 60 / 1000,
			 0);
	else if (kind == FG_INTERP)
		snprintf(buf, len, "rgb(%u,%u,%u)", v1 * 50 / 1000, 190 + v2 * 50 / 1000,
			 (unsigned int)((h >> 20) % 50));
	else
		snprintf(buf, len, "rgb(%u,%u,%u)", 205 + v1 * 50 / 1000, v2 * 230 / 1000,
			 (unsigned int)((h >> 20) % 55));
}

struct emit_ctx;
static void diff_colour(const struct emit_ctx *c, const struct fg_node *n, char *buf, size_t len);

struct emit_ctx {
	FILE *out;
	bool differential;
	uint64_t base_total;	/* differential: the base's total (total is the new's) */
	double max_change;	/* differential: the largest change of share, for the colour scale */
	const char *unit;	/* of the values: "samples", "us" */
	uint64_t total;
	double px_per_sample;
	unsigned int height;
};

static void emit(struct emit_ctx *c, const struct fg_node *n, double x, unsigned int depth,
		 bool is_root)
{
	double w = n->count * c->px_per_sample;
	double y = c->height - PAD_BOTTOM - (depth + 1) * FRAME_HEIGHT;
	char colour[32];
	double off = x;

	if (w < MIN_WIDTH_PX || interrupt__pending())
		return;
	if (c->differential)
		diff_colour(c, n, colour, sizeof(colour));
	else
		frame_colour(n->name, n->kind, n->off * 2 > n->count, colour, sizeof(colour));
	fputs("<g class=\"func_g\"><title>", c->out);
	xml_escape(c->out, is_root ? "all" : n->name, is_root ? 3 : n->label_len);
	fprintf(c->out, " (%" PRIu64 " %s, %.2f%%)</title>", n->count, c->unit,
		100.0 * n->count / c->total);
	fprintf(c->out,
		"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"%s\" rx=\"2\" "
		"ry=\"2\"/><text x=\"%.1f\" y=\"%.1f\"></text></g>\n",
		x, y, w, FRAME_HEIGHT - 1, is_root ? "rgb(250,250,250)" : colour, x + 3,
		y + FRAME_HEIGHT - 4.5);
	for (size_t i = 0; i < n->nr_children; i++) {
		emit(c, n->children[i], off, depth + 1, false);
		off += n->children[i]->count * c->px_per_sample;
	}
}

/* A frame's change of share between the compared profiles: new minus base, as a fraction. */
static double change(const struct emit_ctx *c, const struct fg_node *n)
{
	return (double)n->count / c->total - (c->base_total ? (double)n->base / c->base_total : 0);
}

static double max_change(const struct emit_ctx *c, const struct fg_node *n)
{
	double m = change(c, n) < 0 ? -change(c, n) : change(c, n);

	for (size_t i = 0; i < n->nr_children; i++) {
		double k = max_change(c, n->children[i]);

		if (k > m)
			m = k;
	}
	return m;
}

/* FlameGraph's differential colours: red grew, blue shrank, white the same. */
static void diff_colour(const struct emit_ctx *c, const struct fg_node *n, char *buf, size_t len)
{
	double d = change(c, n), r = c->max_change > 0 ? (d < 0 ? -d : d) / c->max_change : 0;
	unsigned int fade = (unsigned int)(210 * (1 - r));

	if (d > 0)
		snprintf(buf, len, "rgb(255,%u,%u)", fade, fade);
	else if (d < 0)
		snprintf(buf, len, "rgb(%u,%u,255)", fade, fade);
	else
		snprintf(buf, len, "rgb(250,250,250)");
}

/* Zoom, search, hover and label fitting; no external scripts or fonts. */
static const char script[] =
	"var details, searchbtn, matchedtxt, unzoombtn, frames, width = %d, pad = %d;\n"
	"function init(evt) {\n"
	"  details = document.getElementById('details').firstChild;\n"
	"  searchbtn = document.getElementById('search');\n"
	"  matchedtxt = document.getElementById('matched');\n"
	"  unzoombtn = document.getElementById('unzoom');\n"
	"  frames = document.getElementById('frames');\n"
	"  for (var g of frames.children) {\n"
	"    var r = g.querySelector('rect');\n"
	"    g.dataset.x = r.getAttribute('x'); g.dataset.w = r.getAttribute('width');\n"
	"    g.dataset.name = g.querySelector('title').textContent;\n"
	"    g.addEventListener('mouseover', function () { details.nodeValue = 'Function: ' + this.dataset.name; });\n"
	"    g.addEventListener('mouseout', function () { details.nodeValue = ' '; });\n"
	"    g.addEventListener('click', function () { zoom(this); });\n"
	"  }\n"
	"  searchbtn.addEventListener('click', function () {\n"
	"    var term = prompt('Search for (regular expression):', '');\n"
	"    if (term != null) search(term);\n"
	"  });\n"
	"  unzoombtn.addEventListener('click', unzoom);\n"
	"  fit_labels();\n"
	"}\n"
	"function label_of(g) { return g.dataset.name.replace(/ \\([0-9]+ [a-z]+, [0-9.]+%%\\)$/, ''); }\n"
	"function fit_labels() {\n"
	"  for (var g of frames.children) {\n"
	"    var r = g.querySelector('rect'), t = g.querySelector('text');\n"
	"    var w = parseFloat(r.getAttribute('width')), name = label_of(g);\n"
	"    t.setAttribute('x', parseFloat(r.getAttribute('x')) + 3);\n"
	"    var chars = Math.floor((w - 6) / 7);\n"
	"    t.textContent = chars < 3 ? '' : (name.length <= chars ? name : name.substring(0, chars - 2) + '..');\n"
	"  }\n"
	"}\n"
	"function zoom(node) {\n"
	"  var zx = parseFloat(node.dataset.x), zw = parseFloat(node.dataset.w);\n"
	"  var zy = parseFloat(node.querySelector('rect').getAttribute('y'));\n"
	"  var scale = (width - 2 * pad) / zw;\n"
	"  for (var g of frames.children) {\n"
	"    var r = g.querySelector('rect'), x = parseFloat(g.dataset.x), w = parseFloat(g.dataset.w);\n"
	"    var y = parseFloat(r.getAttribute('y'));\n"
	"    var inside = x >= zx - 0.0001 && x + w <= zx + zw + 0.0001;\n"
	"    var below = y > zy && x <= zx + 0.0001 && x + w >= zx + zw - 0.0001;\n"
	"    if (inside || below) {\n"
	"      g.style.display = '';\n"
	"      r.setAttribute('x', inside ? pad + (x - zx) * scale : pad);\n"
	"      r.setAttribute('width', inside ? w * scale : width - 2 * pad);\n"
	"      g.style.opacity = below && !inside ? 0.5 : 1;\n"
	"    } else g.style.display = 'none';\n"
	"  }\n"
	"  unzoombtn.style.opacity = 1;\n"
	"  fit_labels();\n"
	"}\n"
	"function unzoom() {\n"
	"  for (var g of frames.children) {\n"
	"    var r = g.querySelector('rect');\n"
	"    g.style.display = ''; g.style.opacity = 1;\n"
	"    r.setAttribute('x', g.dataset.x); r.setAttribute('width', g.dataset.w);\n"
	"  }\n"
	"  unzoombtn.style.opacity = 0;\n"
	"  fit_labels();\n"
	"}\n"
	"function search(term) {\n"
	"  var re = new RegExp(term), spans = [], total = 0;\n"
	"  for (var g of frames.children) {\n"
	"    var r = g.querySelector('rect');\n"
	"    if (!g.dataset.fill) g.dataset.fill = r.getAttribute('fill');\n"
	"    if (g.dataset.name.startsWith('all (')) { total = parseFloat(g.dataset.w); continue; }\n"
	"    if (re.test(label_of(g))) {\n"
	"      r.setAttribute('fill', 'rgb(230,0,230)');\n"
	"      spans.push([parseFloat(g.dataset.x), parseFloat(g.dataset.w)]);\n"
	"    } else r.setAttribute('fill', g.dataset.fill);\n"
	"  }\n"
	"  spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });\n"
	"  var covered = 0, end = -1;\n"
	"  for (var s of spans) {\n"
	"    if (s[0] + s[1] <= end) continue;\n"
	"    covered += s[0] >= end ? s[1] : s[0] + s[1] - end;\n"
	"    end = s[0] + s[1];\n"
	"  }\n"
	"  var pct = total ? 100 * covered / total : 0;\n"
	"  matchedtxt.textContent = 'Matched: ' + pct.toFixed(1) + '%%';\n"
	"  return pct;\n"
	"}\n";

int writer__svg(FILE *out, const struct profile *p, const struct writer_opts *opts)
{
	/* Kernel frames are told by their kind; "-" always splits user from kernel. */
	struct writer_opts o = { .delimited = true, .addresses = opts->addresses };
	struct fg_node *root = node_new("all", 3, FG_NATIVE);
	struct emit_ctx c = { .out = out };

	/* Time, where the profile is of time; samples otherwise. */
	c.unit = p->nr_columns && !strcmp(p->columns[0].unit, "microseconds") ? "us" : "samples";
	struct strbuf sb = { 0 };
	struct frame_texts ft;
	const char *title = p->title ? p->title : "";
	unsigned int depth;
	int err = 0;

	if (!root)
		return -ENOMEM;
	err = frame_texts__init(&ft, p, &o, ESCAPE_CONTROLS_AND_SEMICOLONS);
	for (size_t i = 0; i < p->nr_stacks && !err; i++)
		err = interrupt__pending() ? -EINTR : add_stack(root, p, &p->stacks[i], &o, &ft, &sb);
	if (!err)
		frame_texts__fini(&ft);
	strbuf__free(&sb);
	if (err)
		goto out;
	depth = sort_tree(root);
	c.total = root->count ? root->count : 1;
	c.differential = p->differential;
	c.base_total = root->base;
	if (c.differential)
		c.max_change = max_change(&c, root);
	c.height = PAD_TOP + PAD_BOTTOM + depth * FRAME_HEIGHT + FRAME_HEIGHT;
	c.px_per_sample = (double)(IMAGE_WIDTH - 2 * PAD_SIDE) / c.total;

	fprintf(out,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%u\" onload=\"init(evt)\" "
		"viewBox=\"0 0 %d %u\" xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>text { font-family: monospace; font-size: 12px; fill: rgb(0,0,0); }\n"
		".func_g:hover rect { stroke: black; stroke-width: 0.5; cursor: pointer; }\n"
		"#search, #unzoom { cursor: pointer; }</style>\n"
		"<script type=\"text/ecmascript\"><![CDATA[\n",
		IMAGE_WIDTH, c.height, IMAGE_WIDTH, c.height);
	fprintf(out, script, IMAGE_WIDTH, PAD_SIDE);
	fprintf(out, "]]></script>\n"
		     "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"rgb(248,248,240)\"/>\n"
		     "<text id=\"title\" x=\"%d\" y=\"24\" text-anchor=\"middle\" "
		     "style=\"font-size:17px\">",
		IMAGE_WIDTH / 2);
	/* A long command line would run off the picture: elide it to the width. */
	if (strlen(title) > TITLE_MAX_CHARS) {
		xml_escape(out, title, utf8__boundary(title, TITLE_MAX_CHARS - 3));
		fputs("...", out);
	} else {
		xml_escape(out, title, strlen(title));
	}
	fprintf(out,
		"</text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n"
		"<text id=\"unzoom\" x=\"%d\" y=\"24\" style=\"opacity:0\">Reset Zoom</text>\n"
		"<text id=\"search\" x=\"%d\" y=\"24\">Search</text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%u\"> </text>\n"
		"<g id=\"frames\">\n",
		PAD_SIDE, c.height - 17, PAD_SIDE, IMAGE_WIDTH - 110, IMAGE_WIDTH - 110,
		c.height - 17);
	emit(&c, root, PAD_SIDE, 0, true);
	fputs("</g>\n</svg>\n", out);
	writer__printed_missed(opts, missed_paths(root));
	err = writer__flush(out);
out:
	node_free(root);
	return err;
}
