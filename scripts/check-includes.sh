#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The include rules of the tree, checked by every build and by make check.
#
# Floors: the rooms of the tree from the top floor down. A file may include
# a project header of its own room or of a room on a lower floor, never one
# of a room on its own floor or above: every arrow between rooms points
# down. Since an include that leaves a room always goes down a floor, no
# circle of files can cross a room.
#
# Rules: within that, the project headers (prefixes) each room's files may
# include, finer than floors (a backend reaches the other only through its
# one public header; writers read the model only). A rule that points up a
# floor is itself an error. System headers are free except libbpf (only
# backend-bpf/ and bpf/), libunwind (only unwind/) and libdw (only
# core/sym/dwarfline.c). A header named *_internal.h is shared by the files
# of its own folder only.
#
# Usage: check-includes.sh [DIR]: the tree at DIR (default: this
# repository's; its files as git lists them, elsewhere as find does).
set -eu
if [ $# -gt 0 ]; then
	cd "$1"
else
	cd "$(dirname "$0")/.."
fi

# Top floor first; rooms on one line share a floor (and may not include each other).
floors='
app/cli
app/run
backend-bpf
backend-perfring
unwind/tables
interp/python interp/node unwind
compat
core/backend
core/output core/input
core/model
core/agg
core/sym
core/proc
core/sample
core/lib
bpf
'

# room: allowed prefixes of "..." includes
rules='
app/cli: app/cli/ app/run/ backend-bpf/bpfbackend.h backend-perfring/perfring.h compat/ core/
app/run: app/run/ backend-perfring/pidwatch.h unwind/unwind.h unwind/tables/verdict.h interp/ compat/ core/
backend-bpf: backend-bpf/ backend-perfring/ringset.h unwind/tables/tables.h unwind/tables/verdict.h unwind/image.h core/sym/elfsym.h compat/ core/backend/ core/agg/ core/proc/ core/sample/ core/lib/ bpf/
backend-perfring: backend-perfring/ compat/ core/backend/ core/agg/ core/proc/ core/sample/ core/lib/
interp/python: interp/python/ core/sym/ core/proc/ core/sample/ core/lib/ bpf/python_layouts.h bpf/python_maps.h
unwind/tables: unwind/tables/ unwind/cfi.h unwind/debugframe.h unwind/image.h core/lib/
interp/node: interp/node/ core/sym/ core/lib/
unwind: unwind/ core/sym/elfsym.h core/sym/debugfile.h core/proc/ core/sample/ core/lib/
compat: compat/ core/lib/
core/backend: core/backend/ core/agg/ core/lib/
core/output: core/output/ core/model/ core/lib/ profile.pb-c.h
core/input: core/input/ core/model/ core/lib/ profile.pb-c.h
core/model: core/model/ core/agg/ core/sym/ core/proc/ core/sample/ core/lib/
core/agg: core/agg/ core/proc/ core/sample/ core/lib/
core/sym: core/sym/ core/proc/ core/sample/ core/lib/
core/proc: core/proc/ core/sample/ core/lib/
core/sample: core/sample/
core/lib: core/lib/
bpf: bpf/
'

if git rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
	[ "$(git rev-parse --show-toplevel)" = "$(pwd -P)" ]; then
	files=$(git ls-files -co --exclude-standard 'app/*' 'core/*' 'backend-*' 'unwind/*' \
		'compat/*' 'bpf/*' 'interp/*')
else
	files=$(find app core backend-* unwind compat bpf interp -type f 2>/dev/null)
fi
files=$(printf '%s\n' "$files" | grep -E '\.(c|h)$' || true)

# Every "FILE:INCLUDE" pair, then one awk pass over floors, rules and them.
# shellcheck disable=SC2086
{ [ -z "$files" ] || grep -H '^[[:space:]]*#[[:space:]]*include' $files; } | awk \
	-v floors="$floors" -v rules="$rules" -v self="$0" '
function room_of(path,    i, r) {
	r = ""
	for (i = 1; i <= nrooms; i++)
		if (index(path "/", rooms[i] "/") == 1 && length(rooms[i]) > length(r))
			r = rooms[i]
	return r
}
function say(msg) { print "check-includes: " msg > "/dev/stderr"; bad = 1 }
BEGIN {
	n = split(floors, fl, "\n"); f = 0
	for (i = 1; i <= n; i++) {
		if (fl[i] !~ /[^ ]/) continue
		f++; m = split(fl[i], rs, " ")
		for (j = 1; j <= m; j++) { rooms[++nrooms] = rs[j]; floor[rs[j]] = f }
	}
	n = split(rules, rl, "\n")
	for (i = 1; i <= n; i++) {
		if (rl[i] !~ /:/) continue
		room = substr(rl[i], 1, index(rl[i], ":") - 1)
		allowed[room] = substr(rl[i], index(rl[i], ":") + 2)
		if (!(room in floor)) { say("rules: " room " is on no floor"); continue }
		m = split(allowed[room], ps, " ")
		for (j = 1; j <= m; j++) {
			to = room_of(ps[j])
			if (to != "" && to != room && floor[to] <= floor[room])
				say("rules: " room " may not include " ps[j] ": it is not on a lower floor")
		}
	}
}
{
	file = substr($0, 1, index($0, ":") - 1)
	line = substr($0, index($0, ":") + 1)
	if (!match(line, /["<][^">]*[">]/)) next
	inc = substr(line, RSTART, RLENGTH); name = substr(inc, 2, length(inc) - 2)
	dir = file; sub(/\/[^\/]*$/, "", dir)
	room = room_of(dir)
	if (room != dir) {
		if (!(dir in told)) say(file ": directory " dir " is no room on a floor (add it to " self ")")
		told[dir] = 1; next
	}
	if (inc ~ /^<(bpf\/|libbpf)/) {
		if (room != "backend-bpf" && room != "bpf") say(file ": " inc ": only backend-bpf/ may use libbpf")
		next
	}
	if (inc ~ /^<libunwind/) {
		if (room != "unwind") say(file ": " inc ": only unwind/ may use libunwind")
		next
	}
	if (inc ~ /^<elfutils\//) {
		if (file != "core/sym/dwarfline.c") say(file ": " inc ": only core/sym/dwarfline.c may use libdw")
		next
	}
	if (inc ~ /^</) next
	hdir = name; if (!sub(/\/[^\/]*$/, "", hdir)) hdir = ""
	to = room_of(hdir)
	if (to != "" && to != room && floor[to] <= floor[room]) {
		say(file ": " inc ": points up, from " room " (floor " floor[room] ") to " to \
		    " (floor " floor[to] ")")
		next
	}
	if (name ~ /_internal\.h$/) {
		if (hdir != dir) say(file ": " inc ": a folder'"'"'s *_internal.h is for its own files")
		next
	}
	if (!(room in allowed)) {
		if (!(room in toldr)) say(file ": no include rule for room " room " (add one to " self ")")
		toldr[room] = 1; next
	}
	m = split(allowed[room], ps, " "); ok = 0
	for (j = 1; j <= m; j++)
		if (index(name, ps[j]) == 1) ok = 1
	if (!ok) say(file ": " inc ": " room " may include only: " allowed[room])
}
END { exit bad }
'
