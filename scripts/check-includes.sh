#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The include rules of the tree, checked by every build: dependencies point
# one way (cli -> run -> backends -> agg/proc/sym -> lib; writers read the
# model only), core/ never includes libbpf or libunwind nor interp/ (but
# core/model and core/run, which will name and run interpreters' frames),
# interp/ reaches core/ only through lib, proc and sym, and the backends
# reach into each other only through backend-perfring's one public header.
# Each rule: a directory and the project headers (prefixes) its files may
# include. System headers are free except the ones named in FORBIDDEN. A
# header named *_internal.h is shared by the rooms of its own folder only.
set -eu
cd "$(dirname "$0")/.."

# directory: allowed prefixes of "..." includes
rules='
core/lib: core/lib/
core/proc: core/lib/ core/proc/ core/agg/sample.h
core/sym: core/lib/ core/proc/ core/sym/ core/agg/sample.h
core/agg: core/lib/ core/proc/ core/agg/
core/model: core/lib/ core/proc/ core/agg/ core/sym/ core/model/ interp/
core/output: core/lib/ core/model/ core/output/ profile.pb-c.h
core/input: core/lib/ core/model/ core/input/ profile.pb-c.h
core/run: core/lib/ core/proc/ core/agg/ core/sym/ core/model/ core/output/ core/input/ core/run/ compat/ unwind/unwind.h interp/
core/cli: core/lib/ core/run/ core/cli/ backend-bpf/bpfbackend.h backend-perfring/perfring.h
backend-perfring: backend-perfring/ core/lib/ core/proc/ core/agg/ core/run/backend.h compat/
backend-bpf: backend-bpf/ backend-perfring/ringset.h bpf/ core/lib/ core/proc/ core/agg/ core/run/backend.h compat/
unwind: unwind/ core/lib/ core/proc/ core/sym/elfsym.h core/sym/debugfile.h core/agg/sample.h
compat: compat/ core/lib/
bpf: bpf/
interp/python: interp/python/ core/lib/ core/proc/ core/sym/ bpf/python_layouts.h bpf/python_maps.h
'
# System headers only the named directories may include.
FORBIDDEN_BPF='backend-bpf'		# <bpf/...>, libbpf
FORBIDDEN_UNWIND='unwind'		# <libunwind*.h>

out=$(mktemp)
trap 'rm -f "$out"' EXIT

for file in $(git ls-files -co --exclude-standard 'core/*' 'backend-*' 'unwind/*' 'compat/*' 'bpf/*' \
	'interp/*' |
	grep -E '\.(c|h)$'); do
	[ -f "$file" ] || continue
	dir=$(dirname "$file")
	allowed=$(printf '%s\n' "$rules" | sed -n "s|^$dir: ||p")
	if [ -z "$allowed" ]; then
		echo "$file: no include rule for directory $dir (add one to $0)" >>"$out"
		continue
	fi
	sed -n 's/^#include *\(["<][^">]*[">]\).*/\1/p' "$file" | while IFS= read -r inc; do
		name=$(printf '%s' "$inc" | tr -d '"<>')
		case $inc in
		\<bpf/* | \<libbpf*)
			[ "$dir" = "$FORBIDDEN_BPF" ] || [ "$dir" = bpf ] ||
				echo "$file: $inc: only backend-bpf/ may use libbpf" ;;
		\<libunwind*)
			[ "$dir" = "$FORBIDDEN_UNWIND" ] ||
				echo "$file: $inc: only unwind/ may use libunwind" ;;
		\<elfutils/*)
			[ "$file" = core/sym/dwarfline.c ] ||
				echo "$file: $inc: only core/sym/dwarfline.c may use libdw" ;;
		\"*_internal.h\")
			[ "$(dirname "$name")" = "$dir" ] ||
				echo "$file: $inc: a folder's *_internal.h is for its own files" ;;
		\"*)
			ok=0
			for prefix in $allowed; do
				case $name in "$prefix"*) ok=1 ;; esac
			done
			[ $ok = 1 ] || echo "$file: $inc: $dir may include only: $allowed" ;;
		esac
	done >>"$out"
done
if [ -s "$out" ]; then
	sed 's/^/check-includes: /' "$out" >&2
	exit 1
fi

