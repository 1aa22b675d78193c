#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# check-bpf-compat.sh OBJ [VERSION]: checks a compiled BPF object against
# what Linux VERSION (default 4.9, the oldest the bpf backend serves)
# accepts, so that a change that would stop the program loading there fails
# `make check`. A source marks its minimum with "bpf-compat: linux-X.Y".
#  - no .data/.rodata/.bss sections (global variables need 5.2)
#  - no program section but "perf_event" (4.9) and "tracepoint/CATEGORY/NAME"
#    or "tp/CATEGORY/NAME" (4.7), no bpf-to-bpf calls (4.16)
#  - helpers only from those the kernel has (the table below), with buffers
#    on the BPF stack before 4.10
#  - no backward jumps (bounded loops need 5.3)
#  - no atomics that return a value (5.12), no 32-bit jumps (-mcpu=v3, 5.1),
#    no "jump if less" (-mcpu=v2, 4.14)
#  - at most 4096 instructions before 5.2
set -eu
obj=$1
want=${2:-4.9}
objdump=${LLVM_OBJDUMP:-llvm-objdump}
fail=0

bad() {
	echo "bpf-compat: $obj: $*" >&2
	fail=1
}

# X.Y as a number that compares: 4.9 -> 4009
vnum() {
	echo "$1" | awk -F. '{ print $1 * 1000 + $2 }'
}
min=$(vnum "$want")
# True when Linux $1 is newer than the kernel the object is held to.
newer() {
	[ "$(vnum "$1")" -gt "$min" ]
}

# The kernel that added each helper the programs use (id:version):
# map_lookup_elem 1, map_update_elem 2, map_delete_elem 3 (3.19),
# probe_read 4, ktime_get_ns 5, get_smp_processor_id 8 (4.1), tail_call 12,
# get_current_pid_tgid 14, get_current_comm 16 (4.2), perf_event_output 25
# (4.4), get_stackid 27 (4.6), get_current_task 35 (4.8),
# current_task_under_cgroup 37 (4.9, on a BPF_MAP_TYPE_CGROUP_ARRAY of 4.8),
# get_stack 67 and get_current_cgroup_id 80 (4.18), probe_read_user 112 and probe_read_kernel 113 (5.5),
# get_ns_current_pid_tgid 120 (5.7), get_current_task_btf 158 (5.11),
# task_pt_regs 175 (5.15). perf_event and tracepoint programs have each from
# the version named. "call -1" is a call of a function of the object's own
# (its offset relocated): 4.16 for static ones, 5.12 for a global one with
# pointer arguments, which the disassembly does not tell apart: 5.12.
helpers="-1:5.12 1:3.19 2:3.19 3:3.19 4:4.1 5:4.1 8:4.1 12:4.2 14:4.2 16:4.2 25:4.4 27:4.6 35:4.8
37:4.9 67:4.18 80:4.18 112:5.5 113:5.5 120:5.7 158:5.11 175:5.15"

sections=$($objdump -h "$obj" | awk 'NR > 4 { print $2 }')
for s in $sections; do
	case $s in
	.data* | .rodata* | .bss*) newer 5.2 && bad "section $s: global variables need Linux 5.2" ;;
	esac
done
code_sections=$($objdump -h "$obj" | awk '$NF == "TEXT" && $3 != "00000000" { print $2 }')
for s in $code_sections; do
	case $s in
	perf_event | tracepoint/*/* | tp/*/*) ;;
	*) newer 4.16 && bad "code in section $s: only 'perf_event' and" \
		"'tracepoint/CATEGORY/NAME' programs, no subprograms (4.16)" ;;
	esac
done

dis=$($objdump -d --no-show-raw-insn "$obj")
# The limit is a program's: the largest program (a symbol of a code
# section, not a local label) of the object is held to it. A 64-bit load
# ("r1 = 0 ll": a map, a constant) is one line and two instructions.
ninsn=$(printf '%s\n' "$dis" | awk '
	/^[0-9a-f]+ <[^L.][^>]*>:$/ { n = 0; next }
	/^ *[0-9]+:/ { n += / ll$/ ? 2 : 1; if (n > max) max = n }
	END { print max + 0 }')
[ "$ninsn" -le 4096 ] || ! newer 5.2 || bad "a program of $ninsn instructions: Linux $want accepts 4096"

for id in $(printf '%s\n' "$dis" | sed -n 's/.*call \(-\{0,1\}[0-9]*\)$/\1/p' | sort -u); do
	since=$(printf '%s\n' $helpers | sed -n "s/^$id://p")
	if [ -z "$since" ]; then
		bad "call $id: not a helper of the table in $0 (add it with its kernel version)"
	elif newer "$since"; then
		bad "call $id: a helper of Linux $since, not of $want"
	fi
done
# A loop is a cycle in the control flow graph; clang also jumps backwards to
# shared exits, which the 4.9 verifier accepts.
loop=$(printf '%s\n' "$dis" | awk '
	/^ *[0-9]+:/ {
		idx = $1; sub(":", "", idx); idx += 0
		order[n++] = idx
		line[idx] = $0
	}
	END {
		for (i = 0; i < n; i++) {
			idx = order[i]; nxt = (i + 1 < n) ? order[i + 1] : -1
			l = line[idx]; ne[idx] = 0
			if (match(l, /goto [+-][0-9]+/)) {
				off = substr(l, RSTART + 5, RLENGTH - 5) + 0
				succ[idx, ne[idx]++] = idx + 1 + off
				if (l ~ /if /) succ[idx, ne[idx]++] = nxt
			} else if (l !~ /exit$/ && nxt >= 0) {
				succ[idx, ne[idx]++] = nxt
			}
		}
		# iterative DFS: state 1 = on the stack, 2 = done
		sp = 0; stack[sp] = order[0]; edge[sp] = 0; state[order[0]] = 1
		while (sp >= 0) {
			v = stack[sp]
			if (edge[sp] < ne[v]) {
				w = succ[v, edge[sp]++]
				if (state[w] == 1) { print v " -> " w; exit }
				if (!state[w]) { state[w] = 1; stack[++sp] = w; edge[sp] = 0 }
			} else {
				state[v] = 2; sp--
			}
		}
	}')
[ -z "$loop" ] || ! newer 5.3 || bad "loop ($loop): loops need Linux 5.3"
# Helper buffers in map values are 4.10 ("bpf: allow helpers access to map
# element values"): 4.9's take the BPF stack only. Registers are followed in
# instruction order (a map value is r0 of map_lookup_elem, moved, offset or
# spilled), which finds the usual way of writing it.
if newer 4.10; then
	mapbuf=$(printf '%s\n' "$dis" | awk '
		function clear(r) { t[r] = "" }
		/^[0-9a-f]+ <[^L].*>:$/ { split("", t); split("", slot); next }
		!/^ *[0-9]+:/ { next }
		{
			idx = $1; sub(":", "", idx)
			i = $0; sub(/^ *[0-9]+:[ \t]*/, "", i)
		}
		match(i, /^call [0-9]+$/) {
			id = substr(i, 6) + 0
			arg = id == 4 || id == 16 || id == 112 ||
			      id == 113 ? "r1" : id == 25 ? "r4" : ""
			if (arg != "" && t[arg] == "map") print "call " id " (insn " idx ")"
			for (r = 1; r <= 5; r++) clear("r" r)
			t["r0"] = id == 1 ? "map" : ""
			next
		}
		match(i, /^\*\(u64 \*\)\(r10 - [0-9]+\) = r[0-9]+$/) {
			split(i, w, /[ )]+/); slot[w[4]] = t[w[6]]; next
		}
		match(i, /^r[0-9]+ = \*\(u64 \*\)\(r10 - [0-9]+\)$/) {
			split(i, w, /[ )]+/); t[w[1]] = slot[w[6]]; next
		}
		match(i, /^r[0-9]+ = r[0-9]+$/) { split(i, w, " "); t[w[1]] = w[3] == "r10" ? "fp" : t[w[3]]; next }
		match(i, /^r[0-9]+ [+-]= /) { next }
		match(i, /^[rw][0-9]+ /) { split(i, w, " "); sub("w", "r", w[1]); clear(w[1]) }')
	if [ -n "$mapbuf" ]; then
		n=$(printf '%s\n' "$mapbuf" | wc -l)
		bad "$(printf '%s\n' "$mapbuf" | head -3 | paste -sd, -)$([ "$n" -le 3 ] ||
			echo " and $((n - 3)) more"): a map value as the helper's buffer" \
			"(Linux 4.10; 4.9's helpers take the BPF stack only)"
	fi
fi
if newer 5.12 && printf '%s\n' "$dis" | grep -qE 'atomic_fetch|cmpxchg|xchg'; then
	bad "atomic with a return value: needs Linux 5.12"
fi
if newer 5.1 && printf '%s\n' "$dis" | grep -qE 'if w[0-9]'; then
	bad "32-bit jump (-mcpu=v3): needs Linux 5.1"
fi
if newer 4.14 && printf '%s\n' "$dis" | grep -qE 'if [rw][0-9]+ s?<'; then
	bad "jump if less (-mcpu=v2): needs Linux 4.14"
fi

[ $fail -eq 0 ] && echo "bpf-compat: $obj: loads on Linux $want (largest program $ninsn instructions)"
exit $fail
