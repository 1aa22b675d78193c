#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Prints the options `perf record` needs on this host to be a sound anchor
# for the comparisons (tests/integration, tests/bench): nothing, or
# --buildid-mmap. The reason goes to stderr.
#
# Why: kernel/events/core.c perf_event_mmap_output() sets
# PERF_RECORD_MISC_MMAP_BUILD_ID in the header it shares between all the
# events an mmap is reported to, and restores only its size and type. When
# an event with attr.build_id (5.12; profile's perf backend opens one per
# CPU) comes first, every event after it without attr.build_id gets MMAP2
# records with the bit set over its maj/min/ino (seen on 6.18). perf 6.1 then
# reads the device's major (254 for vda) as a build-id size: "assertion
# failed at util/build-id.c:1010", then a stack smash in perf record (its
# build-id pass) or in perf report/script of the file. With --buildid-mmap
# perf's own events carry attr.build_id, so the kernel writes real build-ids
# into them; the reports name the same frames (perf report finds the files
# by path and build-id). It skips perf's build-id cache and the pass that
# fills it, so perf's own CPU is not the same: used only where needed.
#
# The probe makes the conditions: a CPU-wide event with attr.build_id
# (visited before task events), and under it a perf record of /bin/true;
# then perf report of that file, and its MMAP2 records as perf dumps them.
set -u
if ! command -v perf >/dev/null; then
	echo "perf record: no perf here" >&2
	exit 0
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# 0: perf record and perf report of its file work with the options $@ under
# the event with attr.build_id; 1: they do not; 2: no event with attr.build_id.
sound() {
	rm -f "$tmp/inner.rc"
	perf record -q --buildid-mmap -a -e dummy --synth=no -o "$tmp/outer.data" -- \
		sh -c 'perf record -q "$@" -o "$0/inner.data" -- /bin/true; echo $? >"$0/inner.rc"' \
		"$tmp" "$@" >/dev/null 2>&1
	[ -s "$tmp/inner.rc" ] || return 2
	[ "$(cat "$tmp/inner.rc")" = 0 ] || return 1
	perf report -i "$tmp/inner.data" --stdio -q >/dev/null 2>&1 || return 1
	case " $* " in *" --buildid-mmap "*) return 0 ;; esac
	# A build-id perf did not ask for is the bit over maj/min/ino: a small major
	# (8 for sda) reads as a short build-id that crashes nothing but names no file.
	! perf report -D -i "$tmp/inner.data" 2>/dev/null |
		grep -q 'PERF_RECORD_MMAP2 .* <[0-9a-f]*>\]:'
}

sound
case $? in
0)	echo "perf record: sound next to an attr.build_id event: plain" >&2 ;;
2)	echo "perf record: no attr.build_id here (kernel or perf < 5.12): plain" >&2 ;;
*)	if sound --buildid-mmap; then
		echo "perf record: perf fails next to an event with attr.build_id (the kernel" \
			"leaks its MMAP2 build-id bit, see $0); using --buildid-mmap" >&2
		echo "--buildid-mmap"
	else
		echo "perf record: broken here even with --buildid-mmap: plain" >&2
	fi ;;
esac
exit 0
