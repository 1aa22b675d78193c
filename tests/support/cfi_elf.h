/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An x86-64 ELF file made in memory around given unwind tables: its
 * .eh_frame_hdr (at CFI_ELF_HDR_AT, with a PT_GNU_EH_FRAME if it has any
 * bytes), its .eh_frame (gap bytes after the header, as in the binary a
 * seed came from) and its .debug_frame, in one executable PT_LOAD of the
 * whole file at vaddr 0, memsz bytes long (at least the file). For the
 * fuzz targets and tests of the unwinder and the unwind tables
 * (header-only: the fuzz targets link none of tests/support).
 */
#ifndef TESTS_SUPPORT_CFI_ELF_H
#define TESTS_SUPPORT_CFI_ELF_H

#include <elf.h>
#include <stdint.h>
#include <string.h>

#define CFI_ELF_HDR_AT 0x100

struct cfi_elf {
	const uint8_t *hdr, *eh, *df;
	size_t hdr_len, eh_len, df_len;
	unsigned int gap;
	uint64_t memsz;
};

static inline size_t cfi_elf__align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* The file in out; returns its size, 0 if it does not fit cap. */
static inline size_t cfi_elf__make(unsigned char *out, size_t cap, const struct cfi_elf *p)
{
	static const char names[] = "\0.eh_frame_hdr\0.eh_frame\0.debug_frame\0.shstrtab";
	size_t eh_at = CFI_ELF_HDR_AT + p->hdr_len + p->gap;
	size_t df_at = cfi_elf__align8(eh_at + p->eh_len);
	size_t str_at = df_at + p->df_len, sh_at = cfi_elf__align8(str_at + sizeof(names));
	size_t size = sh_at + 5 * sizeof(Elf64_Shdr);
	Elf64_Ehdr *e = (Elf64_Ehdr *)out;
	Elf64_Phdr *ph = (Elf64_Phdr *)(out + sizeof(*e));
	Elf64_Shdr *sh = (Elf64_Shdr *)(out + sh_at);

	if (size > cap)
		return 0;
	memset(out, 0, size);
	memcpy(e->e_ident, ELFMAG, SELFMAG);
	e->e_ident[EI_CLASS] = ELFCLASS64;
	e->e_ident[EI_DATA] = ELFDATA2LSB;
	e->e_ident[EI_VERSION] = EV_CURRENT;
	e->e_type = ET_DYN;
	e->e_machine = EM_X86_64;
	e->e_version = EV_CURRENT;
	e->e_phoff = sizeof(*e);
	e->e_shoff = sh_at;
	e->e_ehsize = sizeof(*e);
	e->e_phentsize = sizeof(*ph);
	e->e_phnum = p->hdr_len ? 2 : 1;
	e->e_shentsize = sizeof(*sh);
	e->e_shnum = 5;
	e->e_shstrndx = 4;
	ph[0].p_type = PT_LOAD;
	ph[0].p_flags = PF_R | PF_X;
	ph[0].p_filesz = size;
	ph[0].p_memsz = p->memsz > size ? p->memsz : size;
	ph[0].p_align = 0x1000;
	ph[1].p_type = PT_GNU_EH_FRAME;
	ph[1].p_flags = PF_R;
	ph[1].p_offset = ph[1].p_vaddr = CFI_ELF_HDR_AT;
	ph[1].p_filesz = ph[1].p_memsz = p->hdr_len;
	ph[1].p_align = 4;
	if (p->hdr_len)
		memcpy(out + CFI_ELF_HDR_AT, p->hdr, p->hdr_len);
	if (p->eh_len)
		memcpy(out + eh_at, p->eh, p->eh_len);
	if (p->df_len)
		memcpy(out + df_at, p->df, p->df_len);
	memcpy(out + str_at, names, sizeof(names));
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC,
			      .sh_addr = CFI_ELF_HDR_AT, .sh_offset = CFI_ELF_HDR_AT,
			      .sh_size = p->hdr_len };
	sh[2] = (Elf64_Shdr){ .sh_name = 15, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC,
			      .sh_addr = eh_at, .sh_offset = eh_at, .sh_size = p->eh_len };
	sh[3] = (Elf64_Shdr){ .sh_name = 25, .sh_type = SHT_PROGBITS, .sh_offset = df_at,
			      .sh_size = p->df_len };
	sh[4] = (Elf64_Shdr){ .sh_name = 38, .sh_type = SHT_STRTAB, .sh_offset = str_at,
			      .sh_size = sizeof(names) };
	return size;
}

#endif
