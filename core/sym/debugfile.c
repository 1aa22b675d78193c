// SPDX-License-Identifier: GPL-2.0
#include "core/sym/debugfile.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core/lib/userfile.h"

static char debug_root[PATH_MAX] = "/usr/lib/debug";

void elf_symtab__set_debug_root(const char *dir)
{
	snprintf(debug_root, sizeof(debug_root), "%s", dir);
}

const char *elf_symtab__debug_root(void)
{
	return debug_root;
}

bool elf_file__ready(void)
{
	static int ready = -1;

	if (ready < 0)
		ready = elf_version(EV_CURRENT) != EV_NONE;
	return ready;
}

Elf_Scn *elf_file__section(Elf *elf, Elf64_Word type, const char *name)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *sname;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (type && sh.sh_type != type)
			continue;
		sname = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && (!sname || strcmp(sname, name)))
			continue;
		return scn;
	}
	return NULL;
}

int elf_file__each_symbol(Elf *elf, Elf_Scn *scn, elf_symbol_fn fn, void *ctx)
{
	size_t sym_size = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT), nr;
	Elf_Data *data, *strs;
	Elf_Scn *str_scn;
	GElf_Shdr sh;

	if (!scn || !sym_size || !gelf_getshdr(scn, &sh))
		return 0;
	data = elf_getdata(scn, NULL);
	str_scn = elf_getscn(elf, sh.sh_link);
	strs = str_scn ? elf_getdata(str_scn, NULL) : NULL;
	if (!data || !data->d_buf || !strs || !strs->d_buf)
		return 0;
	nr = data->d_size / sym_size;
	for (size_t i = 0; i < nr && i <= INT32_MAX; i++) {
		GElf_Sym sym;
		int ret;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		if (sym.st_shndx == SHN_UNDEF || sym.st_name >= strs->d_size)
			continue;
		ret = fn(ctx, &sym, (const char *)strs->d_buf + sym.st_name,
			 strs->d_size - sym.st_name);
		if (ret)
			return ret;
	}
	return 0;
}

void elf_file__soname(Elf *elf, char *out, size_t len)
{
	Elf_Scn *scn = elf_file__section(elf, SHT_DYNAMIC, NULL);
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	size_t dyn_size = gelf_fsize(elf, ELF_T_DYN, 1, EV_CURRENT);
	GElf_Shdr sh;

	out[0] = '\0';
	if (!data || !dyn_size || !gelf_getshdr(scn, &sh))
		return;
	for (size_t i = 0; i < data->d_size / dyn_size && i <= INT32_MAX; i++) {
		const char *name;
		GElf_Dyn dyn;

		if (!gelf_getdyn(data, (int)i, &dyn) || dyn.d_tag == DT_NULL)
			break;
		if (dyn.d_tag != DT_SONAME)
			continue;
		/* elf_strptr checks that the name ends within its table. */
		name = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
		if (name)
			snprintf(out, len, "%s", name);
		return;
	}
}

bool elf_file__build_id(Elf *elf, char *hex, size_t hex_len)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			continue;
		/* gelf_getnote keeps each note, its name and its description within the data. */
		while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			const unsigned char *desc = (const unsigned char *)data->d_buf + desc_off;

			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((const char *)data->d_buf + name_off, "GNU", 4) ||
			    nh.n_descsz > (hex_len - 1) / 2 || nh.n_descsz < 2)
				continue;
			for (size_t i = 0; i < nh.n_descsz; i++)
				sprintf(hex + 2 * i, "%02x", desc[i]);
			return true;
		}
	}
	return false;
}

struct crc_state {
	uLong crc;
};

static void crc_update(const void *buf, size_t n, void *ctx)
{
	struct crc_state *c = ctx;

	c->crc = crc32(c->crc, buf, (uInt)n);
}

/* The CRC of fd's first size bytes (its size when opened): a growing file is not followed. */
static bool crc_matches(int fd, uint64_t size, uint32_t want)
{
	struct crc_state c = { crc32(0L, Z_NULL, 0) };

	if (userfile__read(fd, size, crc_update, &c) != (int64_t)size)
		return false;
	return (uint32_t)c.crc == want;
}

static bool same_file(int a, int b)
{
	struct stat x, y;

	return a >= 0 && b >= 0 && !fstat(a, &x) && !fstat(b, &y) && x.st_dev == y.st_dev &&
	       x.st_ino == y.st_ino;
}

/* The name and CRC of .gnu_debuglink; false unless both lie within the section. */
static bool read_debuglink(Elf *elf, const char **name, uint32_t *crc)
{
	Elf_Scn *scn = elf_file__section(elf, SHT_PROGBITS, ".gnu_debuglink");
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	size_t len, crc_off;

	if (!data || !data->d_buf)
		return false;
	*name = data->d_buf;
	len = strnlen(*name, data->d_size);
	/* The CRC follows the name's NUL, 4-byte aligned, in the file's byte order. */
	crc_off = (len + 4) & ~3UL;
	if (len == data->d_size || crc_off + 4 > data->d_size)
		return false;
	memcpy(crc, (const char *)data->d_buf + crc_off, 4);
	/* A file name, never a path: "../../dev/zero" must not reach the device. */
	return len && !strchr(*name, '/') && strcmp(*name, ".") && strcmp(*name, "..");
}

/*
 * The file named by .gnu_debuglink, as gdb looks for it: next to the binary,
 * in .debug/ there, under the debug root; its CRC checked. Returns an open
 * fd and its path in out, or -ENOENT.
 */
static int find_debuglink(Elf *elf, int self_fd, uid_t owner, const char *path, char *out,
			  size_t out_len)
{
	char dir[PATH_MAX], rel[PATH_MAX];
	const char *name, *slash;
	uint32_t crc;

	if (!path || !read_debuglink(elf, &name, &crc))
		return -ENOENT;
	slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path) >= (int)sizeof(dir))
		return -ENOENT;
	if (!dir[0])
		snprintf(dir, sizeof(dir), "/");
	for (int i = 0; i < 3; i++) {
		const char *base = i < 2 ? dir : debug_root;
		uint64_t size;
		int fd, n;

		if (i == 0)
			n = snprintf(rel, sizeof(rel), "%s", name);
		else if (i == 1)
			n = snprintf(rel, sizeof(rel), ".debug/%s", name);
		else if (dir[0] == '/')
			n = snprintf(rel, sizeof(rel), "%s/%s", dir + 1 + strspn(dir + 1, "/"),
				     name);
		else
			break;
		if (n >= (int)sizeof(rel) ||
		    snprintf(out, out_len, "%s/%s", base, rel) >= (int)out_len)
			continue;
		fd = userfile__open_owned(base, rel[0] == '/' ? rel + 1 : rel, owner,
					  USERFILE_MAX_SIZE, &size);
		if (fd < 0)
			continue;
		if (!same_file(fd, self_fd) && crc_matches(fd, size, crc))
			return fd;
		close(fd);
	}
	return -ENOENT;
}

/*
 * libelf reads what is asked for (ELF_C_READ): a mapping of a file that its
 * owner truncates meanwhile would end the profiler with SIGBUS.
 */
int elf_file__open_fd(int fd, struct elf_file *h)
{
	h->fd = fd;
	h->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!h->elf || elf_kind(h->elf) != ELF_K_ELF) {
		if (h->elf)
			elf_end(h->elf);
		close(fd);
		h->elf = NULL;
		h->fd = -1;
		return -ENOEXEC;
	}
	return 0;
}

int elf_file__open_copy(int fd, struct elf_file *h)
{
	int own;

	if (!elf_file__ready())
		return -ENOEXEC;
	own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (own < 0)
		return -errno;
	return elf_file__open_fd(own, h);
}

int elf_file__open(const char *path, struct elf_file *h)
{
	uint64_t size;
	int fd;

	h->elf = NULL;
	h->fd = -1;
	/* Symlinks are fine here: path is /proc/self/fd/N or where a mapping's file was. */
	fd = userfile__open(path, false, UINT64_MAX, &size);
	if (fd < 0)
		return fd == -EINVAL ? -ENOEXEC : fd;
	return elf_file__open_fd(fd, h);
}

void elf_file__close(struct elf_file *h)
{
	if (h->elf)
		elf_end(h->elf);
	if (h->fd >= 0)
		close(h->fd);
}

/*
 * Whether the debug file dh belongs to the binary whose build-id is hex:
 * it must carry the same note. gdb takes a debug file without one on
 * trust; here it would lend another build's names to every frame.
 */
static bool build_id_matches(const struct elf_file *dh, const char *hex)
{
	char own[2 * 64 + 1];

	return elf_file__build_id(dh->elf, own, sizeof(own)) && !strcmp(own, hex);
}

/*
 * Who may give the binary open as fd its debug files: its owner (and root).
 * A binary that cannot be stat'ed has only root's.
 */
static uid_t binary_owner(int fd)
{
	struct stat st;

	return fd >= 0 && !fstat(fd, &st) ? st.st_uid : 0;
}

/*
 * The build-id names the file exactly, the debuglink by name and CRC; a
 * binary with a build-id takes only a debug file with the same one, found
 * either way (a CRC is four bytes anyone can make match). Both are
 * copied as easily into a file of one's own: a debug file is taken only
 * from a place that the binary's owner or root controls (issue 32: a
 * .debug/ made by another user in a sticky directory such as /tmp, beside
 * a root binary, named every frame of it).
 */
int elf_file__open_debug(Elf *elf, int self_fd, const char *hex, const char *path, char *out,
			 size_t len, enum elf_sym_source *src, struct elf_file *dh)
{
	uid_t owner = binary_owner(self_fd);
	bool other_build = false;
	char rel[160];
	uint64_t size;
	int fd;

	if (strlen(hex) > 2 &&
	    snprintf(rel, sizeof(rel), ".build-id/%.2s/%s.debug", hex, hex + 2) <
		    (int)sizeof(rel) &&
	    snprintf(out, len, "%s/%s", debug_root, rel) < (int)len) {
		fd = userfile__open_owned(debug_root, rel, owner, USERFILE_MAX_SIZE, &size);
		if (fd >= 0 && !elf_file__open_fd(fd, dh)) {
			if (build_id_matches(dh, hex)) {
				*src = ELF_SYM_DEBUG_BUILD_ID;
				return 0;
			}
			other_build = true;
			elf_file__close(dh);
		}
	}
	fd = find_debuglink(elf, self_fd, owner, path, out, len);
	if (fd >= 0 && !elf_file__open_fd(fd, dh)) {
		if (!hex[0] || build_id_matches(dh, hex)) {
			*src = ELF_SYM_DEBUG_LINK;
			return 0;
		}
		other_build = true;
		elf_file__close(dh);
	}
	return other_build ? -ESTALE : -ENOENT;
}

/* Whether elf holds DWARF itself (an unstripped binary, or a debug file). */
static bool has_dwarf(Elf *elf)
{
	Elf_Scn *scn = elf_file__section(elf, 0, ".debug_info");
	GElf_Shdr sh;

	if (!scn)
		scn = elf_file__section(elf, 0, ".zdebug_info");
	return scn && gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS && sh.sh_size;
}

int elf_dwarf_fd(const char *open_path, const char *path)
{
	enum elf_sym_source src;
	char hex[2 * 64 + 1] = "", debug_path[PATH_MAX];
	struct elf_file h, dh;
	int fd = -ENOENT;

	if (!elf_file__ready() || elf_file__open(open_path, &h))
		return -ENOENT;
	if (has_dwarf(h.elf)) {
		/* The fd goes to the caller, the Elf does not. */
		elf_end(h.elf);
		return h.fd;
	}
	if (!elf_file__build_id(h.elf, hex, sizeof(hex)))
		hex[0] = '\0';
	if (!elf_file__open_debug(h.elf, h.fd, hex, path, debug_path, sizeof(debug_path), &src,
				  &dh)) {
		if (has_dwarf(dh.elf)) {
			fd = dh.fd;
			dh.fd = -1;
		}
		elf_file__close(&dh);
	}
	elf_file__close(&h);
	return fd;
}

int elf_debug_file(const char *open_path, const char *path, char *out, size_t len)
{
	enum elf_sym_source src;
	char hex[2 * 64 + 1] = "";
	struct elf_file h, dh;
	int err;

	if (!elf_file__ready() || elf_file__open(open_path, &h))
		return -ENOENT;
	if (!elf_file__build_id(h.elf, hex, sizeof(hex)))
		hex[0] = '\0';
	err = elf_file__open_debug(h.elf, h.fd, hex, path, out, len, &src, &dh);
	if (!err)
		elf_file__close(&dh);
	elf_file__close(&h);
	return err ? -ENOENT : 0;
}
