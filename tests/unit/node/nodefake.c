// SPDX-License-Identifier: GPL-2.0
/* Node-like ELF files in memory (nodefake.h). */
#include <elf.h>
#include <stdio.h>
#include <string.h>

#include "tests/unit/node/nodefake.h"

/* Node 20.20.2's values (readelf -s and od on its binary); those that are 0 live in .bss. */
#define D(n, v) { "v8dbg_" n, v, NF_DATA, 0 }
#define B(n) { "v8dbg_" n, 0, NF_BSS, 0 }
const struct nf_sym nf_node20[] = {
	{ "_ZN2v88internal7Version6major_E", 11, NF_DATA, 0 },
	{ "_ZN2v88internal7Version6minor_E", 3, NF_DATA, 0 },
	{ "_ZN2v88internal7Version6build_E", 244, NF_DATA, 0 },
	{ "_ZN2v88internal7Version6patch_E", 8, NF_DATA, 0 },
	D("HeapObjectTag", 1), D("HeapObjectTagMask", 3), B("SmiTag"), D("SmiTagMask", 1),
	D("SmiShiftSize", 31), D("SmiValueShift", 1), D("SystemPointerSize", 8),
	D("TaggedSize", 8), D("off_fp_function", -16), D("off_fp_context", -8),
	D("off_fp_context_or_frame_type", -8), D("off_fp_bytecode_array", -32),
	D("off_fp_bytecode_offset", -40), D("off_fp_args", 16),
	D("frametype_EntryFrame", 1), D("frametype_ConstructEntryFrame", 2),
	D("frametype_ExitFrame", 3), D("frametype_InterpretedFrame", 13),
	D("frametype_BaselineFrame", 14), D("frametype_MaglevFrame", 15),
	D("frametype_TurbofanFrame", 16), D("frametype_StubFrame", 17),
	D("frametype_BuiltinFrame", 24), D("frametype_BuiltinExitFrame", 25),
	D("frametype_InternalFrame", 22), D("frametype_ConstructFrame", 23),
	D("frametype_NativeFrame", 26), D("FirstNonstringType", 128),
	D("StringRepresentationMask", 7), D("StringEncodingMask", 8), B("SeqStringTag"),
	D("ConsStringTag", 1), D("SlicedStringTag", 3), D("ThinStringTag", 5),
	D("ExternalStringTag", 2), D("OneByteStringTag", 8), B("TwoByteStringTag"),
	D("type_JSFunction__JS_FUNCTION_TYPE", 2066),
	D("type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE", 262),
	D("type_Script__SCRIPT_TYPE", 167), D("type_Code__CODE_TYPE", 245),
	D("type_BytecodeArray__BYTECODE_ARRAY_TYPE", 191),
	D("type_ScopeInfo__SCOPE_INFO_TYPE", 261), D("type_FixedArray__FIXED_ARRAY_TYPE", 175),
	D("type_ByteArray__BYTE_ARRAY_TYPE", 190),
	D("type_InstructionStream__INSTRUCTION_STREAM_TYPE", 252),
	D("type_InterpreterData__INTERPRETER_DATA_TYPE", 159),
	B("class_HeapObject__map__Map"), D("class_Map__instance_type__uint16_t", 12),
	D("class_FixedArrayBase__length__SMI", 8), D("class_FixedArray__data__uintptr_t", 16),
	D("class_String__length__int32_t", 12), D("class_SeqOneByteString__chars__char", 16),
	D("class_SeqTwoByteString__chars__char", 16), D("class_ConsString__first__String", 16),
	D("class_ConsString__second__String", 24), D("class_ThinString__actual__String", 16),
	D("class_SlicedString__parent__String", 16), D("class_SlicedString__offset__SMI", 24),
	D("class_JSFunction__shared__SharedFunctionInfo", 24),
	D("class_SharedFunctionInfo__name_or_scope_info__Object", 16),
	D("class_SharedFunctionInfo__function_data__Object", 8),
	D("class_SharedFunctionInfo__script_or_debug_info__HeapObject", 32),
	D("class_Script__name__Object", 16), D("class_Script__source__Object", 8),
	D("class_Script__line_ends__Object", 56), D("class_BytecodeArray__data__uintptr_t", 54),
	B("parent_BytecodeArray__FixedArrayBase"),
	D("class_Code__source_position_table__ByteArray", 24),
	D("class_Code__deoptimization_data__FixedArray", 16), D("CodeKindFieldMask", 15),
	B("CodeKindFieldShift"), D("CodeKindBaseline", 11), D("CodeKindInterpretedFunction", 10),
	D("scopeinfo_idx_first_vars", 3), D("scopeinfo_idx_ncontextlocals", 2),
	D("scopeinfo_idx_nparams", 1), D("DeoptimizationDataInlinedFunctionCountIndex", 1),
	D("DeoptimizationDataLiteralArrayIndex", 2),
	D("DeoptimizationDataSharedFunctionInfoIndex", 6),
	D("DeoptimizationDataInliningPositionsIndex", 7),
};
#undef D
#undef B
const size_t nf_node20_count = sizeof(nf_node20) / sizeof(nf_node20[0]);

size_t nf_node20_but(const char *name, int32_t value, uint8_t where, uint64_t size, int drop,
		     struct nf_sym *out, size_t cap)
{
	size_t n = 0;

	for (size_t i = 0; i < nf_node20_count && n < cap; i++) {
		if (strcmp(nf_node20[i].name, name)) {
			out[n++] = nf_node20[i];
		} else if (!drop) {
			out[n] = nf_node20[i];
			out[n].value = value;
			out[n].where = where;
			out[n++].size = size;
		}
	}
	return n;
}

enum { S_NULL, S_DYNSYM, S_DYNSTR, S_DATA, S_BSS, S_RODATA, S_SHSTRTAB, NR_SECTIONS };
#define DATA_ADDR 0x600000ULL
#define BSS_ADDR 0x700000ULL
#define BSS_SIZE 0x4000ULL
#define RODATA_ADDR 0x400000ULL
#define MAX_SYMS 256

static const char shstrtab[] = "\0.dynsym\0.dynstr\0.data\0.bss\0.rodata\0.shstrtab";
static const uint32_t sh_names[NR_SECTIONS] = { 0, 1, 9, 17, 23, 28, 36 };

size_t nf_build(const struct nf_sym *syms, size_t n, int with_register, const char *version,
		uint8_t *out, size_t cap)
{
	static char dynstr[16384];
	static Elf64_Sym dynsym[MAX_SYMS + 2];
	static int32_t data[MAX_SYMS];
	char rodata[64] = "\0";
	size_t nstr = 1, nsym = 1, ndata = 0, rodata_len = 1, off;
	Elf64_Shdr sh[NR_SECTIONS];
	Elf64_Ehdr eh;

	if (n > MAX_SYMS)
		return 0;
	memset(dynsym, 0, sizeof(dynsym));
	dynstr[0] = '\0';
	for (size_t i = 0; i <= n; i++) {
		const char *name = i < n ? syms[i].name : "node_module_register";
		size_t len = strlen(name) + 1;
		Elf64_Sym *s = &dynsym[nsym];

		if (i == n && !with_register)
			break;
		if (nstr + len > sizeof(dynstr))
			return 0;
		memcpy(dynstr + nstr, name, len);
		s->st_name = (uint32_t)nstr;
		nstr += len;
		if (i == n) {
			s->st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
			s->st_shndx = S_RODATA;
			s->st_value = RODATA_ADDR;
			s->st_size = 16;
		} else {
			s->st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT);
			s->st_size = syms[i].size ? syms[i].size : 4;
			s->st_shndx = syms[i].where == NF_BSS ? S_BSS : S_DATA;
			if (syms[i].where == NF_BSS) {
				s->st_value = BSS_ADDR + 4 * i;
			} else {
				s->st_value = DATA_ADDR + 4 * ndata;
				if (syms[i].where == NF_NOWHERE)
					s->st_value = DATA_ADDR + 0x100000;
				data[ndata++] = syms[i].value;
			}
		}
		nsym++;
	}
	if (version) {
		/* NUL on both sides, as NODE_VERSION among other strings. */
		rodata_len += (size_t)snprintf(rodata + 1, sizeof(rodata) - 2, "%s", version) + 1;
	}
	memset(sh, 0, sizeof(sh));
	off = sizeof(eh) + sizeof(sh);
#define PLACE(i, type, flags, addr, len, link, ent)                                               \
	do {                                                                                      \
		sh[i] = (Elf64_Shdr){ .sh_name = sh_names[i], .sh_type = type, .sh_flags = flags, \
				      .sh_addr = addr, .sh_offset = off, .sh_size = len,          \
				      .sh_link = link, .sh_addralign = 1, .sh_entsize = ent };    \
		if (type != SHT_NOBITS)                                                           \
			off += len;                                                               \
	} while (0)
	PLACE(S_SHSTRTAB, SHT_STRTAB, 0, 0, sizeof(shstrtab), 0, 0);
	PLACE(S_DYNSTR, SHT_STRTAB, SHF_ALLOC, 0, nstr, 0, 0);
	PLACE(S_DYNSYM, SHT_DYNSYM, SHF_ALLOC, 0, nsym * sizeof(Elf64_Sym), S_DYNSTR,
	      sizeof(Elf64_Sym));
	PLACE(S_DATA, SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, DATA_ADDR, ndata * 4, 0, 0);
	PLACE(S_BSS, SHT_NOBITS, SHF_ALLOC | SHF_WRITE, BSS_ADDR, BSS_SIZE, 0, 0);
	PLACE(S_RODATA, SHT_PROGBITS, SHF_ALLOC, RODATA_ADDR, rodata_len, 0, 0);
#undef PLACE
	sh[S_DYNSYM].sh_info = 1;
	if (off > cap)
		return 0;
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	eh.e_shoff = sizeof(eh);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = NR_SECTIONS;
	eh.e_shstrndx = S_SHSTRTAB;
	memcpy(out, &eh, sizeof(eh));
	memcpy(out + sizeof(eh), sh, sizeof(sh));
	memcpy(out + sh[S_SHSTRTAB].sh_offset, shstrtab, sizeof(shstrtab));
	memcpy(out + sh[S_DYNSTR].sh_offset, dynstr, nstr);
	memcpy(out + sh[S_DYNSYM].sh_offset, dynsym, nsym * sizeof(Elf64_Sym));
	memcpy(out + sh[S_DATA].sh_offset, data, ndata * 4);
	memcpy(out + sh[S_RODATA].sh_offset, rodata, rodata_len);
	return off;
}
