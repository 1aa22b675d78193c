#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Writes docs/NAME_example.txt from docs/NAME_example.txt.in, as BCC ships
# tools/NAME_example.txt: prose around real output. The outputs are not
# typed: every command of the template is run here, now, and its output
# (standard output and error) is pasted under it. `make examples` runs this
# for each template; it needs root (system-wide sampling, tracepoints).
#
# Usage: gen-examples.sh BUILD_DIR TEMPLATE OUTPUT
#
# Template lines, everything else is copied as it is:
#   @stamp              a line naming this script, the kernel and the date
#   @@ CMD              "# CMD", then what CMD printed
#   @@[last=N] CMD      the same, keeping the header and the last N stacks
#                       (blank-line separated blocks) of a report, "[...]"
#                       for the rest, as BCC's examples cut theirs
#   @@[head=N] CMD      the same, keeping the first N lines
#   @@[tail=N] CMD      the same, keeping the last N lines
#   @bg CMD             start CMD in the background ("# CMD &", "[1] PID");
#                       $BGPID in later commands is its PID
#   @kill               stop it
# Commands run in a scratch directory with BUILD_DIR and its workloads first
# in PATH, so they read as a user would type them (profile, demo), and the
# Python workloads (tests/workloads/python/*.py) copied there.
set -euo pipefail

if [ $# -ne 3 ]; then
	echo "usage: $0 BUILD_DIR TEMPLATE OUTPUT" >&2
	exit 2
fi
build=$(cd "$1" && pwd)
template=$2
output=$3
if [ "$(id -u)" -ne 0 ]; then
	echo "gen-examples: the examples profile the whole system: run as root" >&2
	exit 1
fi
for f in "$build/profile" "$build/offcputime" "$build/workloads/demo"; do
	[ -x "$f" ] || { echo "gen-examples: $f is missing (make test-build)" >&2; exit 1; }
done

scratch=$(mktemp -d /tmp/gen-examples.XXXXXX)
bgpid=""
cleanup()
{
	[ -n "$bgpid" ] && kill "$bgpid" 2>/dev/null && wait "$bgpid" 2>/dev/null
	rm -rf "$scratch"
}
trap cleanup EXIT
# The Python workloads run from the scratch directory, by their names.
cp "$(dirname "$0")"/../tests/workloads/python/*.py "$scratch"/
export PATH="$build:$build/workloads:$PATH"
# Outputs as a user sees them: no progress line (stderr is not a terminal
# here anyway), C locale for tools around the profiler.
export LC_ALL=C

# Keep the last N stacks of a report (blank-line separated blocks that begin
# with an indented frame) and every other block (header, warnings), with
# "[...]" where stacks were left out.
keep_last()
{
	awk -v n="$1" '
		BEGIN { RS = ""; ORS = "\n\n" }
		{ block[NR] = $0; stack[NR] = ($0 ~ /^    /); nstack += stack[NR] }
		END {
			skip = nstack - n
			for (i = 1; i <= NR; i++) {
				if (stack[i] && seen++ < skip) {
					if (seen == 1)
						print "[...]"
					continue
				}
				print block[i]
			}
		}' | sed -e '$ { /^$/d }'
}

keep_head()
{
	awk -v n="$1" 'NR <= n { print } NR == n + 1 { print "[...]" }'
}

keep_tail()
{
	awk -v n="$1" '{ line[NR] = $0 }
		END { if (NR > n) print "[...]"; for (i = NR > n ? NR - n + 1 : 1; i <= NR; i++) print line[i] }'
}

run()
{
	local filter=$1 cmd=$2

	cmd=${cmd//\$BGPID/$bgpid}
	echo "# $cmd"
	(cd "$scratch" && bash -c "$cmd" 2>&1 </dev/null) >"$scratch/.out" || true
	case $filter in
	last=*) keep_last "${filter#last=}" <"$scratch/.out" ;;
	head=*) keep_head "${filter#head=}" <"$scratch/.out" ;;
	tail=*) keep_tail "${filter#tail=}" <"$scratch/.out" ;;
	*) cat "$scratch/.out" ;;
	esac
}

background()
{
	local cmd=$1

	[ -z "$bgpid" ] || { echo "gen-examples: @bg while one runs" >&2; exit 1; }
	(cd "$scratch" && exec bash -c "exec $cmd" >/dev/null 2>&1 </dev/null) &
	bgpid=$!
	# Let it start its threads before it is profiled.
	sleep 0.5
	echo "# $cmd &"
	echo "[1] $bgpid"
}

stop_background()
{
	[ -n "$bgpid" ] || return 0
	kill "$bgpid" 2>/dev/null || true
	wait "$bgpid" 2>/dev/null || true
	bgpid=""
}

generate()
{
	local line

	while IFS= read -r line; do
		case $line in
		@stamp)
			echo "(Written by scripts/gen-examples.sh from $(basename "$template"):" \
				"each output below is a real run, on Linux $(uname -r)," \
				"$(nproc) CPUs, $(date -u +%F).)"
			;;
		'@@ '*) run "" "${line#@@ }" ;;
		'@@['*'] '*)
			local spec=${line#@@[}
			run "${spec%%]*}" "${spec#*] }"
			;;
		'@bg '*) background "${line#@bg }" ;;
		@kill) stop_background ;;
		@*)
			echo "gen-examples: $template: unknown directive: $line" >&2
			exit 1
			;;
		*) printf '%s\n' "$line" ;;
		esac
	done <"$template"
	stop_background
}

# Written beside the output and renamed: an interrupted run leaves the old file.
generate >"$output.tmp"
mv "$output.tmp" "$output"
echo "gen-examples: wrote $output"
