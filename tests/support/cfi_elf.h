/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An x86-64 ELF image made in memory around a given .eh_frame (or
 * .debug_frame): one PT_LOAD of the whole file at vaddr 0, executable,
 * memsz bytes long; the section at file offset and vaddr CFI_ELF_SECTION.
 * For tests and fuzz targets of the unwind tables (header-only: the fuzz
 * targets link none of tests/support).
 */
#ifndef TESTS_SUPPORT_CFI_ELF_H
#define TESTS_SUPPORT_CFI_ELF_H

#include <elf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define CFI_ELF_SECTION 0x100

/* Returns a malloc'd image of *size bytes, or NULL. */
static inline unsigned char *cfi_elf(const void *sec, size_t len, bool debug_frame,
				     uint64_t memsz, size_t *size)
{
	static const char names[] = "\0.shstrtab\0.eh_frame\0.debug_frame";
	size_t str = CFI_ELF_SECTION + len, sh = (str + sizeof(names) + 7) & ~(size_t)7;
	size_t total = sh + 3 * sizeof(Elf64_Shdr);
	unsigned char *b = calloc(1, total);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
	Elf64_Phdr *ph = (Elf64_Phdr *)(b + sizeof(*eh));
	Elf64_Shdr *s = (Elf64_Shdr *)(b + sh);

	if (!b)
		return NULL;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_shoff = sh;
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 1;
	eh->e_shentsize = sizeof(*s);
	eh->e_shnum = 3;
	eh->e_shstrndx = 1;
	ph->p_type = PT_LOAD;
	ph->p_flags = PF_R | PF_X;
	ph->p_filesz = total;
	ph->p_memsz = memsz > total ? memsz : total;
	ph->p_align = 0x1000;
	memcpy(b + CFI_ELF_SECTION, sec, len);
	memcpy(b + str, names, sizeof(names));
	s[1].sh_name = 1;
	s[1].sh_type = SHT_STRTAB;
	s[1].sh_offset = str;
	s[1].sh_size = sizeof(names);
	s[2].sh_name = debug_frame ? 21 : 11;
	s[2].sh_type = SHT_PROGBITS;
	s[2].sh_flags = debug_frame ? 0 : SHF_ALLOC;
	s[2].sh_addr = debug_frame ? 0 : CFI_ELF_SECTION;
	s[2].sh_offset = CFI_ELF_SECTION;
	s[2].sh_size = len;
	*size = total;
	return b;
}

#endif
