// SPDX-License-Identifier: GPL-2.0
#include "core/sym/demangle.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The C++ runtime's demangler (libstdc++), not a hand-written one. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* Longest mangled name demangled: beyond it the demangler's recursion is the risk, not the name. */
#define DEMANGLE_MAX_LEN 4096
/* Nesting of brackets followed; deeper names keep their return type. */
#define DEMANGLE_MAX_DEPTH 256

static bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$';
}

/* Length of the "operator" keyword at s[i], or 0 (not "my_operator", not "operators"). */
static size_t operator_at(const char *s, size_t i)
{
	if (s[i] != 'o' || strncmp(s + i, "operator", 8) || (i > 0 && is_ident(s[i - 1])) ||
	    is_ident(s[i + 8]))
		return 0;
	return 8;
}

/*
 * The punctuation of an operator's name after "operator": "<", "<<=", "->*",
 * "()", "[]"; its brackets must not count as nesting.
 */
static size_t operator_symbol_len(const char *s)
{
	if (!strncmp(s, "()", 2) || !strncmp(s, "[]", 2))
		return 2;
	return strspn(s, "+-*/%^&|~!=<>,");
}

/* Index of the '(' matching the ')' at close, or -1. */
static long matching_open(const char *s, size_t close)
{
	long depth = 0;

	for (size_t i = close + 1; i-- > 0;) {
		if (s[i] == ')')
			depth++;
		else if (s[i] == '(' && --depth == 0)
			return (long)i;
	}
	return -1;
}

/*
 * Where the name starts in "RETURN-TYPE NAME": after the last space outside
 * brackets. '<' and '>' nest only outside parentheses, where the demangler
 * writes comparisons: "f<((1)>(2))>". Scanning stops at an operator at the
 * top level: "operator new", "operator char const*" have spaces of their own.
 */
static size_t name_start(const char *s, size_t len)
{
	char stack[DEMANGLE_MAX_DEPTH];
	size_t depth = 0, start = 0;

	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		size_t op = operator_at(s, i);

		if (op) {
			if (!depth)
				return start;
			i += op + operator_symbol_len(s + i + op) - 1;
			continue;
		}
		if (c == '(' || c == '[' || c == '{' ||
		    (c == '<' && (!depth || stack[depth - 1] != '('))) {
			if (depth == sizeof(stack))
				return 0;
			stack[depth++] = c;
		} else if ((c == ')' || c == ']' || c == '}' || c == '>') && depth) {
			char open = stack[depth - 1];

			if ((c == ')' && open == '(') || (c == ']' && open == '[') ||
			    (c == '}' && open == '{') || (c == '>' && open == '<'))
				depth--;
		} else if (c == ' ' && !depth) {
			start = i + 1;
		}
	}
	return start;
}

static bool ends_with_call_operator(const char *s, size_t len)
{
	return len >= 10 && !strncmp(s + len - 10, "operator()", 10) &&
	       operator_at(s, len - 10);
}

/*
 * Cut s (of length len) to its function's name; returns the name's start in
 * s, its length in *out_len.
 */
static const char *short_name(const char *s, size_t len, size_t *out_len, int nesting)
{
	size_t start, end = len;
	long open;

	/* The parameter list is the last parenthesised group: after it come only qualifiers. */
	while (end > 0 && s[end - 1] != ')')
		end--;
	if (!end || (open = matching_open(s, end - 1)) <= 0) {
		/* Not a function: data ("vtable for A"), or a name cut short. */
		*out_len = len;
		return s;
	}
	end = open;
	/*
	 * A function returning a function pointer: "int (*getfp<int>())(int)".
	 * Its own parameters are inside the declarator.
	 */
	if (s[end - 1] == ')' && !ends_with_call_operator(s, end) && nesting < 4) {
		long inner = matching_open(s, end - 1);
		size_t skip;

		/* "(*" or "(&": not "operator int (*)(int)", a conversion to such a type. */
		if (inner >= 0 && (s[inner + 1] == '*' || s[inner + 1] == '&')) {
			skip = inner + 1 + strspn(s + inner + 1, "*& ");
			if (skip < end - 1)
				return short_name(s + skip, end - 1 - skip, out_len, nesting + 1);
		}
	}
	start = name_start(s, end);
	*out_len = end - start;
	return s + start;
}

/* Special names keep their words: "non-virtual thunk to B::f". */
static const char *const special_prefixes[] = {
	"non-virtual thunk to ", "virtual thunk to ", "covariant return thunk to ",
	"transaction clone for ", "non-transaction clone for ", "TLS init function for ",
	"TLS wrapper function for ",
};

char *demangle_short_name(char *demangled)
{
	size_t skip = 0, len, name_len;
	const char *name;

	for (size_t i = 0; i < sizeof(special_prefixes) / sizeof(special_prefixes[0]); i++) {
		size_t n = strlen(special_prefixes[i]);

		if (!strncmp(demangled, special_prefixes[i], n)) {
			skip = n;
			break;
		}
	}
	len = strlen(demangled + skip);
	name = short_name(demangled + skip, len, &name_len, 0);
	if (!name_len)
		return demangled;
	memmove(demangled + skip, name, name_len);
	demangled[skip + name_len] = '\0';
	return demangled;
}

char *demangle_cxx(const char *name, size_t len)
{
	char *mangled, *out;
	int status = -1;

	if (len < 3 || strncmp(name, "_Z", 2) || len > DEMANGLE_MAX_LEN)
		return NULL;
	mangled = strndup(name, len);
	if (!mangled)
		return NULL;
	out = __cxa_demangle(mangled, NULL, NULL, &status);
	free(mangled);
	if (status || !out) {
		free(out);
		return NULL;
	}
	return demangle_short_name(out);
}
