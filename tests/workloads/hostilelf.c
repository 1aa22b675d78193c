// SPDX-License-Identifier: GPL-2.0
/*
 * Writes an ELF file a hostile user could leave for the profiler to read,
 * or a harmless one of the same size, then (with SECONDS) maps it and runs
 * its code, so that a profile has to symbolize it.
 * Usage: hostilelf MODE PATH [SECONDS]
 *   names   8192 functions whose names are suffixes of one 128 KiB string
 *   plain   the same functions with short names of their own (same size)
 *   zdebug  a .debug_info section (SHF_COMPRESSED) that inflates to 2 GiB
 *   debug   the same section inflating to 8 MiB, padded to the same size
 * Prints "ready PATH" once the file is written and mapped.
 */
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define NR_FUNCS 8192
#define FUNC_SIZE 16
#define LONG_NAME (128 << 10)
#define TEXT_OFF 0x1000

enum section { S_NULL, S_TEXT, S_SYMTAB, S_STRTAB, S_DEBUG, S_SHSTRTAB, NR_SECTIONS };

static const char shstrtab[] = "\0.text\0.symtab\0.strtab\0.debug_info\0.shstrtab";

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/*
 * Each function: movabs $100000, %rcx; 1: dec %rcx; jnz 1b; ret (16 bytes),
 * a loop long enough to be sampled.
 */
static void write_text(unsigned char *text)
{
	static const unsigned char fn[FUNC_SIZE] = { 0x48, 0xb9, 0xa0, 0x86, 0x01, 0, 0, 0, 0, 0,
						     0x48, 0xff, 0xc9, 0x75, 0xfb, 0xc3 };

	for (int i = 0; i < NR_FUNCS; i++)
		memcpy(text + i * FUNC_SIZE, fn, FUNC_SIZE);
}

/* The string table: one long name (names) or a short name per function. */
static char *make_strtab(int hostile, size_t *len)
{
	char *s = calloc(1, LONG_NAME + 2);
	size_t n = 1;

	if (!s)
		exit(1);
	if (hostile) {
		memset(s + 1, 'f', LONG_NAME);
		n += LONG_NAME + 1;
	} else {
		for (int i = 0; i < NR_FUNCS; i++)
			n += sprintf(s + n, "fn_%011d", i) + 1;
	}
	*len = n;
	return s;
}

/* name_off of function i: a suffix of the long name, or its own name. */
static uint32_t name_of(int hostile, int i)
{
	return hostile ? 1 + (uint32_t)i : 1 + (uint32_t)i * 15;
}

/*
 * A compressed section (Elf64_Chdr, zlib) of size zeros (a multiple of
 * 1 MiB); *len its size. Deflating gigabytes would take minutes: after a
 * full flush deflate forgets what it saw, so each further MiB of zeros
 * compresses to the same bytes, which are repeated, and the stream ends
 * with the Adler-32 of size zeros (1, and size mod 65521).
 */
static unsigned char *make_debug(uint64_t size, size_t *len)
{
	Elf64_Chdr ch = { .ch_type = ELFCOMPRESS_ZLIB, .ch_size = size, .ch_addralign = 1 };
	size_t chunk = 1 << 20, nr = size / chunk, first, each, cap = 1 << 16;
	unsigned char *zeros = calloc(1, chunk), *a = malloc(cap), *b = malloc(cap), *out, *p;
	unsigned char end[64];
	size_t end_len;
	uint32_t adler = (uint32_t)(size % 65521) << 16 | 1;
	z_stream zs = { 0 };

	if (!zeros || !a || !b || deflateInit(&zs, 9) != Z_OK)
		exit(1);
	zs.next_in = zeros, zs.avail_in = chunk, zs.next_out = a, zs.avail_out = cap;
	if (deflate(&zs, Z_FULL_FLUSH) != Z_OK || zs.avail_in)
		exit(1);
	first = cap - zs.avail_out;
	zs.next_in = zeros, zs.avail_in = chunk, zs.next_out = b, zs.avail_out = cap;
	if (deflate(&zs, Z_FULL_FLUSH) != Z_OK || zs.avail_in)
		exit(1);
	each = cap - zs.avail_out;
	zs.next_out = end, zs.avail_out = sizeof(end);
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END)
		exit(1);
	end_len = sizeof(end) - zs.avail_out;
	deflateEnd(&zs);
	end[end_len - 4] = adler >> 24, end[end_len - 3] = adler >> 16;
	end[end_len - 2] = adler >> 8, end[end_len - 1] = adler;
	*len = sizeof(ch) + first + (nr - 1) * each + end_len;
	out = p = malloc(*len);
	if (!out)
		exit(1);
	memcpy(p, &ch, sizeof(ch)), p += sizeof(ch);
	memcpy(p, a, first), p += first;
	for (size_t i = 1; i < nr; i++)
		memcpy(p, b, each), p += each;
	memcpy(p, end, end_len);
	free(zeros);
	free(a);
	free(b);
	return out;
}

static void write_elf(const char *mode, const char *path)
{
	int with_debug = !strcmp(mode, "zdebug") || !strcmp(mode, "debug");
	size_t text_len = NR_FUNCS * FUNC_SIZE, strtab_len, debug_len = 0, pad = 0;
	size_t sym_len = (NR_FUNCS + 1) * sizeof(Elf64_Sym);
	Elf64_Shdr sh[NR_SECTIONS] = { 0 };
	unsigned char *debug = NULL;
	char *strtab = make_strtab(!strcmp(mode, "names"), &strtab_len);
	Elf64_Ehdr eh = { 0 };
	Elf64_Phdr ph = { 0 };
	unsigned char *buf;
	size_t off;
	FILE *f;

	if (with_debug) {
		debug = make_debug(!strcmp(mode, "zdebug") ? 2ULL << 30 : 8ULL << 20, &debug_len);
		/* The harmless file as large as the hostile one: zeros after its section. */
		if (!strcmp(mode, "debug"))
			pad = 2048 * 1024 - debug_len;
	}
	sh[S_TEXT] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS,
				   .sh_flags = SHF_ALLOC | SHF_EXECINSTR, .sh_addr = TEXT_OFF,
				   .sh_offset = TEXT_OFF, .sh_size = text_len, .sh_addralign = 16 };
	off = align8(TEXT_OFF + text_len);
	sh[S_SYMTAB] = (Elf64_Shdr){ .sh_name = 7, .sh_type = SHT_SYMTAB, .sh_offset = off,
				     .sh_size = sym_len, .sh_link = S_STRTAB, .sh_info = 1,
				     .sh_addralign = 8, .sh_entsize = sizeof(Elf64_Sym) };
	off += sym_len;
	sh[S_STRTAB] = (Elf64_Shdr){ .sh_name = 15, .sh_type = SHT_STRTAB, .sh_offset = off,
				     .sh_size = strtab_len, .sh_addralign = 1 };
	off = align8(off + strtab_len);
	sh[S_DEBUG] = (Elf64_Shdr){ .sh_name = 23, .sh_type = SHT_PROGBITS,
				    .sh_flags = SHF_COMPRESSED, .sh_offset = off,
				    .sh_size = debug_len, .sh_addralign = 8 };
	off = align8(off + debug_len + pad);
	sh[S_SHSTRTAB] = (Elf64_Shdr){ .sh_name = 35, .sh_type = SHT_STRTAB, .sh_offset = off,
				       .sh_size = sizeof(shstrtab), .sh_addralign = 1 };
	off = align8(off + sizeof(shstrtab));

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(eh);
	eh.e_shoff = off;
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(ph);
	eh.e_phnum = 1;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = NR_SECTIONS;
	eh.e_shstrndx = S_SHSTRTAB;
	ph = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_filesz = TEXT_OFF + text_len,
			   .p_memsz = TEXT_OFF + text_len, .p_align = 0x1000 };

	f = fopen(path, "w");
	buf = calloc(1, off + sizeof(sh));
	if (!f || !buf)
		exit(1);
	memcpy(buf, &eh, sizeof(eh));
	memcpy(buf + sizeof(eh), &ph, sizeof(ph));
	write_text(buf + TEXT_OFF);
	for (int i = 0; i < NR_FUNCS; i++) {
		Elf64_Sym s = { .st_name = name_of(!strcmp(mode, "names"), i),
				.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), .st_shndx = S_TEXT,
				.st_value = TEXT_OFF + i * FUNC_SIZE, .st_size = FUNC_SIZE };

		memcpy(buf + sh[S_SYMTAB].sh_offset + (i + 1) * sizeof(s), &s, sizeof(s));
	}
	memcpy(buf + sh[S_STRTAB].sh_offset, strtab, strtab_len);
	if (debug)
		memcpy(buf + sh[S_DEBUG].sh_offset, debug, debug_len);
	memcpy(buf + sh[S_SHSTRTAB].sh_offset, shstrtab, sizeof(shstrtab));
	memcpy(buf + off, sh, sizeof(sh));
	if (fwrite(buf, 1, off + sizeof(sh), f) != off + sizeof(sh) || fclose(f))
		exit(1);
	free(buf);
	free(strtab);
	free(debug);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end;
	FILE *f;
	long len;
	char *base;

	if (argc < 3) {
		fprintf(stderr, "usage: hostilelf names|plain|zdebug|debug PATH [SECONDS]\n");
		return 2;
	}
	write_elf(argv[1], argv[2]);
	if (argc < 4)
		return 0;
	f = fopen(argv[2], "r");
	if (!f || fseek(f, 0, SEEK_END) || (len = ftell(f)) <= 0)
		return 1;
	base = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fileno(f), 0);
	if (base == MAP_FAILED)
		return 1;
	printf("ready %s\n", argv[2]);
	fflush(stdout);
	end = now() + atof(argv[3]);
	while (now() < end) {
		for (int i = 0; i < NR_FUNCS; i += 97)
			((void (*)(void))(base + TEXT_OFF + i * FUNC_SIZE))();
	}
	return 0;
}
