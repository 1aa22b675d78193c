#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The kernel matrix (make check-kernels): boots every KERNELS/*/bzImage under
# qemu with an initramfs of this build (initramfs.sh), collects the result
# lines that checks.sh prints on the serial console, and prints the matrix
# kernel x capability (matrix.awk), also written to BUILD/kernel-matrix.md.
#
# Usage: run.sh BUILD_DIR KERNELS_DIR
# Env: KM_TIMEOUT (seconds per check, default 60), KM_BOOT_TIMEOUT (seconds
#      per kernel, default 480), KM_STALL (seconds without a result line
#      before a guest is taken for hung, default 2 x KM_TIMEOUT + 30),
#      KM_SECONDS (workload seconds, default 2),
#      KM_ONLY (grep -E pattern of the rows to run), KM_ACCEL (kvm or tcg;
#      default kvm when it works), KM_DEBUG=1 (every command's output in the
#      log), KM_CRASH (grep -E pattern: crash the guest at that row),
#      KM_HANG (grep -E pattern: the guest stops making progress at that
#      row, for the watchdog), KM_SMP (the guest's CPUs, default 2),
#      KM_FLIPS (rounds of the optional row that makes the kernel patch
#      its jump labels; 0, the default, leaves it out).
# Exit status: 0 when every cell is works/other/refused/timeout or an expected
# failure (tests/kernels/expected), 1 for a WRONG cell or a kernel whose run
# did not finish, 2 for bad usage.
set -eu

[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR KERNELS_DIR" >&2; exit 2; }
build=$1
kernels=$2
here=$(cd "$(dirname "$0")" && pwd)

images=$(ls "$kernels"/*/bzImage 2>/dev/null | sort -V || true)
if [ -z "$images" ]; then
	echo "kernel matrix skipped: no images in $kernels (*/bzImage; see tests/kernels/README.md)"
	exit 0
fi
for tool in qemu-system-x86_64 busybox cpio gzip; do
	command -v $tool >/dev/null 2>&1 ||
		{ echo "check-kernels: $tool is missing (scripts/install-deps.sh --kernels)" >&2; exit 1; }
done

out=$build/kernels
mkdir -p "$out"
t_start=$(date +%s)
"$here/initramfs.sh" "$build" "$out/initramfs.cpio.gz"

# /dev/kvm may exist and still fail when the first vCPU is set up (nested
# virtualization without the MSRs qemu writes): try it, else TCG.
#
# TCG with one host thread for all vCPUs: with a thread per vCPU (qemu's
# default on x86 hosts) guests hang or oops at the int3 of a jump label
# the kernel is patching in __schedule, which every perf event that sees
# context switches makes it do. A loop flipping them (tests/kernels/README.md)
# hung 4.4, 4.9, 4.19 and 5.4 within 300 flips each, and ran 5000 flips on
# each clean with thread=single: the same kernel, CPUs and IPIs, only qemu's
# own parallelism gone. Hardware and KVM execute the kernel's cross-modifying
# code as the kernel expects.
accel=${KM_ACCEL:-}
if [ -z "$accel" ]; then
	accel=tcg,thread=single
	if [ -w /dev/kvm ] && sh -c 'echo quit | timeout 20 qemu-system-x86_64 -accel kvm \
		-cpu max -machine q35 -nodefaults -display none -S -monitor stdio' >/dev/null 2>&1; then
		accel=kvm
	fi
fi

append="console=ttyS0 quiet loglevel=3 panic=-1 KM_TIMEOUT=${KM_TIMEOUT:-60}"
append="$append KM_SECONDS=${KM_SECONDS:-2} KM_ACCEL=$accel"
[ -z "${KM_ONLY:-}" ] || append="$append KM_ONLY=$KM_ONLY"
[ -z "${KM_DEBUG:-}" ] || append="$append KM_DEBUG=1"
[ -z "${KM_CRASH:-}" ] || append="$append KM_CRASH=$KM_CRASH"
[ -z "${KM_HANG:-}" ] || append="$append KM_HANG=$KM_HANG"
[ -z "${KM_FLIPS:-}" ] || append="$append KM_FLIPS=$KM_FLIPS"

results=""
stall=${KM_STALL:-$((2 * ${KM_TIMEOUT:-60} + 30))}

# The @KM lines in a console log so far.
km_lines() { tr -d '\r' <"$1" | grep -ac '@KM|' || true; }

# A guest kernel that crashes (an oops under TCG's cross-modifying code, or
# a real one) loses the rest of its rows: the row it crashed in is marked
# crash, and the kernel boots again from the row after it (at most 3 times).
# One that hangs is stopped when no @KM line has come for $stall seconds
# (a check takes at most twice KM_TIMEOUT; an oopsed kernel may go on
# printing RCU stall warnings, so any output would not do), and is then
# treated as crashed.
boot() {
	local n last since qpid
	set +e
	timeout -k 10 "${KM_BOOT_TIMEOUT:-480}" qemu-system-x86_64 -accel "$accel" -machine q35 \
		-cpu max -smp "${KM_SMP:-2}" -m 2048 -nographic -no-reboot -kernel "$img" \
		-initrd "$out/initramfs.cpio.gz" -append "$append KM_SKIP=$1" </dev/null >"$log" 2>&1 &
	qpid=$!
	last=0
	since=$(date +%s)
	stalled=
	while kill -0 $qpid 2>/dev/null; do
		sleep 2
		n=$(km_lines "$log")
		if [ "$n" != "$last" ]; then
			last=$n
			since=$(date +%s)
		elif [ $(($(date +%s) - since)) -ge "$stall" ]; then
			stalled="no result line for ${stall} s"
			kill -TERM $qpid 2>/dev/null
			break
		fi
	done
	wait $qpid
	qrc=$?
	set -e
}

results=""
for img in $images; do
	name=$(basename "$(dirname "$img")")
	name=${name#linux-}
	echo "check-kernels: booting $name ($accel)"
	t0=$(date +%s)
	: >"$out/$name.results"
	skip=0
	for attempt in 1 2 3; do
		log=$out/$name.log
		[ "$attempt" = 1 ] || log=$out/$name.$attempt.log
		boot $skip
		tr -d '\r' <"$log" | sed -n 's/.*\(@KM|.*\)/\1/p' | sed "s/^@KM|/$name|/" >>"$out/$name.results"
		grep -q "^$name|done|" "$out/$name.results" && break
		last=$(grep "^$name|start|" "$out/$name.results" | tail -1)
		[ -n "$last" ] || break
		idx=$(echo "$last" | cut -d'|' -f3)
		[ "$idx" -gt "$skip" ] || break
		row=$(echo "$last" | cut -d'|' -f4)
		why=$(tr -d '\r' <"$log" | grep -a -m1 -E 'BUG|Oops|int3:|general protection|panic|stall' |
			sed 's/^\[[ 0-9.]*\] //' | tr -s ' |' ' /' | cut -c1-160)
		[ -z "$stalled" ] || why="${why:+$why; }$stalled"
		grep -q "^$name|$row|" "$out/$name.results" ||
			echo "$name|$row|crash|${why:-the guest stopped (qemu exit $qrc)} in attempt $attempt; $log|" \
				>>"$out/$name.results"
		skip=$idx
	done
	t1=$(date +%s)
	echo "$name|boot|secs|$((t1 - t0)) s, qemu exit $qrc|" >>"$out/$name.results"
	awk -F'|' '$2 !~ /^(kernel|done|boot|auto-decision|start|tick)$/ {
		sub(/ +$/, "", $4); sub(/ +$/, "", $5)
		printf "  %-30s %-8s %s%s\n", $2, $3, $5, ($3 != "works" && $4 != "") ? ": " $4 : "" }' \
		"$out/$name.results"
	results="$results $out/$name.results"
done

set +e
# shellcheck disable=SC2086
awk -F'|' -v total_secs=$(($(date +%s) - t_start)) -v accel="$accel" \
	-v measured_file="$out/measured.md" \
	-f "$here/matrix.awk" "$here/expected" $results >"$build/kernel-matrix.md"
rc=$?
set -e
cat "$build/kernel-matrix.md"
exit $rc
