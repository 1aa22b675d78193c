#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The checks of the kernel matrix, run by /init inside the guest (busybox sh).
# Each check runs the real profiler on a real workload once and prints one
# result line:
#
#   @KM|ROW|STATUS|DETAIL|MEASURED
#
# STATUS is works (DETAIL: what -v noted it could not do, if anything),
# other (auto ran perf; DETAIL: why not bpf, from -v), refused (exit status
# 1 or 2; DETAIL: the error line), timeout (still running after KM_TIMEOUT
# seconds), n/a (the kernel lacks what the check needs) or WRONG (ran, but
# the report disagrees with what the workload measured itself, or another
# exit status). MEASURED: the backend, the numbers compared, the seconds.
#
# Settings come from the kernel command line (unknown key=value arguments are
# init's environment): KM_TIMEOUT seconds per check (default 60), KM_SECONDS
# of each workload (default 2), KM_ONLY a grep -E pattern of the rows to run,
# KM_DEBUG=1 shows each command's output, KM_HANG (a grep -E pattern) stops
# making progress at that row, as a hung guest would (the host's watchdog,
# tested).

T=${KM_TIMEOUT:-60}
S=${KM_SECONDS:-2}
F=99
W=/w

# km ROW STATUS DETAIL [MEASURED]
km() {
	echo "@KM|$1|$2|$(echo "$3" | tr '|\n' '/ ' | cut -c1-240)|$(echo "$4" | tr '|\n' '/ ')"
}

# The error line, without the program's name (profile's and offcputime's
# equal reasons then share a note).
errline() {
	grep -e 'error' -e 'cannot run' -e 'no backend' err | tail -1 | grep . || tail -1 err
}

# want ROW: whether to run ROW (KM_ONLY), after the KM_SKIP rows that a
# previous boot of this kernel ran before it crashed; says which row starts
# so that the host knows where a crash happened. KM_CRASH (a grep -E pattern)
# crashes the kernel at that row: the host's resume, tested.
idx=0
want() {
	idx=$((idx + 1))
	[ "$idx" -gt "${KM_SKIP:-0}" ] || return 1
	[ -z "$KM_ONLY" ] || echo "$1" | grep -Eq -e "$KM_ONLY" || return 1
	echo "@KM|start|$idx|$1"
	if [ -n "$KM_CRASH" ] && echo "$1" | grep -Eq -e "$KM_CRASH"; then
		echo c >/proc/sysrq-trigger
	fi
	if [ -n "$KM_HANG" ] && echo "$1" | grep -Eq -e "$KM_HANG"; then
		while :; do sleep 3600; done
	fi
}

# Kills what a check left behind: the workloads it started, by pid.
reap() {
	for p in /proc/[0-9]*; do
		case $(readlink "$p/exe" 2>/dev/null) in
		$W/* | /py/* | /stock/* | /node/* | /bin/profile) kill -KILL "${p#/proc/}" 2>/dev/null ;;
		esac
	done
}

# state PID: the process's state letter, empty once it is gone.
state() {
	local line
	read -r line <"/proc/$1/stat" 2>/dev/null || return
	line=${line##*) }
	echo "${line%% *}"
}

# Seconds since boot, whole.
now() {
	local up rest
	read -r up rest </proc/uptime
	echo "${up%.*}"
}

# bounded CMD...: runs CMD with stdout in out, stderr in err, at most T
# seconds; sets rc (124 on timeout) and secs. A BPF load stuck in an old
# verifier cannot be killed, so a timeout does not wait for the process.
# ON_START, when set, is run once when err first says "sampling started";
# ON_STOP once when -v's count of samples says that sampling has stopped.
bounded() {
	note=
	"$@" >out 2>err &
	pid=$!
	t0=$(cut -d' ' -f1 /proc/uptime)
	deadline=$(($(now) + T))
	started=
	stopped=
	while :; do
		st=$(state $pid)
		[ -z "$st" ] || [ "$st" = Z ] && break
		if [ -z "$started" ] && grep -q 'sampling started' err 2>/dev/null; then
			started=1
			[ -z "$ON_START" ] || $ON_START
		fi
		if [ -n "$started" ] && [ -z "$stopped" ] && grep -q ' samples, .* mid-run drains' err; then
			stopped=1
			[ -z "$ON_STOP" ] || $ON_STOP
		fi
		if [ "$(now)" -ge $deadline ]; then
			kill -KILL $pid 2>/dev/null
			rc=124
			secs=$T
			[ -z "$KM_DEBUG" ] || tail -n 20 err out
			return
		fi
		sleep 0.2
	done
	wait $pid
	rc=$?
	if [ -n "$KM_DEBUG" ]; then
		echo "+ $* (exit $rc)"
		tail -n 20 err out
	fi
	secs=$(awk -v a="$t0" '{ printf "%.1f", $1 - a }' /proc/uptime)
}

# Sum of the counts of the folded lines that match an awk regex.
total() { awk -v re="$1" '$0 ~ re && /;/ { s += $NF } END { print s + 0 }' out; }

# within X LO HI: X in [LO, HI]
within() { awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x >= lo && x <= hi) }'; }

# Samples per second of CPU time against the frequency. Under TCG a vCPU
# that the host does not run for a while misses timer expirations (an
# hrtimer that fires late is forwarded past the periods it missed) while
# its task's clock goes on: fewer samples than CPU time, the more so the
# busier the host. Under KVM the kernel's own accounting holds.
samples_ok() {
	if [ "$KM_ACCEL" = kvm ]; then within "$1" 0.7 1.3; else within "$1" 0.2 1.3; fi
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "inf" }'; }

# The backend that ran and, when auto did not pick bpf, why (from -v).
chosen() { sed -n 's/^[0-9.:]* *[a-z]*: backend \([a-z]*\):.* chosen.*/\1/p' err | head -1; }
# What the profiler noted about the run (what it could not do), from -v: the
# last note, the most particular (the first is often the backend's plan).
noted() { sed -n 's/^[0-9.:]* *[a-z]*: note: //p' err | tail -1; }
# Why auto did not run bpf, from -v: "not used: WHY" where bpf cannot run,
# "usable, but WHY" where it can do only part of what was asked (a pid
# namespace's user stacks by frame pointers, say) and auto took perf.
why_not_bpf() {
	sed -n -e 's/^[0-9.:]* *[a-z]*: backend bpf: not used: //p' \
		-e 's/^[0-9.:]* *[a-z]*: backend bpf: usable, but //p' err | head -1
}

# verdict ROW BACKEND ASSERTION_RESULT...: prints the row's line from rc and
# the assertion (empty: it held; otherwise what was wrong).
verdict() {
	row=$1 backend=$2 wrong=$3
	c=$(chosen)
	caveat=$(noted)
	used=
	[ "$rc" != 0 ] || [ -n "$wrong" ] || features "$row"
	[ -z "$used" ] || caveat="$used${caveat:+; $caveat}"
	measured="${c:-$backend}${note:+, $note}, ${secs} s"
	if [ "$rc" = 124 ]; then
		km "$row" timeout "still running after ${T} s" "$measured"
		reap
	elif [ "$rc" != 0 ] && [ "$rc" != 1 ] && [ "$rc" != 2 ]; then
		km "$row" WRONG "exit $rc: $(tail -1 err)" "$measured"
	elif [ "$rc" != 0 ]; then
		km "$row" refused "$(errline | sed 's/^[0-9.:]* *[a-z]*: //')" "exit $rc, ${secs} s"
	elif [ -n "$wrong" ]; then
		km "$row" WRONG "$wrong" "$measured"
	elif [ "$backend" = auto ] && [ -n "$c" ] && [ "$c" != bpf ]; then
		km "$row" other "bpf: $(why_not_bpf)" "$measured${caveat:+; $caveat}"
	else
		km "$row" works "$caveat" "$measured"
	fi
}

# kver_ge MAJOR MINOR: whether this kernel is that release or later.
kver_ge() {
	awk -v have="$(uname -r)" -v maj="$1" -v min="$2" 'BEGIN { split(have, h, /[.-]/)
		exit !(h[1] > maj || (h[1] == maj && h[2] >= min)) }'
}

# The records a sample of the stack-copy program, from -v's count at the end.
records_a_sample() {
	sed -n 's/.*bpf: stack copies: \([0-9]*\) records for \([0-9]*\) samples.*/\1 \2/p' err |
		awk '$2 > 0 { printf "%.2f", $1 / $2 }'
}

# feature LINE MAJOR MINOR WITHOUT WITH: sets used to WITHOUT when -v said
# LINE (the run went without a feature of Linux MAJOR.MINOR), else WITH;
# wrong when the kernel is that release or later.
feature() {
	if grep -q "$1" err; then
		used=$4
		! kver_ge "$2" "$3" || wrong="-v: \"$1\", on Linux $2.$3+"
	else
		used=$5
	fi
}

# features ROW: what the run used of the newer kernels' features, as -v
# said it (sets used), and whether a kernel that has one went without it
# (sets wrong).
features() {
	case $1 in
	"fp -- CMD/bpf")
		feature 'no batch map operations' 5 6 \
			"counts drained key by key (no batch map operations before 5.6)" \
			"counts drained in batches (5.6)"
		;;
	"--cgroup v2/bpf")
		feature 'looks threads up in a table' 4 11 \
			"a thread table (perf events follow v2 cgroups from 4.11)" \
			"perf events of the cgroup (4.11), no thread table"
		;;
	"pidns: fp -- CMD/bpf")
		feature 'without bpf_get_ns_current_pid_tgid' 5 7 \
			"ids from perf records (bpf_get_ns_current_pid_tgid is 5.7)" \
			"ids from bpf_get_ns_current_pid_tgid (5.7)"
		grep -q 'tasks are named by their ids there' err ||
			wrong="-v did not say how tasks in the pid namespace are named"
		;;
	--mntnsmap/bpf)
		used="mount namespace ids read by CO-RE over the kernel's BTF"
		;;
	build-id*)
		feature 'lacks build_id' 5 12 \
			"device and inode in the mmap records (build-ids there are 5.12)" \
			"build-ids in the mmap records (5.12)"
		;;
	dwarf*/bpf)
		per=$(records_a_sample)
		if grep -q 'user registers of kernel-mode samples: bpf_task_pt_regs' err; then
			used="one record a sample ($per), user registers by bpf_task_pt_regs (5.15, BTF)"
			[ "$per" = 1.00 ] || wrong="$per records a sample from the one-record program"
		else
			used="pieces of $(sed -n 's/.*stack copies in pieces of \([0-9]*\) bytes.*/\1/p' err |
				head -1) bytes, $per records a sample"
			if kver_ge 5 15 && [ -r /sys/kernel/btf/vmlinux ]; then
				wrong="Linux 5.15+ with BTF, but the one-record program was refused (-vv: its verifier log)"
			fi
		fi
		;;
	esac
}

# --- the checks: each sets rc/secs through bounded and prints one line ---

# Launch a CPU-bound workload; samples against its own CPU time (busybox time).
check_launch() {
	row=$1 backend=$2 as=$3
	shift 3
	bounded $as profile --verbose --backend "$backend" -F $F -f "$@" -- time $W/demo $S
	# Without kernel samples (paranoid 2 and no CAP_PERFMON) only user time is sampled.
	fields='$1 == "user" || $1 == "sys"'
	! grep -q 'kernel stacks are not collected' err || fields='$1 == "user"'
	cpu=$(awk "$fields"' { sub(/s$/, "", $3); split($2, m, "m"); s += m[1] * 60 + $3 }
		END { print s + 0 }' err)
	n=$(total '^demo;')
	r=$(ratio "$n" "$(awk -v c="$cpu" -v f=$F 'BEGIN { print c * f }')")
	note="$n samples / ${cpu} s CPU"
	wrong=
	grep -q 'compute_hash' out || wrong="no compute_hash in the stacks"
	[ -n "$wrong" ] || samples_ok "$r" || wrong="$n samples for ${cpu} s of CPU at $F Hz (ratio $r)"
	verdict "$row" "$backend" "$wrong"
}

check_dwarf() {
	row=$1 backend=$2 as=$3
	bounded $as profile --verbose --backend "$backend" --unwind dwarf -F $F -f -- $W/nofp chain $S
	wrong=
	grep -q 'nofp_a;nofp_b;nofp_c' out || wrong="no main..nofp_a;nofp_b;nofp_c stack ($(total nofp_c) samples in nofp_c)"
	verdict "$row" "$backend" "$wrong"
}

# most_other RE NOT: the commonest stack in out that matches RE and not NOT
# (awk regexes), with its count, cut to 150 characters around the middle.
most_other() {
	awk -v re="$1" -v not="$2" '$0 ~ re && $0 !~ not {
		c[substr($0, 1, length($0) - length($NF) - 1)] += $NF }
		END { for (k in c) if (c[k] > m) { m = c[k]; s = k }
			print m, substr(s, 1, 90) "..." substr(s, length(s) - 60) }' out
}

# A recursion 200 deep without frame pointers: whole stacks (from _start,
# or cut at 127 frames with the marker) from the stack-copy program's one
# record or its pieces; -a marks the kernel's frames.
check_dwarf_deep() {
	row=$1 backend=$2
	local whole_re='^nofp;([[]truncated[]];nofp_recurse|_start);'
	bounded profile --verbose --backend "$backend" --unwind dwarf --stack-dump-size 16384 -a \
		-F $F -f -- $W/nofp deep $S
	# The samples in the recursion (its leaf is named however the unwinding
	# went), not those of the loader or of main's clock_gettime.
	n=$(total '^nofp;.*nofp_(recurse|c)')
	whole=$(total "$whole_re.*nofp_(recurse|c)")
	note="$whole of $n stacks in the recursion whole"
	# Without bpf_task_pt_regs, samples taken in kernel mode (under TCG,
	# many timer interrupts land on the way back to user mode) have
	# frame-pointer user stacks, which -v warns of: not asked to be whole.
	if ! grep -q 'user registers of kernel-mode samples: bpf_task_pt_regs' err; then
		k=$(total '^nofp;.*nofp_(recurse|c).*_[[]k[]]')
		n=$((n - k))
		whole=$((whole - $(total "$whole_re.*nofp_(recurse|c).*_[[]k[]]")))
		note="$whole of $n user-mode stacks in the recursion whole, $k in kernel mode"
	fi
	wrong=
	awk -v w="$whole" -v n="$n" 'BEGIN { exit !(n > 0 && w * 10 >= n * 9) }' ||
		wrong="$whole of $n samples in nofp's recursion have whole stacks; the most other: $(
			most_other '^nofp;.*nofp_(recurse|c)' "$whole_re")"
	verdict "$row" "$backend" "$wrong"
}

# The in-kernel unwinder by the tables (issue 45, --unwind auto): nofp's 40-deep recursion without
# frame pointers, 97 in 100 of its user-mode samples whole from _start.
# Profiled by -p once it runs, so that its tables are loaded before its
# first sample (one noted in the run is loaded only after some samples:
# 150 ms under TCG on 4.9, rows a system call each). bpftool loads the
# object alone first, when the guest has it, for the verifier's counts (in
# the row's note).
check_native() {
	row=$1
	# __libc_start_call_main has a name only where libc's debug file is.
	local whole_re='^nofp;_start;__libc_start_main;[^;]*;main;'
	local ver="" wpid
	if command -v bpftool >/dev/null; then
		mkdir -p /sys/fs/bpf
		mount -t bpf bpf /sys/fs/bpf 2>/dev/null
		t0=$(cut -d' ' -f1 /proc/uptime)
		bpftool -d prog loadall $W/bpf/profile_native.bpf.o /sys/fs/bpf/native >vlog 2>&1
		ver=$(sed -n 's/^processed \([0-9]*\) insns.*/\1/p' vlog | tr '\n' '/')
		[ -z "$KM_DEBUG" ] || grep -v '^libbpf: \|^[0-9]*: (' vlog | tail -n 30
		ver="verifier ${ver:-refused} insns in $(awk -v a="$t0" '{ printf "%.1f", $1 - a }' /proc/uptime) s"
		rm -rf /sys/fs/bpf/native
	fi
	$W/nofp deep $((S * 3 + 5)) 40 >/dev/null &
	wpid=$!
	sleep 1
	bounded profile --verbose --backend bpf --unwind auto -a -F $F -f -p $wpid $S
	kill $wpid 2>/dev/null
	wait $wpid 2>/dev/null
	k=$(total '^nofp;.*nofp_(recurse|c).*_[[]k[]]')
	n=$(($(total '^nofp;.*nofp_(recurse|c)') - k))
	whole=$(($(total "$whole_re.*nofp_(recurse|c)") - $(total "$whole_re.*nofp_(recurse|c).*_[[]k[]]")))
	note="$whole of $n user-mode stacks in the recursion whole, $k in kernel mode; $ver"
	wrong=
	if ! grep -q 'user stacks unwound by the program' err; then
		wrong="not loaded: $(grep -m1 'refused the program that unwinds' err)"
	elif ! awk -v w="$whole" -v n="$n" 'BEGIN { exit !(n > 0 && w * 100 >= n * 97) }'; then
		wrong="$whole of $n samples in nofp's recursion have whole stacks; the most other: $(
			most_other '^nofp;.*nofp_(recurse|c)' "$whole_re")"
	fi
	verdict "$row" bpf "$wrong"
}

# Samples in system calls (syscalls reads /dev/zero from read_loop; under
# TCG its clock_gettime is one too): their user registers are on the
# kernel stack, found by bpf_task_pt_regs (5.15 with BTF) or read at the
# top of the 16 KiB-aligned stack the interrupted rsp is on, so nine in ten
# keep main;read_loop above the kernel's frames. Those that interrupted an
# interrupt (its own stack) get frame-pointer user stacks, which lose
# read_loop (libc's read and clock_gettime keep no frame pointer), and -v
# says so.
check_dwarf_syscalls() {
	row=$1 backend=$2
	bounded profile --verbose --backend "$backend" --unwind dwarf -F $F -f -- $W/syscalls $S
	n=$(total '^syscalls;')
	k=$(total ';entry_SYSCALL_64')
	u=$(total 'main;read_loop;.*;entry_SYSCALL_64')
	note="$k of $n in system calls, $u of them under main;read_loop"
	wrong=
	if ! awk -v k="$k" -v n="$n" 'BEGIN { exit !(n > 0 && k * 2 >= n) }'; then
		wrong="$k of $n samples of syscalls in system calls"
	elif ! awk -v k="$k" -v u="$u" 'BEGIN { exit !(u * 10 >= k * 9) }'; then
		wrong="$u of $k samples in system calls under main;read_loop; the most other: $(
			most_other ';entry_SYSCALL_64' 'main;read_loop;')"
	fi
	verdict "$row" "$backend" "$wrong"
}

# Ten times a copy of busy runs as prog for 0.1 s while sampled, exits, and
# ratio31 is renamed over its path at once, maybe before the profiler
# named its frames (under TCG, whether it does is timing). prog's
# frames are named from busy, or [unknown] with a warning, never from
# ratio31: by the build-id of the kernel's mmap record (5.12+), else by
# device and inode. The runs start when sampling has (a fixed second
# before was once all over before a slow start under TCG: 0 samples).
bid_go() {
	sh -c "for i in 1 2 3 4 5 6 7 8 9 10; do cp $W/busy /tmp/bid/prog &&
		cp $W/ratio31 /tmp/bid/prog.new && /tmp/bid/prog 2 0.1 &&
		mv /tmp/bid/prog.new /tmp/bid/prog || exit 1; done" &
	spid=$!
}

check_buildid() {
	row=$1 backend=$2
	rm -rf /tmp/bid
	mkdir /tmp/bid
	spid=
	ON_START=bid_go
	bounded profile --verbose --backend "$backend" -F $F -f $((S + 2))
	ON_START=
	[ -z "$spid" ] || wait $spid
	n=$(total '^prog;')
	forged=$(awk '/^prog;/ && /;(hot_loop|warm_loop)/' out | wc -l)
	note="$n samples of prog"
	wrong=
	[ "$forged" = 0 ] || wrong="$forged stacks of prog named from the program renamed over it"
	[ -n "$wrong" ] || [ "$n" -ge 20 ] || wrong="prog was sampled $n times"
	[ -n "$wrong" ] || grep -q 'burn_' out || grep -q 'replaced or removed' err ||
		wrong="neither busy's names nor a warning"
	verdict "$row" "$backend" "$wrong"
}

# check_attach's busy starts stopped and is woken when sampling has started;
# it runs 1 s of its own clock, so its whole CPU time is inside the profile.
# A shell between busy and us reaps it and prints its CPU time (busybox ash
# reaps any child whenever it waits for one, so /proc/PID/stat of a zombie
# child of ours cannot be read).
busy_go() {
	kill -CONT $bpid
}

# -p PID or system-wide on busy: its samples against its CPU time.
check_attach() {
	row=$1 backend=$2 mode=$3
	rm -f bpid btimes
	sh -c "sh -c 'kill -STOP \$\$; exec $W/busy 1 1' & p=\$!; echo \$p >bpid
		while kill -0 \$p 2>/dev/null; do wait \$p; done; times >btimes" &
	wpid=$!
	bpid=
	deadline=$(($(now) + T))
	while [ -z "$bpid" ] || [ "$(state $bpid)" != T ]; do
		[ "$(now)" -lt $deadline ] || { km "$row" WRONG "harness: busy did not start" ""; return; }
		sleep 0.1
		bpid=$(cat bpid 2>/dev/null)
	done
	target=
	[ "$mode" = all ] || target="-p $bpid"
	ON_START=busy_go
	bounded profile --verbose --backend "$backend" -F $F -f $target $((S + 1))
	ON_START=
	kill -CONT $bpid
	wait $wpid
	# times: the shell's user and system time, then its children's.
	cpu=$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, m, "m"); sub(/s$/, "", m[2]);
		s += m[1] * 60 + m[2] } } END { print s + 0 }' btimes)
	n=$(total '^busy;')
	r=$(ratio "$n" "$(awk -v c="$cpu" -v f=$F 'BEGIN { print c * f }')")
	note="$n samples / ${cpu} s CPU"
	wrong=
	grep -q 'burn_[ab]' out || wrong="no burn_a/burn_b in the stacks"
	[ -n "$wrong" ] || samples_ok "$r" || wrong="$n samples for ${cpu} s of CPU at $F Hz (ratio $r)"
	verdict "$row" "$backend" "$wrong"
}

# Off-CPU: a thread that sleeps 10 ms at a time; its total against its clock.
check_offcpu() {
	row=$1 backend=$2 as=$3
	bounded $as offcputime --verbose --backend "$backend" -f -- $W/blocking sleep $S
	want_us=$(sed -n 's/^offcpu .*comm=blk-sleep us=\([0-9]*\).*/\1/p' out)
	got=$(total '^blk-sleep;')
	r=$(ratio "$got" "$want_us")
	note="$got / ${want_us} us"
	wrong=
	# At paranoid 2 the perf backend's switch records carry no stacks (the
	# switch is in the kernel); it says so and still measures the time.
	# Before Linux 4.16 a system call that took x86-64's fast path left
	# pt_regs->bp unsaved, and the kernel walked the user stack from whatever
	# an earlier interrupt had stored there: until one lands while the thread
	# runs its own code the chain stops at the libc wrapper (perf record's
	# too). Such a run shows every blocked stack cut right there.
	if grep -q 'note: off-CPU time is measured per thread without stacks' err ||
		grep -Eq 'sleep_(loop|thread)' out; then
		:
	elif awk '/^blk-sleep;/ && !/^blk-sleep;clock_nanosleep;entry_SYSCALL_64_fastpath;/ { bad = 1 }
		/^blk-sleep;/ { n++ } END { exit !(n > 0 && !bad) }' out; then
		note="$note; user stacks cut at clock_nanosleep by the kernel's syscall fast path (pt_regs->bp not saved before 4.16)"
	else
		wrong="no sleep_loop/sleep_thread in the stacks"
	fi
	# bpf unwinds by the tables by default (--unwind auto): the kernel must
	# take that switch program. Whether a wait reaches sleep_loop (which frame
	# pointers lose: libc's nanosleep keeps none) depends on the tables being
	# read before the waits end, which under emulation took the whole run.
	if [ -z "$wrong" ] && grep -q 'refused the off-CPU program that unwinds' err; then
		wrong="the kernel refused the off-CPU program that unwinds by the tables"
	elif [ "$backend" = bpf ] && [ -z "$as" ] && ! grep -q '^blk-sleep;.*sleep_loop;nanosleep;' out; then
		note="$note; no wait reached sleep_loop: the tables were read after the waits"
	fi
	[ -n "$wrong" ] || within "$r" 0.85 1.15 || wrong="blk-sleep: $got us, its clock says ${want_us:-?} us (ratio $r)"
	verdict "$row" "$backend" "$wrong"
}

# The CPU time of thread TID of process PID so far, in clock ticks (utime + stime).
thread_ticks() {
	local line
	read -r line <"/proc/$1/task/$2/stat" 2>/dev/null || { echo 0; return; }
	echo "${line##*) }" | awk '{ print $12 + $13 }'
}

r31_go() { t0_ticks=$(thread_ticks $rpid $hot); }
r31_stop() { t1_ticks=$(thread_ticks $rpid $hot); }

# -L TID: ratio31's hot thread only; its warm thread, as busy as a third of
# it, must not show. Samples against the hot thread's CPU time while sampled.
#
# A WRONG run goes again once (again_once): one CI run's 4.4 guest had 8
# samples for 1.87 s of the thread's CPU (perf), where every run before and
# after had 160-180.
check_tid() {
	again_once tid_once "$@"
}

# again_once ONCE ROW BACKEND ...: ONCE (a function that sets rc, note and
# wrong) run, and where it was WRONG run again, the cell the second run's,
# its note with the first's reason and, where why_fn names a function, what
# that prints of the first run.
again_once() {
	local once=$1 first
	shift
	$once "$@"
	[ "$rc" = 0 ] && [ -n "$wrong" ] || { verdict "$1" "$2" "$wrong"; return; }
	first="$wrong${why_fn:+; $($why_fn)}"
	# A line for the host's watchdog, which counts a guest hung after
	# KM_STALL seconds without one: two runs may take longer together.
	echo "@KM|tick|$1 again"
	$once "$@"
	note="$note; the first run WRONG: $first"
	verdict "$1" "$2" "$wrong"
}

# One run of check_tid: sets rc, note and wrong.
tid_once() {
	row=$1 backend=$2
	rm -f r31
	$W/ratio31 $((S + 30)) >r31 &
	rpid=$!
	deadline=$(($(now) + T))
	until grep -q hot_tid= r31 2>/dev/null; do
		[ "$(now)" -lt $deadline ] || { rc=0 note= wrong="harness: ratio31 did not start"; kill $rpid; return; }
		sleep 0.1
	done
	hot=$(sed -n 's/.*hot_tid=\([0-9]*\).*/\1/p' r31)
	t0_ticks=$(thread_ticks $rpid $hot)
	t1_ticks=
	ON_START=r31_go
	ON_STOP=r31_stop
	bounded profile --verbose --backend "$backend" -F $F -f -L $hot $S
	ON_START=
	ON_STOP=
	[ -n "$t1_ticks" ] || t1_ticks=$(thread_ticks $rpid $hot)
	cpu=$(awk -v a="$t0_ticks" -v b="$t1_ticks" 'BEGIN { print (b - a) / 100 }')
	kill $rpid
	wait $rpid 2>/dev/null
	n=$(total 'hot_loop')
	r=$(ratio "$n" "$(awk -v c="$cpu" -v f=$F 'BEGIN { print c * f }')")
	note="$n samples / ${cpu} s CPU of the thread"
	wrong=
	grep -q 'hot_loop' out || wrong="no hot_loop in the stacks"
	! grep -q 'warm_loop' out || wrong="warm_loop of another thread is in the report ($(total warm_loop) samples)"
	[ -n "$wrong" ] || samples_ok "$r" || wrong="$n samples for ${cpu} s of CPU at $F Hz (ratio $r)"
}

# Bad inputs: each exits 1 or 2 with one line, whichever backend would run.
check_badinputs() {
	row=$1
	bad=
	for args in "-F 0 1" "-L 999999999 1" "--cgroup /tmp 1" "-f -- /nonexistent/cmd"; do
		# shellcheck disable=SC2086
		bounded profile $args
		lines=$(wc -l <err)
		if [ "$rc" != 1 ] && [ "$rc" != 2 ] || [ "$lines" != 1 ]; then
			bad="${bad:+$bad; }profile $args: exit $rc, $lines line(s): $(head -1 err)"
		fi
	done
	if [ -n "$bad" ]; then
		km "$row" WRONG "$bad" ""
	else
		km "$row" works "" "4 commands, exit 1 or 2 with one line each"
	fi
}

# --wall: on-CPU and off-CPU of pp-ping together against its wall clock.
check_wall() {
	row=$1 backend=$2 as=$3
	bounded $as profile --verbose --backend "$backend" --wall -F $F -f -- $W/pingpong $S
	want_us=$(sed -n 's/^offcpu .*comm=pp-ping .*wall_us=\([0-9]*\).*/\1/p' out)
	got=$(total '^pp-ping;')
	r=$(ratio "$got" "$want_us")
	note="$got / ${want_us} us"
	wrong=
	if grep -q 'spent on a CPU in the kernel are counted' err; then
		# Paranoid 2: few user-mode samples of a thread that lives in the
		# kernel; its time there under the placeholder of withheld stacks.
		grep -q '^pp-ping;\[Missed User Stack\];\[Missed Kernel Stack\] ' out ||
			wrong="no placeholder for pp-ping's time in the kernel"
	else
		grep -q 'ping_loop' out || wrong="no ping_loop in the stacks"
	fi
	[ -n "$wrong" ] || within "$r" 0.8 1.2 || wrong="pp-ping: $got us, its clock says ${want_us:-?} us (ratio $r)"
	verdict "$row" "$backend" "$wrong"
}

# --cgroup DIR: busy inside, demo outside; only busy may show.
check_cgroup() {
	row=$1 backend=$2 dir=$3
	$W/busy 1 600 &
	bpid=$!
	$W/demo 600 &
	dpid=$!
	echo $bpid >"$dir/cgroup.procs"
	sleep 0.5
	bounded profile --verbose --backend "$backend" -F $F -f --cgroup "$dir" $S
	kill -KILL $bpid $dpid
	wait $bpid $dpid 2>/dev/null
	# Where perf events cannot follow the cgroup, bpf keeps a thread table.
	! grep -q 'looks threads up in a table' err || note="thread table"
	wrong=
	grep -q 'burn_[ab]' out || wrong="no burn_a/burn_b of the cgroup's busy"
	! grep -q 'compute_hash' out || wrong="demo, outside the cgroup, is in the report"
	verdict "$row" "$backend" "$wrong"
}

# The 8 bytes of a number, little-endian, in hex as bpftool takes them.
le8() {
	local v=$1 i=0 hex=
	while [ $i -lt 8 ]; do
		hex="$hex $(printf %02x $((v & 255)))"
		v=$((v >> 8))
		i=$((i + 1))
	done
	echo $hex
}

# bcc's --mntnsmap (bpf, CO-RE over kernel BTF): busy in a mount namespace
# whose id is in the pinned map, demo outside it; only busy may show.
check_mntnsmap() {
	row=$1 map=/sys/fs/bpf/km_nsmap
	if ! command -v bpftool >/dev/null; then
		km "$row" n/a "no bpftool on the host that built the initramfs"
		return
	fi
	mkdir -p /sys/fs/bpf
	grep -q ' /sys/fs/bpf ' /proc/mounts || mount -t bpf bpf /sys/fs/bpf
	rm -f $map
	unshare -m $W/busy 1 600 &
	bpid=$!
	$W/demo 600 &
	dpid=$!
	sleep 0.5
	ino=$(stat -L -c %i /proc/$bpid/ns/mnt)
	# Before 4.15 or so bpftool cannot make the map (no bpf filesystem, no
	# map names): the row needs a kernel where bcc's tools could make one.
	if ! bpftool map create $map type hash key 8 value 4 entries 16 name km_nsmap 2>err ||
		! bpftool map update pinned $map key hex $(le8 "$ino") value hex 01 00 00 00 2>err; then
		kill -KILL $bpid $dpid
		wait $bpid $dpid 2>/dev/null
		km "$row" n/a "bpftool could not pin a map here: $(tail -1 err)"
		return
	fi
	bounded profile --verbose --backend bpf -F $F -f --mntnsmap $map $S
	kill -KILL $bpid $dpid
	wait $bpid $dpid 2>/dev/null
	rm -f $map
	wrong=
	grep -q 'burn_[ab]' out || wrong="no burn_a/burn_b of busy in the mapped namespace"
	! grep -q 'compute_hash' out || wrong="demo, outside the namespace, is in the report"
	verdict "$row" bpf "$wrong"
}

# A pid that does not exist: exit 1 or 2 with one line.
check_badpid() {
	row=$1 backend=$2
	bounded profile --backend "$backend" -p 999999999 1
	lines=$(wc -l <err)
	if [ "$rc" = 1 ] || [ "$rc" = 2 ] && [ "$lines" = 1 ]; then
		km "$row" works "" "exit $rc: $(cat err)"
	elif [ "$rc" = 124 ]; then
		km "$row" timeout "still running after ${T} s"
	else
		km "$row" WRONG "exit $rc, $lines line(s): $(head -1 err)" ""
	fi
}

# auto: which backend it chose, how long the decision took and when sampling
# started (-v's lines timed by busybox ts from the start).
check_auto() {
	row=$1
	bounded sh -c "set -o pipefail; profile --verbose -F $F -f -- $W/demo 1 2>&1 >/dev/null |
		ts -s '%.s' >&2"
	at=$(sed -n 's/^\([0-9.:]*\) [a-z]*: backend [a-z]*:.* chosen.*/\1/p' err | head -1)
	started=$(sed -n 's/^\([0-9.:]*\) [a-z]*: [a-z]*: sampling started/\1/p' err | head -1)
	wrong=
	[ -n "$at" ] || wrong="no backend chosen in -v"
	verdict "$row" auto "$wrong"
	echo "@KM|auto-decision|${at:-?}|$(chosen)|${started:-?}"
}

sysctl_paranoid() { echo "$1" >/proc/sys/kernel/perf_event_paranoid; }

cg_setup() {
	mount -t tmpfs -o mode=0755 cgroup /sys/fs/cgroup 2>/dev/null
	if grep -qw cgroup2 /proc/filesystems; then
		mkdir -p /sys/fs/cgroup/unified
		mount -t cgroup2 cgroup2 /sys/fs/cgroup/unified || return
		# As systemd does: enable the controllers below the root. Until the
		# root's subtree_control is written, old kernels (4.19, 5.4) give
		# new cgroups no implicit perf_event css.
		for c in $(cat /sys/fs/cgroup/unified/cgroup.controllers); do
			echo "+$c" >/sys/fs/cgroup/unified/cgroup.subtree_control
		done
		mkdir -p /sys/fs/cgroup/unified/km
	fi
}

cg_v1() {
	mkdir -p /sys/fs/cgroup/perf_event
	mount -t cgroup -o perf_event perf_event /sys/fs/cgroup/perf_event &&
		mkdir -p /sys/fs/cgroup/perf_event/km
}

# --- Python: the small Pythons of /py (tests/kernels/python.sh) ---

# The Python frames of each folded line of out whose comm is python3.X, as
# "count<TAB>name (file);name (file);...", root first: the frames named
# "qualname (file:line)" and the markers "[python: ...]", their lines left
# out; the native frames around them dropped.
py_stacks() {
	awk '$1 ~ /^python[0-9.]*;/ {
		n = $NF; sub(/ [0-9]+$/, "")
		k = split($0, f, ";"); s = ""
		for (i = 2; i <= k; i++) {
			if (f[i] ~ /^\[python: [a-z]+\]$/) { s = s ";" f[i]; continue }
			if (f[i] !~ / \([^()]*:[0-9]+\)$/) continue
			sub(/:[0-9]+\)$/, ")", f[i]); s = s ";" f[i]
		}
		print n "\t" substr(s, 2) }' out
}

# pyshare RE: the samples (out's counts) whose Python frames match RE, whole.
pyshare() { py_stacks | awk -F'\t' -v re="^($1)\$" '$2 ~ re { s += $1 } END { print s + 0 }'; }

# The most common Python stack that does not match RE, shortened, with its count.
py_most_other() {
	py_stacks | awk -F'\t' -v re="^($1)\$" '$2 !~ re { c[$2] += $1 }
		END { for (k in c) if (c[k] > m) { m = c[k]; s = k }
			if (s == "") s = "(no Python frames)"
			print m, (length(s) > 150 ? substr(s, 1, 70) "..." substr(s, length(s) - 70) : s) }'
}

# The CPython version -v named, and the kernel's refusal of its walk, if any.
py_version() { sed -n 's/.*python: pid [0-9]* runs CPython \([0-9.]*\) .*/\1/p' err | head -1; }
py_refusal() { sed -n 's/.*python: \(the kernel refused the Python walk .*\)/\1/p' err | head -1; }

# N frames of recurse in deep.py, as a regex (brackets, not backslashes:
# awk -v takes escapes out of its values).
py_recurse() {
	awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "recurse [(]deep[.]py[)];" }'
}

# deep.py 30 deep on PY: of the samples whose Python frames are in deep.py's
# recursion, nine in ten carry exactly <module>;main;recurse x29-30;leaf (30
# in the leaf's loop, 29 while it returns or starts), twenty at least, and
# -v named the interpreter's version. Samples without Python frames are
# left out: those of the interpreter's start-up (its imports, seconds under
# TCG) and those taken before user space found the thread's state.
# With a fourth argument, native: the in-kernel unwinder by the tables walks
# the native frames first (issue 45, --unwind auto), whose finish program
# hands the sample to the Python walk: 31 tail calls at most, within 4.9's
# 32; its samples with Python frames must also reach _start natively.
#
# A WRONG run goes again once, the cell the second run's, its note with
# the first's reason and -v's Python lines: a loaded host's TCG guest gave
# one run without any Python frame (4.19, perf), whose rerun passed.
check_py_fp() {
	why_fn=py_fp_why
	again_once py_fp_once "$@"
	why_fn=
}

# -v's last Python lines of a run.
py_fp_why() {
	echo "-v: $(grep 'python: ' err | sed 's/^[0-9.:]* *[a-z]*: //' | tail -n 3 | tr '\n' ' ')"
}

# One run of check_py_fp: sets rc, note and wrong.
py_fp_once() {
	row=$1 backend=$2 py=$3 native=${4:-}
	if [ -n "$native" ]; then
		bounded profile --verbose --backend "$backend" --unwind auto -a -F $F -f -- "$py" \
			-S -E /w/py/deep.py $S 30
	else
		bounded profile --verbose --backend "$backend" -F $F -f -- "$py" -S -E /w/py/deep.py $S 30
	fi
	local head='<module> [(]deep[.]py[)];main [(]deep[.]py[)];' leaf='leaf [(]deep[.]py[)]'
	local re="$head$(py_recurse 30)$leaf|$head$(py_recurse 29)$leaf"
	n=$(pyshare '.*(recurse|leaf) [(]deep[.]py[)].*')
	whole=$(pyshare "$re")
	pv=$(py_version)
	note="CPython ${pv:-?}, $whole of $n samples in the recursion whole, $(
		pyshare '') without Python frames"
	wrong=
	if [ -z "$pv" ]; then
		wrong="-v named no CPython for ${py##*/}"
	elif ! awk -v w="$whole" -v n="$n" 'BEGIN { exit !(n >= 20 && w * 10 >= n * 9) }'; then
		wrong="$whole of $n samples in deep.py's recursion with its whole Python stack; the most other: $(
			py_most_other "$re")"
		why=$(py_refusal)
		[ -z "$why" ] || wrong="$wrong; $why"
	fi
	# Of the user-mode samples (no _[k] frame: 4.9 has no way to a
	# kernel-mode sample's user registers, and under TCG many land there).
	if [ -n "$native" ] && [ -z "$wrong" ]; then
		local from_start user
		user=$(($(total 'recurse [(]deep[.]py') - $(total 'recurse [(]deep[.]py.*_[[]k[]]')))
		from_start=$(($(total '^python[0-9.]*;_start;.*recurse [(]deep[.]py') -
			$(total '^python[0-9.]*;_start;.*recurse [(]deep[.]py.*_[[]k[]]')))
		note="$note, $from_start of $user user-mode ones from _start natively"
		grep -q 'user stacks unwound by the program' err ||
			wrong="not loaded: $(grep -m1 'refused the program that unwinds' err)"
		[ -n "$wrong" ] || awk -v w="$from_start" -v n="$user" 'BEGIN { exit !(n >= 20 && w * 10 >= n * 9) }' ||
			wrong="$from_start of $user user-mode samples in the recursion reach _start natively; the most other: $(
				most_other 'recurse [(]deep[.]py' '^python[0-9.]*;_start;|_[[]k[]]'); $(
				sed -n 's/.*native unwinding: \([0-9]* stacks walked.*\)/\1/p; s/.*native unwinding: \(.*re-reads put off.*\)/\1/p' err | tr '\n' ' ')"
	fi
}

# deep.py 200 deep: the in-kernel walk reads 128 frames (8 tail-called
# pieces of 16); nine in ten of the samples in leaf have the marker, 127
# recurse and leaf.
check_py_deep() {
	row=$1 backend=$2 py=$3
	bounded profile --verbose --backend "$backend" -F $F -f -- "$py" -S -E /w/py/deep.py $S 200
	local re="[[]python: truncated[]];$(py_recurse 127)leaf [(]deep[.]py[)]"
	n=$(pyshare '.*leaf [(]deep[.]py[)]')
	cut=$(pyshare "$re")
	note="CPython $(py_version), $cut of $n samples in leaf cut at 128 frames"
	wrong=
	why=$(py_refusal)
	awk -v w="$cut" -v n="$n" 'BEGIN { exit !(n >= 20 && w * 10 >= n * 9) }' ||
		wrong="$cut of $n samples in leaf with the marker and 128 frames; the most other: $(
			py_most_other "$re")${why:+; $why}"
	verdict "$row" "$backend" "$wrong"
}

# offcputime on blocked.py for 2 S seconds: the thread in time.sleep is
# off-CPU nearly all of them under Thread.run;waits_in_sleep (run before
# 3.11, which added qualified names). Half at least: the thread starts
# after the interpreter's own start-up. A quarter with bpf: its walk learns
# of a thread started mid-run when user space reads the threads again, at
# the drain of the off-CPU counts or the thread scan, each once a second
# (until then the thread's intervals keep their native frames), and the
# code objects are named at the drains while the process lives (frames
# drained after it exited are "[python: unreadable]"). With 2 s a loaded
# 5.4 had 0.58 s, and 2 of 8 runs on 4.19 none; hence twice S.
check_py_offcpu() {
	row=$1 backend=$2 py=$3
	local s2=$((S * 2))
	bounded offcputime --verbose --backend "$backend" -f -- "$py" -S -E /w/py/blocked.py $s2
	local re='.*(Thread[.])?run [(]threading[.]py[)];waits_in_sleep [(]blocked[.]py[)]'
	us=$(pyshare "$re")
	lo=0.5
	[ "$backend" != bpf ] || lo=0.25
	r=$(ratio "$us" $((s2 * 1000000)))
	note="CPython $(py_version), $us us under waits_in_sleep in ${s2} s"
	wrong=
	why=$(py_refusal)
	within "$r" "$lo" 1.1 ||
		wrong="$us us of ${s2} s under run;waits_in_sleep (ratio $r); the most other: $(
			py_most_other "$re")${why:+; $why}"
	verdict "$row" "$backend" "$wrong"
}

# The Python rows, for each small Python in /py (KM_PYTHONS on the host,
# 3.12 by default): deep.py's stack on both backends, the blocked thread's
# with offcputime on bpf (perf's off-CPU path reads Python frames as its
# on-CPU one does), and for the first version the 128-frame cut on bpf. A
# version that pyenv lacked has n/a rows with the reason.
check_pythons() {
	local py v b r deep=
	for py in /py/*/bin/python3*; do
		[ -x "$py" ] || continue
		v=${py##*/python}
		for b in bpf perf; do
			want "python$v fp/$b" && check_py_fp "python$v fp/$b" $b "$py"
		done
		want "python$v native/bpf" && check_py_fp "python$v native/bpf" bpf "$py" native
		for b in bpf perf; do
			want "python$v offcputime/$b" &&
				check_py_offcpu "python$v offcputime/$b" $b "$py"
		done
		[ -z "$deep" ] || continue
		deep=$v
		want "python$v deep/bpf" && check_py_deep "python$v deep/bpf" bpf "$py"
	done
	while IFS='|' read -r v why; do
		v=$(echo "$v" | cut -d. -f1,2)
		r="fp/bpf fp/perf offcputime/bpf offcputime/perf"
		[ -n "$deep" ] || r="$r deep/bpf"
		deep=${deep:-$v}
		for b in $r; do
			want "python$v $b" && km "python$v $b" n/a "$why"
		done
	done </py/missing
}

# --- Node.js (issue 48): the guests KM_NODE names have /node (node.sh) ---

# node_score: from out, node's samples (its threads are all "node"), those
# whose leaf is code V8 ran (a JavaScript frame, or V8's JIT or builtin
# code left unnamed), and of them those that hold the chain render;descend
# x10 or x11;scoreRow, one frame after the other, as
# tests/integration/node/check_nodeframes.c counts it on the host: "ALL
# V8LEAF CHAIN UNNAMED" (UNNAMED: V8-leaf samples with no JavaScript frame).
node_score() {
	awk '
	$NF ~ /^[0-9]+$/ && NF > 1 {
		c = $NF; s = substr($0, 1, length($0) - length($NF) - 1)
		k = split(s, f, ";")
		if (f[1] != "node") next
		all += c
		leaf = f[k]
		js = leaf ~ / [(](render[.]js|node:)/
		if (!js && leaf != "[unknown]" && leaf !~ /^Builtins_/) next
		v8 += c
		if (s !~ / [(]render[.]js/ && s !~ / [(]node:/) { unnamed += c; next }
		if (leaf !~ /^scoreRow [(]render[.]js/) next
		d = 0
		for (i = k - 1; i > 1 && f[i] ~ /^descend [(]render[.]js/; i--) d++
		if ((d == 10 || d == 11) && f[i] ~ /^render [(]render[.]js/) chain += c
	}
	END { print all + 0, v8 + 0, chain + 0, unnamed + 0 }' out
}

# A node already running tests/workloads/node/render.js (TurboFan's inlining
# off, as the host's test runs it: inlined functions are not frames of their
# own yet), profiled by -p for S + 1 seconds (3 at least) with the default
# options: 0.8 of its samples in code V8 ran hold the chain, as on the host
# (90-98% there), and 50 of them at least.
check_node() {
	row=$1 backend=$2
	local secs=$((S + 1)) npid deadline r
	[ "$secs" -ge 3 ] || secs=3
	/node/node --no-turbo-inlining /w/node/render.js $((secs + T)) >node.out 2>&1 &
	npid=$!
	deadline=$(($(now) + T))
	until grep -q ready node.out 2>/dev/null; do
		if [ "$(now)" -ge $deadline ] || [ -z "$(state $npid)" ]; then
			km "$row" WRONG "harness: node did not start: $(tail -1 node.out)" ""
			kill -KILL $npid 2>/dev/null
			return
		fi
		sleep 0.2
	done
	bounded profile --verbose --backend "$backend" -F $F -f -p $npid $secs
	kill -KILL $npid 2>/dev/null
	wait $npid 2>/dev/null
	set -- $(node_score)
	r=$(ratio "$3" "$2")
	note="$(cat /node/version), the chain in $3 of $2 samples in V8's code ($r), $4 of them unnamed; $1 of node's"
	wrong=
	awk -v c="$3" -v v="$2" 'BEGIN { exit !(v >= 50 && c >= 0.8 * v) }' ||
		wrong="the chain render;descend x10;scoreRow in $3 of $2 samples in V8's code (at least 0.8 of 50 or more); $4 unnamed"
	verdict "$row" "$backend" "$wrong"
}

check_nodes() {
	local b
	for b in bpf perf; do
		want "node -p PID/$b" || continue
		if [ -x /node/node ]; then
			check_node "node -p PID/$b" $b
		else
			km "node -p PID/$b" n/a "no Node.js in this guest (run.sh's KM_NODE names the kernels that get it)"
		fi
	done
}

# --- Stock programs: Debian 12's own binaries (initramfs.sh's /stock) ---

# The data the stock programs work on, made once: lines of numbers and
# words from a small LCG (exact in busybox awk's doubles), the same bytes
# on every kernel; about 0.6 MB.
STOCK_LINES=20000
stock_data() {
	awk -v n=$STOCK_LINES 'BEGIN {
		split("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi", w, " ")
		x = 1
		for (i = 1; i <= n; i++) {
			x = (x * 75 + 74) % 65537; y = (x * 75 + 74) % 65537
			printf "%d %d %s %s %x\n", i, x, w[x % 16 + 1], w[y % 16 + 1], (x * y) % 16777213
		} }' >stock.data
}

# The programs one after another, each about a second or more under TCG;
# one that fails is named in stock.fail. The sqlite3 query's answer is
# checked (300000|3377790).
stock_script() {
	cat >stock.sh <<'EOF'
cd /tmp
: >stock.fail
/stock/xz -6 -T1 -c stock.data >/dev/null || echo "xz exit $?" >>stock.fail
/stock/gzip -9 -c stock.data stock.data stock.data stock.data stock.data >/dev/null ||
	echo "gzip exit $?" >>stock.fail
/stock/bzip2 -9 -c stock.data stock.data stock.data stock.data >/dev/null ||
	echo "bzip2 exit $?" >>stock.fail
/stock/zstd -q -19 -T1 -c stock.data >/dev/null || echo "zstd exit $?" >>stock.fail
/stock/sort -k3,3 -k4,4 -k2,2n stock.data stock.data stock.data stock.data >/dev/null ||
	echo "sort exit $?" >>stock.fail
/stock/sqlite3 :memory: 'WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM n LIMIT 300000) SELECT count(*), sum(length(hex(x))) FROM n;' >stock.sql ||
	echo "sqlite3 exit $?" >>stock.fail
grep -qx '300000|3377790' stock.sql || echo "sqlite3 printed $(head -c 60 stock.sql)" >>stock.fail
EOF
}

# stock_score: from out's folded stacks, for each program (its comm) and
# for the six together, the samples whose user stack reaches the thread's
# start (one of its frames is _start, libc's start functions, start_thread
# or clone); prints the note, then what is wrong, if anything: a program of
# 20 samples or more under 0.9, or all under 0.97, with the commonest
# incomplete stack (its first three frames, from the root). The shell that
# runs them (busybox, static and stripped: no frame is named) is counted
# apart, not scored.
STOCK_PROGRAMS="xz gzip bzip2 zstd sort sqlite3"
STOCK_ROOTS="_start __libc_start_main __libc_start_main_impl __libc_start_call_main start_thread clone clone3"
stock_score() {
	awk -v roots="$STOCK_ROOTS" -v progs="$STOCK_PROGRAMS" -v debug="$KM_DEBUG" '
	BEGIN {
		k = split(roots, r, " "); for (i = 1; i <= k; i++) root[r[i]] = 1
		np = split(progs, o, " "); for (i = 1; i <= np; i++) scored[o[i]] = 1
	}
	$NF ~ /^[0-9]+$/ && NF > 1 {
		c = $NF; s = substr($0, 1, length($0) - length($NF) - 1)
		k = split(s, f, ";"); comm = f[1]
		if (!(comm in scored)) { others += c; next }
		ok = 0
		for (i = 2; i <= k; i++) if (f[i] in root) { ok = 1; break }
		n[comm] += c; all += c
		if (ok) { w[comm] += c; wall += c; next }
		st = comm
		for (i = 2; i <= k && i <= 4; i++) st = st ";" f[i]
		bad[st] += c
	}
	function share(a, b) { return b > 0 ? sprintf("%.3f", a / b) : "-" }
	# The commonest incomplete stack of program p (all: "").
	function commonest(p,   key, m, s) {
		m = 0; s = ""
		for (key in bad)
			if ((p == "" || index(key, p ";") == 1) && bad[key] > m) { m = bad[key]; s = key }
		return m " x " s
	}
	END {
		note = ""
		for (i = 1; i <= np; i++)
			note = note o[i] " " share(w[o[i]], n[o[i]]) "/" n[o[i]] + 0 ", "
		note = note "all " share(wall, all) "/" all + 0 "; " others + 0 " of other comms"
		wrong = ""
		for (i = 1; i <= np && wrong == ""; i++)
			if (n[o[i]] >= 20 && w[o[i]] < 0.9 * n[o[i]])
				wrong = o[i] ": " share(w[o[i]], n[o[i]]) " of " n[o[i]] \
					" samples whole (bar 0.9); commonest incomplete: " commonest(o[i])
		if (wrong == "" && all == 0)
			wrong = "no samples of the programs"
		else if (wrong == "" && wall < 0.97 * all)
			wrong = "all: " share(wall, all) " of " all \
				" samples whole (bar 0.97); commonest incomplete: " commonest("")
		print note
		print wrong
		if (debug != "")
			for (key in bad) print "stock: incomplete: " bad[key] " x " key > "/dev/stderr"
	}' out
}

# What -v counted of the stacks that could not be whole: bpf's samples of
# processes whose tables were not loaded yet sent as stack copies, and those
# left to frame pointers (taken in kernel mode where the kernel lacks
# bpf_task_pt_regs, or with the copies refused), perf's stacks deeper than
# the stack copy, and its copies cut short at a page not in memory that the
# reader completed from the process.
stock_why() {
	sed -n -e 's/.* \([0-9]*\) of processes not loaded as stack copies; by frame pointers instead: \([0-9]*\) kernel-mode, [0-9]* 32-bit, \([0-9]*\) of processes not loaded.* \([0-9]*\) walks whose leaf was in code mapped since.*/-v: \1+\4 stack copies; by frame pointers \2 kernel-mode, \3 not yet loaded/p' \
		-e 's/.*warning: \([0-9]*\) user stacks were deeper than the stack copy.*/-v: \1 deeper than the stack copy/p' \
		-e 's/.*perf: \([0-9]*\) stack copies the kernel ended at a page not in memory.*/-v: \1 copies completed from the process/p' \
		err | tr '\n' ' ' | sed 's/ $//'
}

# Debian 12's xz, gzip, bzip2, zstd, sort and sqlite3 (built without frame
# pointers) one after another under the default options (--unwind auto),
# profiled as in docs/BENCHMARKS.md's stock-programs table on the host
# (-U -F 499): 0.97 of the samples in all and 0.9 of each program's (of
# those with 20 or more) have a user stack that reaches the thread's start
# (issue 45).
check_stock() {
	if [ -s /stock/missing ]; then
		km "$1" n/a "not on the host that built the initramfs: $(tr '\n' ' ' </stock/missing)"
		return
	fi
	# A WRONG run goes again once (again_once): a process's first samples
	# before its library's table is read under TCG (xz's liblzma) were
	# 50-155 whatever the text (CI's 5.15 guest had 0.962 where it had
	# 0.989) until a compile held the copies (native_hold.c, first_copies.c).
	again_once stock_once "$@"
}

# One run of check_stock: sets rc, note and wrong.
stock_once() {
	# Six programs' fixed work: under TCG beside another guest, 30-75 s.
	local T=$((T * 2))
	row=$1 backend=$2
	[ -s stock.data ] || stock_data
	stock_script
	rm -f stock.fail
	bounded profile --verbose --backend "$backend" -U -F 499 -f -- sh stock.sh
	stock_score >score
	why=$(stock_why)
	note="$(sed -n 1p score)${why:+; $why}"
	wrong=$(sed -n 2p score)
	[ -z "$wrong" ] || [ -z "$why" ] || wrong="$wrong; $why"
	[ "$rc" != 0 ] || [ ! -s stock.fail ] || wrong="the programs failed: $(tr '\n' ' ' <stock.fail)"
}

echo "@KM|kernel|info|$(uname -r) $(nproc) CPUs, paranoid $(cat /proc/sys/kernel/perf_event_paranoid), default ulimit -l $(ulimit -l)"
cd /tmp || exit 1
cg_setup

# Unprivileged: uid 65534 with RLIMIT_MEMLOCK at 64 KiB, the default before
# Linux 5.16 (RHEL 7, Ubuntu 16.04-20.04), whatever this kernel's default is.
as_nobody() { su -s /bin/sh nobody -c "ulimit -l 64; $*"; }

for b in bpf perf; do
	want "fp -- CMD/$b" && check_launch "fp -- CMD/$b" $b ""
	want "-p PID/$b" && check_attach "-p PID/$b" $b pid
	want "-L TID/$b" && check_tid "-L TID/$b" $b
	want "system-wide/$b" && check_attach "system-wide/$b" $b all
	want "offcputime -- CMD/$b" && check_offcpu "offcputime -- CMD/$b" $b ""
	want "--wall -- CMD/$b" && check_wall "--wall -- CMD/$b" $b ""
	want "bad -p/$b" && check_badpid "bad -p/$b" $b
done
want "dwarf -- CMD/perf" && check_dwarf "dwarf -- CMD/perf" perf ""
want "bad inputs" && check_badinputs "bad inputs"
for b in bpf perf; do
	want "build-id: renamed over/$b" && check_buildid "build-id: renamed over/$b" $b
done

# cgroup v2 alone first (perf_event is v2's until a v1 hierarchy takes it),
# then v1, then v2 next to v1's perf_event as on hybrid systemd hosts.
for b in bpf perf; do
	want "--cgroup v2/$b" || continue
	if [ -d /sys/fs/cgroup/unified/km ]; then
		check_cgroup "--cgroup v2/$b" $b /sys/fs/cgroup/unified/km
	else
		km "--cgroup v2/$b" n/a "no cgroup2 file system in this kernel (Linux 4.5+)"
	fi
done
cg_v1
for b in bpf perf; do
	want "--cgroup v1/$b" && check_cgroup "--cgroup v1/$b" $b /sys/fs/cgroup/perf_event/km
	want "--cgroup v2 hybrid/$b" || continue
	if [ -d /sys/fs/cgroup/unified/km ]; then
		check_cgroup "--cgroup v2 hybrid/$b" $b /sys/fs/cgroup/unified/km
	else
		km "--cgroup v2 hybrid/$b" n/a "no cgroup2 file system in this kernel (Linux 4.5+)"
	fi
done

# Inside a pid namespace (a container's view): tasks named by their ids
# there, on-CPU by bpf_get_ns_current_pid_tgid from 5.7 and by perf records
# before, off-CPU by perf records.
in_pidns="unshare -p -f --mount-proc"
for b in bpf perf auto; do
	want "pidns: fp -- CMD/$b" && check_launch "pidns: fp -- CMD/$b" $b "$in_pidns"
done
want "pidns: offcputime -- CMD/bpf" && check_offcpu "pidns: offcputime -- CMD/bpf" bpf "$in_pidns"
want "pidns: --wall -- CMD/bpf" && check_wall "pidns: --wall -- CMD/bpf" bpf "$in_pidns"
want "--mntnsmap/bpf" && check_mntnsmap "--mntnsmap/bpf"

want "auto" && check_auto "auto"

# Unprivileged (uid 65534), auto backend, at perf_event_paranoid 2 and 1.
for p in 2 1; do
	sysctl_paranoid $p
	want "nobody p$p: fp -- CMD" && check_launch "nobody p$p: fp -- CMD" auto as_nobody
	want "nobody p$p: dwarf -- CMD" && check_dwarf "nobody p$p: dwarf -- CMD" auto as_nobody
	want "nobody p$p: offcputime -- CMD" && check_offcpu "nobody p$p: offcputime -- CMD" auto as_nobody
	want "nobody p$p: --wall -- CMD" && check_wall "nobody p$p: --wall -- CMD" auto as_nobody
done
sysctl_paranoid 2

check_pythons
check_nodes

for b in bpf perf; do
	want "stock programs/$b" && check_stock "stock programs/$b" $b
done

# Last: a BPF verifier that runs for minutes under TCG (4.19) cannot be
# killed, and would slow every check after it.
want "native deep -- CMD/bpf" && check_native "native deep -- CMD/bpf"
want "dwarf -- CMD/bpf" && check_dwarf "dwarf -- CMD/bpf" bpf ""
want "dwarf deep -- CMD/bpf" && check_dwarf_deep "dwarf deep -- CMD/bpf" bpf
want "dwarf syscalls -- CMD/bpf" && check_dwarf_syscalls "dwarf syscalls -- CMD/bpf" bpf

# Optional (KM_FLIPS=N): the kernel patches the jump labels in __schedule
# 2N times (flipkeys) while pingpong switches on every CPU: what hung qemu's
# multi-threaded TCG. Progress as tick lines, for the host's watchdog.
if [ "${KM_FLIPS:-0}" -gt 0 ] && want "static keys flipped"; then
	sysctl_paranoid 1
	$W/pingpong 100000 >/dev/null &
	ppid=$!
	t0=$(now)
	as_nobody "$W/flipkeys $KM_FLIPS 50" | while read -r line; do echo "@KM|tick|$line"; done
	kill $ppid
	wait $ppid 2>/dev/null
	sysctl_paranoid 2
	km "static keys flipped" works "" "$KM_FLIPS rounds in $(($(now) - t0)) s"
fi
