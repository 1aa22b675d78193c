// SPDX-License-Identifier: GPL-2.0
/*
 * A process whose /proc/PID/cmdline reads as the head of an ELF file with
 * build-id HEX (a header, one PT_NOTE program header, the note), and which
 * is not dumpable, so that its /proc files are root's (issue 32: a root-
 * owned 0444 file of contents a user chose). It runs itself again with
 * that head as its arguments (each NUL of it ends one), then sleeps for
 * $ELFHEAD_SECONDS (10 if unset). Usage: elfhead HEX
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define NOTE_OFF (sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr))

struct head {
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	Elf64_Nhdr nh;
	char name[4];
	unsigned char id[20];
	char end;	/* the NUL that ends the last argument */
} __attribute__((packed));

int main(int argc, char **argv)
{
	static struct head h;
	char *args[sizeof(h) + 1], *p = (char *)&h;
	const char *sec = getenv("ELFHEAD_SECONDS");
	int n = 0;

	if (argc > 0 && argv[0][0] == ELFMAG0) {
		/* The head is our arguments now: hide them from their owner's reach. */
		prctl(PR_SET_DUMPABLE, 0);
		sleep(sec ? (unsigned int)atoi(sec) : 10);
		return 0;
	}
	if (argc < 2 || strlen(argv[1]) != 40)
		return 2;
	memcpy(h.eh.e_ident, ELFMAG, SELFMAG);
	h.eh.e_ident[EI_CLASS] = ELFCLASS64;
	h.eh.e_ident[EI_DATA] = ELFDATA2LSB;
	h.eh.e_ident[EI_VERSION] = EV_CURRENT;
	h.eh.e_type = ET_DYN;
	h.eh.e_machine = EM_X86_64;
	h.eh.e_version = EV_CURRENT;
	h.eh.e_phoff = sizeof(Elf64_Ehdr);
	h.eh.e_ehsize = sizeof(Elf64_Ehdr);
	h.eh.e_phentsize = sizeof(Elf64_Phdr);
	h.eh.e_phnum = 1;
	h.ph.p_type = PT_NOTE;
	h.ph.p_flags = PF_R;
	h.ph.p_offset = NOTE_OFF;
	h.ph.p_vaddr = NOTE_OFF;
	h.ph.p_filesz = h.ph.p_memsz = sizeof(Elf64_Nhdr) + 4 + 20;
	h.ph.p_align = 4;
	h.nh.n_namesz = 4;
	h.nh.n_descsz = 20;
	h.nh.n_type = NT_GNU_BUILD_ID;
	memcpy(h.name, "GNU", 4);
	for (int i = 0; i < 20; i++) {
		unsigned int byte;

		if (sscanf(argv[1] + 2 * i, "%2x", &byte) != 1)
			return 2;
		h.id[i] = (unsigned char)byte;
	}
	/* Every NUL of the head ends an argument: the one after it starts the next. */
	args[n++] = p;
	for (size_t i = 0; i + 1 < sizeof(h); i++)
		if (!p[i])
			args[n++] = p + i + 1;
	args[n] = NULL;
	execv("/proc/self/exe", args);
	perror("elfhead: exec");
	return 1;
}
