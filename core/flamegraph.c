// SPDX-License-Identifier: GPL-2.0
#include "core/flamegraph.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/hashmap.h"

#define IMAGE_WIDTH 1200
#define FRAME_HEIGHT 16
#define PAD_TOP 40
#define PAD_BOTTOM 40
#define PAD_SIDE 10
#define MIN_WIDTH_PX 0.1

struct fg_node {
	char *name;
	uint64_t count;
	struct fg_node **children;
	size_t nr_children, cap_children;
};

static struct fg_node *node_new(const char *name, size_t len)
{
	struct fg_node *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->name = strndup(name, len);
	if (!n->name) {
		free(n);
		return NULL;
	}
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

static struct fg_node *child(struct fg_node *parent, const char *name, size_t len)
{
	struct fg_node *c;

	for (size_t i = 0; i < parent->nr_children; i++) {
		c = parent->children[i];
		if (strlen(c->name) == len && !memcmp(c->name, name, len))
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
	c = node_new(name, len);
	if (c)
		parent->children[parent->nr_children++] = c;
	return c;
}

static int add_stack(struct fg_node *root, const char *folded, uint64_t count)
{
	struct fg_node *n = root;
	const char *p = folded;

	root->count += count;
	while (*p) {
		size_t len = strcspn(p, ";");

		n = child(n, p, len);
		if (!n)
			return -ENOMEM;
		n->count += count;
		p += len + (p[len] == ';');
	}
	return 0;
}

static int cmp_node(const void *a, const void *b)
{
	return strcmp((*(struct fg_node *const *)a)->name, (*(struct fg_node *const *)b)->name);
}

static unsigned int sort_tree(struct fg_node *n)
{
	unsigned int depth = 0;

	qsort(n->children, n->nr_children, sizeof(*n->children), cmp_node);
	for (size_t i = 0; i < n->nr_children; i++) {
		unsigned int d = sort_tree(n->children[i]);

		if (d > depth)
			depth = d;
	}
	return depth + 1;
}

static void xml_escape(FILE *out, const char *s, size_t len)
{
	for (size_t i = 0; i < len && s[i]; i++) {
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
			fputc(s[i], out);
		}
	}
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lf = strlen(suffix);

	return ls >= lf && !strcmp(s + ls - lf, suffix);
}

/* flamegraph.pl's palettes: warm for user code, orange for the kernel, grey for "-". */
static void frame_colour(const char *name, bool kernel, char *buf, size_t len)
{
	uint64_t h = hash_bytes(name, strlen(name), 7);
	unsigned int v1 = h % 1000, v2 = (h >> 10) % 1000;

	if (!strcmp(name, "-"))
		snprintf(buf, len, "rgb(160,160,160)");
	else if (kernel)
		snprintf(buf, len, "rgb(%u,%u,%u)", 205 + v1 * 50 / 1000, 110 + v2 * 60 / 1000,
			 0);
	else
		snprintf(buf, len, "rgb(%u,%u,%u)", 205 + v1 * 50 / 1000, v2 * 230 / 1000,
			 (unsigned int)((h >> 20) % 55));
}

struct emit_ctx {
	FILE *out;
	uint64_t total;
	double px_per_sample;
	unsigned int height;
};

static void emit(struct emit_ctx *c, const struct fg_node *n, double x, unsigned int depth,
		 bool is_root)
{
	double w = n->count * c->px_per_sample;
	double y = c->height - PAD_BOTTOM - (depth + 1) * FRAME_HEIGHT;
	bool kernel = ends_with(n->name, "_[k]");
	size_t shown = kernel ? strlen(n->name) - 4 : strlen(n->name);
	char colour[32];
	double off = x;

	if (w < MIN_WIDTH_PX)
		return;
	frame_colour(n->name, kernel, colour, sizeof(colour));
	fputs("<g class=\"func_g\"><title>", c->out);
	xml_escape(c->out, is_root ? "all" : n->name, is_root ? 3 : shown);
	fprintf(c->out, " (%" PRIu64 " samples, %.2f%%)</title>", n->count,
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
	"function label_of(g) { return g.dataset.name.replace(/ \\([0-9]+ samples, [0-9.]+%%\\)$/, ''); }\n"
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

int flamegraph__write(FILE *out, const struct printed_stacks *stacks, const char *title)
{
	struct fg_node *root = node_new("all", 3);
	struct emit_ctx c = { .out = out };
	unsigned int depth;
	int err = 0;

	if (!root)
		return -ENOMEM;
	for (size_t i = 0; i < stacks->nr && !err; i++)
		err = add_stack(root, stacks->stacks[i].text, stacks->stacks[i].count);
	if (err)
		goto out;
	depth = sort_tree(root);
	c.total = root->count ? root->count : 1;
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
	xml_escape(out, title, strlen(title));
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
	if (fflush(out) || ferror(out))
		err = -EIO;
out:
	node_free(root);
	return err;
}
