#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs each libFuzzer target of a fuzzing build for a number of seconds:
#   run-fuzzers.sh BUILD_DIR SECONDS NAME...
# Seeds come from tests/fuzz/corpus/NAME/; what a run finds is kept in
# BUILD_DIR/fuzz-corpus/NAME/ (never in the source tree), crashes in
# BUILD_DIR/fuzz-artifacts/. Prints one line per target; fails on a crash.
# As many targets run at once as there are CPUs (FUZZ_JOBS=N to choose):
# each is one process, and `make check` waited for 17 of them one by one.
set -eu
dir=$1
secs=$2
shift 2
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1

# One target: its line in $dir/fuzz-artifacts/NAME.result, "ok" or "FAILED" first.
one() {
	name=$1
	corpus=$dir/fuzz-corpus/$name
	mkdir -p "$corpus" "$dir/fuzz-artifacts"
	seeds=tests/fuzz/corpus/$name
	[ -d "$seeds" ] || seeds=
	log=$dir/fuzz-artifacts/$name.log
	if "$dir/fuzz/fuzz_$name" -max_total_time="$secs" -print_final_stats=1 \
		-artifact_prefix="$dir/fuzz-artifacts/$name-" "$corpus" $seeds >"$log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
		cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
		echo "ok fuzz: $name: ${secs}s, ${runs:-?} runs, ${cov:-cov: ?}, corpus $(ls "$corpus" | wc -l)"
	else
		echo "FAILED fuzz: $name: FAILED (see $log)"
		grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$log" | head -5 || true
	fi >"$dir/fuzz-artifacts/$name.result"
}

mkdir -p "$dir/fuzz-artifacts"
running=0
for name in "$@"; do
	one "$name" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait
		running=0
	fi
done
wait

fail=0
for name in "$@"; do
	res=$dir/fuzz-artifacts/$name.result
	if [ -s "$res" ] && head -1 "$res" | grep -q '^ok '; then
		sed -n '1s/^ok //p' "$res"
	else
		[ -s "$res" ] && sed '1s/^FAILED //' "$res" >&2 || echo "fuzz: $name: FAILED (no result)" >&2
		fail=1
	fi
	rm -f "$res"
done
exit $fail
