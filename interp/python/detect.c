// SPDX-License-Identifier: GPL-2.0
/*
 * Whether a mapped ELF file is a CPython interpreter, which version, and
 * where its runtime, type objects and eval loop are. Versions come from
 * the most exact source the file has: Py_Version (3.11+), the
 * _Py_DebugOffsets at _PyRuntime (3.13+), the soname or file name, a lone
 * version string in .rodata. Builds whose objects do not have the layouts
 * of bpf/python_layouts.h are refused with the reason.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/sym/debugfile.h"
#include "interp/python/elfscan.h"
#include "interp/python/pyint.h"

enum {
	W_RUNTIME,
	W_INTERP_HEAD,
	W_TSTATE_CURRENT,
	W_CODE_TYPE,
	W_PY_VERSION,
	W_EVAL,
	W_EVAL_COLD,
	W_EVALEX,
	W_EVALEX_COLD,
	W_UNICODE_TYPE,
	W_STRING_TYPE,
	W_BYTES_TYPE,
	/* Only debug builds define these (Py_REF_DEBUG, Py_TRACE_REFS). */
	W_REF_TOTAL,
	W_GLOBAL_REF_TOTAL,
	W_FORGET_REFERENCE,
	NR_WANTED,
};

static const struct py_sym_want wanted[NR_WANTED] = {
	[W_RUNTIME] = { "_PyRuntime" },
	[W_INTERP_HEAD] = { "interp_head" },
	[W_TSTATE_CURRENT] = { "_PyThreadState_Current" },
	[W_CODE_TYPE] = { "PyCode_Type" },
	[W_PY_VERSION] = { "Py_Version" },
	[W_EVAL] = { "_PyEval_EvalFrameDefault" },
	/* GCC's split-off cold part: "NAME.cold", older GCCs "NAME.cold.N". */
	[W_EVAL_COLD] = { "_PyEval_EvalFrameDefault.cold", true },
	[W_EVALEX] = { "PyEval_EvalFrameEx" },
	[W_EVALEX_COLD] = { "PyEval_EvalFrameEx.cold", true },
	[W_UNICODE_TYPE] = { "PyUnicode_Type" },
	[W_STRING_TYPE] = { "PyString_Type" },
	[W_BYTES_TYPE] = { "PyBytes_Type" },
	[W_REF_TOTAL] = { "_Py_RefTotal" },
	[W_GLOBAL_REF_TOTAL] = { "_Py_GetGlobalRefTotal" },
	[W_FORGET_REFERENCE] = { "_Py_ForgetReference" },
};

#define DEBUG_COOKIE "xdebugpy"

/* What a name says: "libpython3.6m.so.1.0", "python3.13t", "python2.7". */
struct name_version {
	int major, minor;
	char abiflags[4];
};

static bool parse_name(const char *name, struct name_version *nv)
{
	const char *p = name, *q;
	long major, minor;
	size_t flags = 0;

	if (!strncmp(p, "lib", 3))
		p += 3;
	if (strncmp(p, "python", 6))
		return false;
	p += 6;
	if (*p < '2' || *p > '3' || p[1] != '.')
		return false;
	major = *p - '0';
	p += 2;
	for (q = p, minor = 0; *q >= '0' && *q <= '9' && q - p < 3; q++)
		minor = minor * 10 + (*q - '0');
	if (q == p || (*q >= '0' && *q <= '9'))
		return false;
	while (*q >= 'a' && *q <= 'z' && flags < sizeof(nv->abiflags) - 1)
		nv->abiflags[flags++] = *q++;
	nv->abiflags[flags] = '\0';
	if (*q && *q != '.')
		return false;
	nv->major = (int)major;
	nv->minor = (int)minor;
	return true;
}

/* The version in the soname, else in the file's base name. */
static bool name_version(Elf *elf, const char *path, struct name_version *nv, bool *shared)
{
	char soname[256];
	const char *base;

	elf_file__soname(elf, soname, sizeof(soname));
	*shared = !strncmp(soname, "libpython", 9);
	if (soname[0] && parse_name(soname, nv))
		return true;
	if (!path)
		return false;
	base = strrchr(path, '/');
	return parse_name(base ? base + 1 : path, nv);
}

static void set_version(struct py_interp *pi, int major, int minor, int micro,
			enum py_version_source from)
{
	pi->major = major;
	pi->minor = minor;
	pi->micro = micro;
	pi->version_from = from;
}

/* The version from the file's own data; -ENOTSUP with why for a free-threaded build. */
static int data_version(Elf *elf, const struct py_sym_want *w, struct py_interp *pi,
			struct errmsg *why)
{
	uint8_t dbg[24];
	uint64_t hex;

	if (w[W_RUNTIME].found && !py_elf__read_vaddr(elf, w[W_RUNTIME].value, dbg, sizeof(dbg)) &&
	    !memcmp(dbg, DEBUG_COOKIE, 8)) {
		hex = py_u64(dbg, 8);
		if (py_u64(dbg, 16)) {
			errmsg__set(why, "free-threaded CPython %d.%d: its objects have other headers",
				    (int)(hex >> 24 & 0xff), (int)(hex >> 16 & 0xff));
			return -ENOTSUP;
		}
		pi->hexversion = (uint32_t)hex;
		set_version(pi, hex >> 24 & 0xff, hex >> 16 & 0xff, hex >> 8 & 0xff,
			    PY_VERSION_FROM_DEBUG_OFFSETS);
	}
	/* Py_Version is the more exact: it is what the build was, whatever came before. */
	if (w[W_PY_VERSION].found && w[W_PY_VERSION].size >= 4 &&
	    !py_elf__read_vaddr(elf, w[W_PY_VERSION].value, &hex, sizeof(hex))) {
		hex &= UINT32_MAX;
		pi->hexversion = (uint32_t)hex;
		set_version(pi, hex >> 24 & 0xff, hex >> 16 & 0xff, hex >> 8 & 0xff,
			    PY_VERSION_FROM_PY_VERSION);
	}
	return 0;
}

/* The eval loop's ranges: the function and its cold part, in the process. */
static void eval_ranges(const struct py_sym_want *w, struct py_interp *pi)
{
	static const int ids[] = { W_EVAL, W_EVAL_COLD, W_EVALEX, W_EVALEX_COLD };

	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		const struct py_sym_want *s = &w[ids[i]];

		/* 3.x's PyEval_EvalFrameEx only calls the eval loop: it runs no Python frame. */
		if ((ids[i] == W_EVALEX || ids[i] == W_EVALEX_COLD) && pi->major >= 3)
			continue;
		if (!s->found || !s->size || s->value + s->size < s->value ||
		    pi->nr_eval == PY_MAX_EVAL_RANGES)
			continue;
		pi->eval[pi->nr_eval++] = (struct py_range){ s->value + pi->bias,
							      s->value + s->size + pi->bias };
	}
}

/*
 * Symbols only .symtab has (interp_head, the cold parts), from the separate
 * debug file of a stripped binary.
 */
static void debug_symbols(Elf *elf, int fd, const char *path, struct py_sym_want *w,
			  struct py_interp *pi)
{
	char hex[2 * 64 + 1] = "", debug_path[PATH_MAX];
	struct py_sym_want more[NR_WANTED];
	enum elf_sym_source src;
	struct elf_file dh;

	if (elf_file__section(elf, SHT_SYMTAB, NULL) || !path)
		return;
	if (!elf_file__build_id(elf, hex, sizeof(hex)))
		hex[0] = '\0';
	if (elf_file__open_debug(elf, fd, hex, path, debug_path, sizeof(debug_path), &src, &dh))
		return;
	memcpy(more, wanted, sizeof(more));
	if (py_elf__symbols(dh.elf, more, NR_WANTED)) {
		for (size_t i = 0; i < NR_WANTED; i++) {
			if (w[i].found || !more[i].found)
				continue;
			w[i] = more[i];
			pi->symbols_from_debug_file = true;
		}
	}
	elf_file__close(&dh);
}

static int refuse(struct errmsg *why, const struct py_interp *pi, const char *reason)
{
	errmsg__set(why, "CPython %d.%d: %s", pi->major, pi->minor, reason);
	return -ENOTSUP;
}

static int describe(Elf *elf, int fd, const char *path, uint64_t bias, struct py_interp *pi,
		    struct errmsg *why)
{
	struct py_sym_want w[NR_WANTED];
	struct name_version nv = { 0 };
	bool named;
	int err;

	/*
	 * Every CPython exports its code type (executables link with
	 * -export-dynamic for extension modules); a python executable that
	 * links libpython does not. One look at .dynsym settles most files.
	 */
	memcpy(w, wanted, sizeof(w));
	if (!py_elf__dynsyms(elf, &w[W_CODE_TYPE], 1))
		return 0;
	memcpy(w, wanted, sizeof(w));
	py_elf__symbols(elf, w, NR_WANTED);
	memset(pi, 0, sizeof(*pi));
	pi->bias = bias;
	pi->micro = -1;
	named = name_version(elf, path, &nv, &pi->shared);
	if (named)
		set_version(pi, nv.major, nv.minor, -1, PY_VERSION_FROM_NAME);
	else if (!py_elf__rodata_version(elf, &pi->major, &pi->minor, &pi->micro))
		pi->version_from = PY_VERSION_FROM_RODATA;
	err = data_version(elf, w, pi, why);
	if (err)
		return err;
	if (!pi->major) {
		errmsg__set(why, "a CPython whose version neither its data nor its name tells");
		return -ENOTSUP;
	}
	if (strchr(nv.abiflags, 't'))
		return refuse(why, pi, "free-threaded build (its objects have other headers)");
	if (strchr(nv.abiflags, 'd') || w[W_REF_TOTAL].found || w[W_GLOBAL_REF_TOTAL].found ||
	    w[W_FORGET_REFERENCE].found)
		return refuse(why, pi, "debug build (its objects and states have other layouts)");
	pi->layout = py_layout__for_version(pi->major, pi->minor);
	if (!pi->layout)
		return refuse(why, pi, "a version whose layout is not known here");
	debug_symbols(elf, fd, path, w, pi);
	if (w[W_RUNTIME].found)
		pi->runtime = w[W_RUNTIME].value + bias;
	if (w[W_INTERP_HEAD].found)
		pi->interp_head = w[W_INTERP_HEAD].value + bias;
	if (w[W_TSTATE_CURRENT].found)
		pi->tstate_current = w[W_TSTATE_CURRENT].value + bias;
	pi->code_type = w[W_CODE_TYPE].value + bias;
	if (w[pi->major == 2 ? W_STRING_TYPE : W_UNICODE_TYPE].found)
		pi->str_type = w[pi->major == 2 ? W_STRING_TYPE : W_UNICODE_TYPE].value + bias;
	if (w[pi->major == 2 ? W_STRING_TYPE : W_BYTES_TYPE].found)
		pi->bytes_type = w[pi->major == 2 ? W_STRING_TYPE : W_BYTES_TYPE].value + bias;
	eval_ranges(w, pi);
	if (pi->layout->runtime_interp_head >= 0 && !pi->runtime)
		return refuse(why, pi, "no _PyRuntime symbol");
	if (pi->layout->runtime_interp_head < 0 && !pi->interp_head && !pi->tstate_current)
		return refuse(why, pi, "neither interp_head nor _PyThreadState_Current found");
	return 1;
}

int py_detect(int fd, const char *path, uint64_t bias, struct py_interp *pi, struct errmsg *why)
{
	struct elf_file h;
	int err = elf_file__open_copy(fd, &h);

	if (err)
		return err;
	err = describe(h.elf, h.fd, path, bias, pi, why);
	elf_file__close(&h);
	return err;
}

bool py_interp__in_eval(const struct py_interp *pi, uint64_t ip)
{
	for (unsigned int i = 0; i < pi->nr_eval && i < PY_MAX_EVAL_RANGES; i++)
		if (ip >= pi->eval[i].start && ip < pi->eval[i].end)
			return true;
	return false;
}
