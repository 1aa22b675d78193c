// SPDX-License-Identifier: GPL-2.0
#include "core/sym/elfplt.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/*
 * The linker writes no symbols for PLT stubs. Rather than trusting that the
 * n-th stub belongs to the n-th relocation (not true of .plt.got, nor of
 * .plt.sec next to .plt's header), each stub's "jmp *slot(%rip)" is decoded
 * and the slot looked up among the relocations, as objdump does.
 */
struct got_slot {
	uint64_t addr;
	const char *name;	/* NULL: IRELATIVE */
	uint64_t resolver;
};

static int cmp_slot(const void *a, const void *b)
{
	const struct got_slot *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static const struct got_slot *find_slot(const struct got_slot *slots, size_t nr, uint64_t addr)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (slots[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < nr && slots[lo].addr == addr ? &slots[lo] : NULL;
}

/* The symbol table a relocation section refers to, if it is one. */
static Elf_Data *reloc_symbols(Elf *elf, const GElf_Shdr *rel, GElf_Shdr *symsh)
{
	Elf_Scn *scn = rel->sh_link ? elf_getscn(elf, rel->sh_link) : NULL;
	Elf_Data *data;

	if (!scn || !gelf_getshdr(scn, symsh) ||
	    (symsh->sh_type != SHT_DYNSYM && symsh->sh_type != SHT_SYMTAB))
		return NULL;
	data = elf_getdata(scn, NULL);
	return data && data->d_buf ? data : NULL;
}

/*
 * Named GOT slots of the allocated RELA sections, sorted: .rela.plt, and
 * .rela.dyn only for .plt.got stubs (GLOB_DAT): in a large library it is
 * megabytes of relative relocations.
 */
static int collect_slots(Elf *elf, size_t shstrndx, bool plt_got, struct got_slot **out,
			 size_t *nr_out)
{
	size_t rela_size = gelf_fsize(elf, ELF_T_RELA, 1, EV_CURRENT), cap = 0, nr = 0;
	struct got_slot *slots = NULL;
	Elf_Scn *scn = NULL;

	if (!rela_size)
		return -EINVAL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh, symsh;
		Elf_Data *data, *syms;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !(sh.sh_flags & SHF_ALLOC))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!plt_got && (!name || strcmp(name, ".rela.plt")))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			continue;
		syms = reloc_symbols(elf, &sh, &symsh);
		for (size_t i = 0; i < data->d_size / rela_size; i++) {
			struct got_slot slot = { 0 };
			GElf_Rela rela;
			GElf_Sym sym;

			if (!gelf_getrela(data, (int)i, &rela))
				break;
			switch (GELF_R_TYPE(rela.r_info)) {
			case R_X86_64_JUMP_SLOT:
			case R_X86_64_GLOB_DAT:	/* .plt.got stubs jump through .got */
				if (!syms || !GELF_R_SYM(rela.r_info) ||
				    !gelf_getsym(syms, (int)GELF_R_SYM(rela.r_info), &sym))
					continue;
				slot.name = elf_strptr(elf, symsh.sh_link, sym.st_name);
				if (!slot.name || !*slot.name)
					continue;
				break;
			case R_X86_64_IRELATIVE:
				slot.resolver = rela.r_addend;
				break;
			default:
				continue;
			}
			slot.addr = rela.r_offset;
			if (nr == cap) {
				size_t ncap = cap ? cap * 2 : 64;
				struct got_slot *tmp = realloc(slots, ncap * sizeof(*tmp));

				if (!tmp) {
					free(slots);
					return -ENOMEM;
				}
				slots = tmp;
				cap = ncap;
			}
			slots[nr++] = slot;
		}
	}
	if (nr)
		qsort(slots, nr, sizeof(*slots), cmp_slot);
	*out = slots;
	*nr_out = nr;
	return 0;
}

static const char *const plt_sections[] = { ".plt", ".plt.sec", ".plt.got", ".plt.bnd" };

/* Entry size: as stated when it is one x86-64 linkers use, else theirs by section. */
static size_t entry_size(const GElf_Shdr *sh, const char *name)
{
	if (sh->sh_entsize == 8 || sh->sh_entsize == 16)
		return sh->sh_entsize;
	return strcmp(name, ".plt.got") ? 16 : 8;
}

/* The name of scn if it is a PLT section of code, else NULL. */
static const char *plt_section(Elf *elf, size_t shstrndx, Elf_Scn *scn, GElf_Shdr *sh)
{
	const char *name;

	if (!gelf_getshdr(scn, sh) || sh->sh_type != SHT_PROGBITS || !sh->sh_size ||
	    (sh->sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) != (SHF_ALLOC | SHF_EXECINSTR))
		return NULL;
	name = elf_strptr(elf, shstrndx, sh->sh_name);
	for (size_t i = 0; name && i < sizeof(plt_sections) / sizeof(plt_sections[0]); i++) {
		if (!strcmp(name, plt_sections[i]))
			return name;
	}
	return NULL;
}

/*
 * The GOT slot a stub jumps through: "[endbr64] [bnd] jmp *disp32(%rip)" at
 * its start. The lazy .plt's header (push, then jmp) and IBT .plt entries
 * (endbr64, push, jmp rel32) do not match: they are not a function's stub.
 */
static bool stub_slot(const unsigned char *p, size_t size, uint64_t addr, uint64_t *slot)
{
	static const unsigned char endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	size_t k = 0;
	int32_t disp;

	if (size >= sizeof(endbr64) && !memcmp(p, endbr64, sizeof(endbr64)))
		k += sizeof(endbr64);
	if (k < size && p[k] == 0xf2)
		k++;
	if (k + 6 > size || p[k] != 0xff || p[k + 1] != 0x25)
		return false;
	disp = (int32_t)((uint32_t)p[k + 2] | (uint32_t)p[k + 3] << 8 | (uint32_t)p[k + 4] << 16 |
			 (uint32_t)p[k + 5] << 24);
	*slot = addr + k + 6 + (int64_t)disp;
	return true;
}

int elf_plt__for_each(Elf *elf, plt_stub_fn fn, void *ctx)
{
	struct got_slot *slots = NULL;
	size_t nr_slots = 0, shstrndx;
	bool has_plt = false, plt_got = false;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	int err, count = 0;

	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name = plt_section(elf, shstrndx, scn, &sh);

		has_plt |= name != NULL;
		plt_got |= name && !strcmp(name, ".plt.got");
	}
	if (!has_plt)
		return 0;
	err = collect_slots(elf, shstrndx, plt_got, &slots, &nr_slots);
	if (err || !nr_slots)
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name = plt_section(elf, shstrndx, scn, &sh);
		Elf_Data *data;
		size_t size;

		if (!name || !(data = elf_getdata(scn, NULL)) || !data->d_buf)
			continue;
		size = entry_size(&sh, name);
		for (size_t i = 0; i < data->d_size / size; i++) {
			const struct got_slot *s;
			struct plt_stub stub;
			uint64_t slot;

			stub.addr = sh.sh_addr + i * size;
			if (!stub_slot((const unsigned char *)data->d_buf + i * size, size,
				       stub.addr, &slot) ||
			    !(s = find_slot(slots, nr_slots, slot)))
				continue;
			stub.size = size;
			stub.name = s->name;
			stub.resolver = s->resolver;
			err = fn(&stub, ctx);
			if (err)
				goto out;
			count++;
		}
	}
out:
	free(slots);
	return err ? err : count;
}
