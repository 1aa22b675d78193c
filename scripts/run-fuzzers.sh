#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs each libFuzzer target of a fuzzing build for a number of seconds:
#   run-fuzzers.sh BUILD_DIR SECONDS NAME...
# Seeds come from tests/fuzz/corpus/NAME/; what a run finds is kept in
# BUILD_DIR/fuzz-corpus/NAME/ (never in the source tree), crashes in
# BUILD_DIR/fuzz-artifacts/. Prints one line per target; fails on a crash.
set -eu
dir=$1
secs=$2
shift 2
fail=0
for name in "$@"; do
	corpus=$dir/fuzz-corpus/$name
	mkdir -p "$corpus" "$dir/fuzz-artifacts"
	seeds=tests/fuzz/corpus/$name
	[ -d "$seeds" ] || seeds=
	log=$dir/fuzz-artifacts/$name.log
	if "$dir/fuzz/fuzz_$name" -max_total_time="$secs" -print_final_stats=1 \
		-artifact_prefix="$dir/fuzz-artifacts/$name-" "$corpus" $seeds >"$log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
		cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
		echo "fuzz: $name: ${secs}s, ${runs:-?} runs, ${cov:-cov: ?}, corpus $(ls "$corpus" | wc -l)"
	else
		echo "fuzz: $name: FAILED (see $log)" >&2
		grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$log" | head -5 >&2 || true
		fail=1
	fi
done
exit $fail
