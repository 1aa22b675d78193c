#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The kernel matrix (make check-kernels): boots every DIR/*/bzImage under
# qemu with an initramfs of this build (initramfs.sh), and Debian 12's own
# kernel (debian-kernel.sh), collects the result lines that checks.sh prints
# on the serial console, and prints the matrix kernel x capability
# (matrix.awk), also written to BUILD/kernel-matrix.md.
#
# Usage: run.sh BUILD_DIR KERNELS_DIR...
# Env: KM_TIMEOUT (seconds per check, default 60), KM_BOOT_TIMEOUT (seconds
#      per kernel, default 480), KM_STALL (seconds without a result line
#      before a guest is taken for hung, default 2 x KM_TIMEOUT + 30),
#      KM_SECONDS (workload seconds, default 2),
#      KM_ONLY (grep -E pattern of the rows to run), KM_ACCEL (kvm or tcg;
#      default kvm when a guest boots with it), KM_KVM_WAIT (seconds a KVM
#      guest has to print its first line, default 15), KM_KVM_DEV (the
#      device tried, /dev/kvm), KM_JOBS (guests at once, default the host's
#      CPUs, at most 4), KM_DEBIAN=0 (without Debian's kernel),
#      KM_INITRAMFS (an initramfs to boot instead of building one),
#      KM_DEBUG=1 (every command's output in the log), KM_CRASH (grep -E
#      pattern: crash the guest at that row), KM_HANG (grep -E pattern: the
#      guest stops making progress at that row, for the watchdog), KM_SMP
#      (the guest's CPUs, default 2), KM_FLIPS (rounds of the optional row
#      that makes the kernel patch its jump labels; 0, the default, leaves
#      it out), KM_PYTHONS (the pyenv versions of the Python rows, default
#      3.12; initramfs.sh), KM_NODE (grep -E pattern of the kernels whose
#      guest also gets Node.js for the Node rows, node.sh; default
#      '^4\.9\.', the bpf backend's oldest kernel; empty: none, the rows
#      say n/a).
# Exit status: 0 when every cell is works/other/refused/timeout or an expected
# failure (tests/kernels/expected), 1 for a WRONG cell or a kernel whose run
# did not finish, 2 for bad usage.
set -eu

[ $# -ge 2 ] || { echo "usage: $0 BUILD_DIR KERNELS_DIR..." >&2; exit 2; }
build=$1
shift
here=$(cd "$(dirname "$0")" && pwd)

# NAME PATH per image, NAME the directory's without "linux-".
list_images() {
	for d in "$@"; do
		for img in "$d"/*/bzImage; do
			[ -f "$img" ] || continue
			name=$(basename "$(dirname "$img")")
			echo "${name#linux-} $img"
		done
	done
}

if [ -z "$(list_images "$@")" ]; then
	echo "kernel matrix skipped: no images in $* (*/bzImage; see tests/kernels/README.md)"
	exit 0
fi
tools="qemu-system-x86_64 busybox cpio gzip"
[ -z "${KM_INITRAMFS:-}" ] || tools=qemu-system-x86_64
for tool in $tools; do
	command -v $tool >/dev/null 2>&1 ||
		{ echo "check-kernels: $tool is missing (scripts/install-deps.sh --kernels)" >&2; exit 1; }
done

out=$build/kernels
mkdir -p "$out"
t_start=$(date +%s)
dirs="$*"
if [ "${KM_DEBIAN:-1}" != 0 ]; then
	"$here/debian-kernel.sh" "$out/debian"
	dirs="$dirs $out/debian"
fi
# shellcheck disable=SC2086
images=$(list_images $dirs | sort -V -k1,1)
if [ -n "${KM_INITRAMFS:-}" ]; then
	cp "$KM_INITRAMFS" "$out/initramfs.cpio.gz"
else
	"$here/initramfs.sh" "$build" "$out/initramfs.cpio.gz"
fi
# The guests KM_NODE names boot this initramfs with Node's archive after it
# (96 MB unpacked: not in every guest).
node_kernels=${KM_NODE-'^4\.9\.'}
if [ -n "$node_kernels" ]; then
	"$here/node.sh" "$out/node.cpio.gz" "$here/../workloads/node"
	cat "$out/initramfs.cpio.gz" "$out/node.cpio.gz" >"$out/initramfs-node.cpio.gz"
fi

# kvm_boots IMAGE: whether a guest under KVM prints init's first line within
# KM_KVM_WAIT seconds; sets accel_why. /dev/kvm may open and pass qemu's own
# set-up and still run no guest (nested virtualization that never enters
# the guest): only a boot tells.
kvm_boots() {
	local dev=${KM_KVM_DEV:-/dev/kvm} wait=${KM_KVM_WAIT:-15} log=$out/kvm-probe.log qpid t0
	if [ ! -w "$dev" ]; then
		accel_why="kvm: no $dev"
		return 1
	fi
	t0=$(date +%s)
	qemu-system-x86_64 -accel kvm -machine q35 -cpu max -smp 1 -m 512 -nographic -no-reboot \
		-kernel "$1" -initrd "$out/initramfs.cpio.gz" \
		-append "console=ttyS0 quiet loglevel=3 panic=-1 KM_PROBE=1" </dev/null >"$log" 2>&1 &
	qpid=$!
	while kill -0 $qpid 2>/dev/null; do
		if grep -aq '@KM|alive' "$log"; then
			kill -KILL $qpid 2>/dev/null
			wait $qpid 2>/dev/null || true
			accel_why="a KVM guest reached its first line in $(($(date +%s) - t0)) s"
			return 0
		fi
		if [ $(($(date +%s) - t0)) -ge "$wait" ]; then
			kill -KILL $qpid 2>/dev/null
			wait $qpid 2>/dev/null || true
			accel_why="kvm: $dev opens, but a guest printed nothing in $wait s"
			return 1
		fi
		sleep 1
	done
	wait $qpid 2>/dev/null || true
	# A guest may print its line and power off between two looks.
	if grep -aq '@KM|alive' "$log"; then
		accel_why="a KVM guest reached its first line in $(($(date +%s) - t0)) s"
		return 0
	fi
	accel_why="kvm: qemu exited: $(grep -av '^\s*$' "$log" | tail -1 | tr -d '\r' | cut -c1-120)"
	return 1
}

# TCG with one host thread for all vCPUs: with a thread per vCPU (qemu's
# default on x86 hosts) guests hang or oops at the int3 of a jump label
# the kernel is patching in __schedule, which every perf event that sees
# context switches makes it do. A loop flipping them (tests/kernels/README.md)
# hung 4.4, 4.9, 4.19 and 5.4 within 300 flips each, and ran 5000 flips on
# each clean with thread=single: the same kernel, CPUs and IPIs, only qemu's
# own parallelism gone. Hardware and KVM execute the kernel's cross-modifying
# code as the kernel expects.
accel=${KM_ACCEL:-}
accel_why="KM_ACCEL"
if [ -z "$accel" ]; then
	accel=tcg,thread=single
	kvm_boots "$(echo "$images" | head -1 | cut -d' ' -f2-)" && accel=kvm
fi
echo "check-kernels: accelerator $accel ($accel_why)"

append="console=ttyS0 quiet loglevel=3 panic=-1 KM_TIMEOUT=${KM_TIMEOUT:-60}"
append="$append KM_SECONDS=${KM_SECONDS:-2} KM_ACCEL=$accel"
[ -z "${KM_ONLY:-}" ] || append="$append KM_ONLY=$KM_ONLY"
[ -z "${KM_DEBUG:-}" ] || append="$append KM_DEBUG=1"
[ -z "${KM_CRASH:-}" ] || append="$append KM_CRASH=$KM_CRASH"
[ -z "${KM_HANG:-}" ] || append="$append KM_HANG=$KM_HANG"
[ -z "${KM_FLIPS:-}" ] || append="$append KM_FLIPS=$KM_FLIPS"

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
	local n last since qpid initrd=$out/initramfs.cpio.gz
	[ -z "$node_kernels" ] || ! echo "$name" | grep -qE "$node_kernels" ||
		initrd=$out/initramfs-node.cpio.gz
	set +e
	timeout -k 10 "${KM_BOOT_TIMEOUT:-480}" qemu-system-x86_64 -accel "$accel" -machine q35 \
		-cpu max -smp "${KM_SMP:-2}" -m 2048 -nographic -no-reboot -kernel "$img" \
		-initrd "$initrd" -append "$append KM_SKIP=$1" </dev/null >"$log" 2>&1 &
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

# run_kernel NAME IMAGE: its boots, its results in $out/NAME.results, what
# it printed for the log in $out/NAME.summary.
run_kernel() {
	name=$1 img=$2
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
	secs=$(($(date +%s) - t0))
	echo "$name|boot|secs|$secs s, qemu exit $qrc|" >>"$out/$name.results"
	echo "check-kernels: $name: $secs s ($attempt boot(s), qemu exit $qrc)"
	awk -F'|' '$2 !~ /^(kernel|done|boot|auto-decision|start|tick)$/ {
		sub(/ +$/, "", $4); sub(/ +$/, "", $5)
		printf "  %-30s %-8s %s%s\n", $2, $3, $5, ($3 != "works" && $4 != "") ? ": " $4 : "" }' \
		"$out/$name.results"
}

# Up to KM_JOBS guests at once: a TCG guest takes one host thread, a KVM
# guest one per vCPU (KM_SMP). The newest kernels first (they take
# longest), so that the last to start are short.
jobs=${KM_JOBS:-$(nproc 2>/dev/null || echo 1)}
[ -n "${KM_JOBS:-}" ] || [ "$accel" != kvm ] || jobs=$((jobs / ${KM_SMP:-2}))
[ "$jobs" -le 4 ] || jobs=4
[ "$jobs" -ge 1 ] || jobs=1
running=""
stop_all() {
	for j in $running; do
		pkill -TERM -P "${j%%:*}" 2>/dev/null || true
		kill -TERM "${j%%:*}" 2>/dev/null || true
	done
	exit 1
}
trap stop_all INT TERM
# reap: prints the summaries of the guests that finished; keeps the others.
reap() {
	local still="" j
	for j in $running; do
		if kill -0 "${j%%:*}" 2>/dev/null; then
			still="$still $j"
		else
			wait "${j%%:*}" || true
			cat "$out/${j#*:}.summary"
		fi
	done
	running=$still
}
echo "check-kernels: $(echo "$images" | wc -l) kernels, $jobs at once"
for pair in $(echo "$images" | sort -r -V -k1,1 | tr ' ' '='); do
	name=${pair%%=*}
	img=${pair#*=}
	while [ "$(echo $running | wc -w)" -ge "$jobs" ]; do
		sleep 2
		reap
	done
	echo "check-kernels: booting $name"
	run_kernel "$name" "$img" >"$out/$name.summary" 2>&1 &
	running="$running $!:$name"
done
while [ -n "$running" ]; do
	sleep 2
	reap
done
trap - INT TERM

results=$(echo "$images" | while read -r name img; do echo "$out/$name.results"; done)
set +e
# shellcheck disable=SC2086
awk -F'|' -v total_secs=$(($(date +%s) - t_start)) -v accel="$accel" -v accel_why="$accel_why" \
	-v jobs="$jobs" -v measured_file="$out/measured.md" \
	-f "$here/matrix.awk" "$here/expected" $results >"$build/kernel-matrix.md"
rc=$?
set -e
cat "$build/kernel-matrix.md"
exit $rc
