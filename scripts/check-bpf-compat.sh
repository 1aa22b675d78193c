#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Checks a compiled BPF object against what Linux 4.9 accepts, so that a
# change that would stop the program loading there fails `make check`:
#  - no .data/.rodata/.bss sections (global variables need 5.2)
#  - no program section but "perf_event" (4.9) and "tracepoint/CATEGORY/NAME"
#    or "tp/CATEGORY/NAME" (4.7), no bpf-to-bpf calls (4.16)
#  - helpers only from the 4.9 set this program may use
#  - no backward jumps (bounded loops need 5.3)
#  - no atomics that return a value (5.12), no 32-bit jumps (-mcpu=v3, 5.1),
#    no "jump if less" (-mcpu=v2, 4.14)
#  - at most 4096 instructions (the 4.9 limit)
set -eu
obj=$1
objdump=${LLVM_OBJDUMP:-llvm-objdump}
fail=0

bad() {
	echo "bpf-compat: $obj: $*" >&2
	fail=1
}

# Helper ids: map_lookup_elem 1, map_update_elem 2, map_delete_elem 3 (3.19),
# probe_read 4 (4.1), ktime_get_ns 5 (4.1), get_smp_processor_id 8 (4.1),
# get_current_pid_tgid 14 (4.2), get_current_comm 16 (4.2),
# perf_event_output 25 (4.4), get_stackid 27 (4.6),
# current_task_under_cgroup 37 (4.9, on a BPF_MAP_TYPE_CGROUP_ARRAY of 4.8);
# perf_event and tracepoint programs have each of them in 4.9.
allowed_helpers=" 1 2 3 4 5 8 14 16 25 27 37 "

sections=$($objdump -h "$obj" | awk 'NR > 4 { print $2 }')
for s in $sections; do
	case $s in
	.data* | .rodata* | .bss*) bad "section $s: global variables need Linux 5.2" ;;
	esac
done
code_sections=$($objdump -h "$obj" | awk '$NF == "TEXT" && $3 != "00000000" { print $2 }')
for s in $code_sections; do
	case $s in
	perf_event | tracepoint/*/* | tp/*/*) ;;
	*) bad "code in section $s: only 'perf_event' and 'tracepoint/CATEGORY/NAME'" \
		"programs, no subprograms (4.16)" ;;
	esac
done

dis=$($objdump -d --no-show-raw-insn "$obj")
ninsn=$(printf '%s\n' "$dis" | grep -cE '^ *[0-9]+:' || true)
[ "$ninsn" -le 4096 ] || bad "$ninsn instructions: Linux 4.9 accepts 4096"

for id in $(printf '%s\n' "$dis" | sed -n 's/.*call \(-\{0,1\}[0-9]*\)$/\1/p' | sort -u); do
	case $allowed_helpers in
	*" $id "*) ;;
	*) bad "call $id: not a helper of the Linux 4.9 set this program may use" ;;
	esac
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
[ -z "$loop" ] || bad "loop ($loop): loops need Linux 5.3"
printf '%s\n' "$dis" | grep -qE 'atomic_fetch|cmpxchg|xchg' && bad "atomic with a return value: needs Linux 5.12"
printf '%s\n' "$dis" | grep -qE 'if w[0-9]' && bad "32-bit jump (-mcpu=v3): needs Linux 5.1"
printf '%s\n' "$dis" | grep -qE 'if [rw][0-9]+ s?<' && bad "jump if less (-mcpu=v2): needs Linux 4.14"

[ $fail -eq 0 ] && echo "bpf-compat: $obj: loads on Linux 4.9 ($ninsn instructions)"
exit $fail
