// SPDX-License-Identifier: GPL-2.0
/*
 * Whether a mapped ELF file is Node.js, its versions and V8's layout. A
 * Node binary is told by what only Node exports: node_module_register,
 * the entry point of every native addon, with V8's version variables
 * (v8::internal::Version::major_ and the rest, initialized data in every
 * release read here). The Node version is from strings built with it; the
 * layout follows the V8 version, which Node's own does not fix (Node
 * patches V8 within a major).
 */
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/sym/debugfile.h"
#include "interp/node/nodeint.h"

static int v8_version(const struct node_consts *c, struct node_interp *ni)
{
	int32_t v[4];

	if (!node_consts__get(c, "_ZN2v88internal7Version6major_E", &v[0]) ||
	    !node_consts__get(c, "_ZN2v88internal7Version6minor_E", &v[1]) ||
	    !node_consts__get(c, "_ZN2v88internal7Version6build_E", &v[2]))
		return -ENOENT;
	if (!node_consts__get(c, "_ZN2v88internal7Version6patch_E", &v[3]))
		v[3] = 0;
	/* As V8 numbers its releases: a byte each for major and minor, 16 bits for the build. */
	if (v[0] < 1 || v[0] > 0xff || v[1] < 0 || v[1] > 0xff || v[2] < 0 || v[2] > 0xffff ||
	    v[3] < 0 || v[3] > 0xffff)
		return -ERANGE;
	ni->v8_major = v[0];
	ni->v8_minor = v[1];
	ni->v8_build = v[2];
	ni->v8_patch = v[3];
	return 0;
}

static size_t count_v8dbg(const struct node_consts *c)
{
	size_t n = 0;

	for (size_t i = 0; i < c->nr; i++)
		n += !strncmp(c->v[i].name, "v8dbg_", 6);
	return n;
}

static int refuse(const struct node_interp *ni, struct errmsg *why, int err)
{
	char reason[sizeof(why->text)], node[48] = "Node.js";

	snprintf(reason, sizeof(reason), "%s", why->text);
	if (ni->node_major >= 0)
		snprintf(node, sizeof(node), "Node.js %d.%d.%d", ni->node_major, ni->node_minor,
			 ni->node_patch);
	if (ni->v8_major)
		errmsg__set(why, "%s (V8 %d.%d.%d): %s", node, ni->v8_major, ni->v8_minor,
			    ni->v8_build, reason);
	else
		errmsg__set(why, "%s: %s", node, reason);
	return err;
}

int node_detect_elf(Elf *elf, uint64_t bias, struct node_interp *ni, struct errmsg *why)
{
	struct node_consts c;
	int err;

	memset(ni, 0, sizeof(*ni));
	ni->bias = bias;
	ni->node_major = ni->node_minor = ni->node_patch = -1;
	/* x86-64 Node only; and libelf's gelf_fsize faults on a file of no class. */
	if (elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64)
		return 0;
	err = node_consts__read(elf, &c, false);
	if (err)
		return err;
	/* One look at .dynsym settles most files: only Node exports the addon entry. */
	if (!c.has_register) {
		node_consts__free(&c);
		return 0;
	}
	if (node_elf__rodata_version(elf, &ni->node_major, &ni->node_minor, &ni->node_patch))
		ni->node_major = ni->node_minor = ni->node_patch = -1;
	ni->shared = node_elf__is_libnode(elf);
	err = v8_version(&c, ni);
	why->text[0] = '\0';
	if (!err)
		err = node_v8_layout__fill(&ni->v8, &c, ni->v8_major, ni->v8_minor, ni->v8_build,
					   why);
	/* A build that exports less keeps the rest in .symtab, if it was not stripped. */
	if (err && !c.symtab_read && elf_file__section(elf, SHT_SYMTAB, NULL)) {
		node_consts__free(&c);
		err = node_consts__read(elf, &c, true);
		if (err)
			return err;
		ni->symtab_used = true;
		why->text[0] = '\0';
		err = v8_version(&c, ni);
		if (!err)
			err = node_v8_layout__fill(&ni->v8, &c, ni->v8_major, ni->v8_minor,
						   ni->v8_build, why);
	}
	ni->nr_consts = (unsigned int)count_v8dbg(&c);
	node_consts__free(&c);
	if (err == -ENOENT || err == -ERANGE) {
		errmsg__set(why, "no V8 version (v8::internal::Version) %s",
			    err == -ENOENT ? "in its symbols" : "in range");
		return refuse(ni, why, -ENOTSUP);
	}
	if (err)
		return refuse(ni, why, err);
	return 1;
}

int node_detect(int fd, uint64_t bias, struct node_interp *ni, struct errmsg *why)
{
	struct elf_file h;
	int err = elf_file__open_copy(fd, &h);

	if (err)
		return err;
	err = node_detect_elf(h.elf, bias, ni, why);
	elf_file__close(&h);
	return err;
}
