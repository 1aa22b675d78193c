# SPDX-License-Identifier: GPL-2.0
"""
make bench's offcpu section (issue 13): what tracing every context switch
costs, on the pingpong workload (two threads bouncing a byte over two pipes,
both on one CPU, so each round trip is two thread-to-thread switches).

Tracers, all system-wide, each summing off-CPU time by stack:
  offcputime --backend bpf    our sched_switch program, sums in the kernel
  offcputime --backend perf   sched:sched_switch samples with callchains
  bpftrace                    offcputime.bt's shape on the tracepoint
  perf record -e sched:sched_switch -g -a, then perf report

Measured, interleaved (none, then each tracer, then again):
  - pingpong round trips/s under each tracer, as a ratio to untraced;
  - profiler user + sys CPU (perf: record + report) per 1000 switches,
    switches being /proc/stat's ctxt while the tracer was attached;
  - peak RSS of the tracer;
  - off-CPU time of pingpong's two threads as each tool sums it, next to
    what the threads measured themselves (wall minus thread CPU time).
Then, with kernel.bpf_stats_enabled, the in-kernel ns per switch of our
program and bpftrace's, both attached at once on the same load.

Called by bench.py with itself as an argument (bench.py runs as __main__:
importing it again would make a second copy of its result lists).
"""
import os
import re
import signal
import subprocess
import tempfile
import time

# offcputime.bt's shape, on the tracepoint: this kernel has no kprobes
# (finish_task_switch), and at sched_switch the current task is prev, so the
# stacks are taken at switch-out and kept by tid until the switch-in.
BPFTRACE_PROG = r"""
tracepoint:sched:sched_switch
{
	@start[args->prev_pid] = nsecs;
	@kst[args->prev_pid] = kstack;
	@ust[args->prev_pid] = ustack;
	@cm[args->prev_pid] = comm;
	$last = @start[args->next_pid];
	if ($last != 0) {
		@[@kst[args->next_pid], @ust[args->next_pid], @cm[args->next_pid]] =
			sum(nsecs - $last);
		delete(@start[args->next_pid]);
	}
}
END { clear(@start); clear(@kst); clear(@ust); clear(@cm); }
"""

TRACERS = ["none", "offcputime bpf", "offcputime perf", "bpftrace", "perf record"]
PP_COMMS = ("pp-ping", "pp-pong")
WARMUP = 2.0    # seconds from a tracer's start to the workload's: compiling, attaching


class Tracer:
    """A tracer run until SIGINT: output, CPU seconds (user + sys), peak RSS (bench.Run's way).

    bench.Run reads stdout to its end before stderr: bpftrace writes one error
    line per stack-map collision, enough to fill the stderr pipe and block it
    forever. Both go to files here.
    """

    def __init__(self, b, argv):
        self.b = b
        self.files = [tempfile.TemporaryFile(), tempfile.TemporaryFile()]
        fd, self.rss_path = tempfile.mkstemp(prefix="bench-rss.")
        os.close(fd)
        self.proc = subprocess.Popen(b.rss_argv(argv, self.rss_path), stdout=self.files[0],
                                     stderr=self.files[1])
        self.pid = b.command_pid(self.proc)

    def ready(self, marker, timeout=30):
        """Waits until marker appears in the output (bpftrace's "Attaching N probes")."""
        end = time.monotonic() + timeout
        while time.monotonic() < end and self.proc.poll() is None:
            self.files[0].seek(0)
            if marker in self.files[0].read():
                return
            time.sleep(0.1)

    def stop(self):
        # bpftrace sometimes misses a SIGINT (seen here: asleep in epoll_wait after one,
        # gone at the second): ask again every 5 s, then kill.
        for attempt in range(13):
            if self.pid:
                os.kill(self.pid, signal.SIGINT if attempt < 12 else signal.SIGKILL)
            for _ in range(50):
                pid, status, ru = os.wait4(self.proc.pid, os.WNOHANG)
                if pid:
                    break
                time.sleep(0.1)
            if pid:
                break
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        self.cpu = ru.ru_utime + ru.ru_stime
        self.rss_kb = self.b.peak_rss_kb(self.rss_path)
        self.out, self.err = (self.read(f) for f in self.files)
        return self

    @staticmethod
    def read(f):
        f.seek(0)
        text = f.read().decode(errors="replace")
        f.close()
        return text


def ctxt():
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("ctxt "):
                return int(line.split()[1])
    return 0


def pingpong(b, seconds, cpu):
    out = subprocess.run([os.path.join(b.WORK, "pingpong"), str(seconds), str(cpu)],
                         capture_output=True, text=True, check=True).stdout
    rate = float(re.search(r"per_sec=(\d+)", out).group(1))
    off_us = sum(int(m) for m in re.findall(r"^offcpu .* us=(\d+)", out, re.M))
    return rate, off_us


def folded_us(text):
    """Off-CPU microseconds of pingpong's threads in offcputime's folded output."""
    total = 0
    for line in text.splitlines():
        stack, _, value = line.rpartition(" ")
        if value.isdigit() and stack.split(";")[0] in PP_COMMS:
            total += int(value)
    return total


def bpftrace_us(text):
    """The same from bpftrace's @[kstack, ustack, comm] sums (nanoseconds)."""
    return sum(int(v) for c, v in re.findall(r", ([^,\n]*)\]: (\d+)\s*$", text, re.M)
               if c in PP_COMMS) // 1000


SWITCH = re.compile(r"^\s*(\d+)\s+([\d.]+):\s+prev_comm=(.*?) prev_pid=(\d+) .*"
                    r"==> next_comm=.*? next_pid=(\d+)")


def perf_script_us(data):
    """perf report counts switches, not time: sum switch-out to switch-in from perf script.

    Read as a stream: its output is hundreds of MB, and what this process
    holds shows in the peak RSS of every child it starts later (wait4's
    ru_maxrss counts the child's memory from the fork on).
    """
    proc = subprocess.Popen(["perf", "script", "-i", data, "-F", "tid,time,trace"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    away, total = {}, 0.0
    for line in proc.stdout:
        m = SWITCH.match(line)
        if not m:
            continue
        t = float(m.group(2))
        nxt = int(m.group(5))
        if nxt and nxt in away:
            t0, comm = away.pop(nxt)
            if comm in PP_COMMS:
                total += t - t0
        away[int(m.group(4))] = (t, m.group(3))
    proc.stdout.close()
    _, _, ru = os.wait4(proc.pid, 0)
    return int(total * 1e6), ru.ru_utime + ru.ru_stime


def lost_perf(err):
    m = re.search(r"lost (\d+) chunks", err) or re.search(r"(\d+) samples? lost", err)
    return int(m.group(1)) if m else 0


def start_tracer(b, name, tmp):
    if name.startswith("offcputime"):
        argv = [os.path.join(b.BUILD, "offcputime"), "--backend", name.split()[1], "-f"]
    elif name == "bpftrace":
        argv = ["bpftrace", "-e", BPFTRACE_PROG]
    else:
        argv = [*b.perf_record(), "-q", "-e", "sched:sched_switch", "-g", "-a", "-o",
                os.path.join(tmp, "offcpu.data")]
    t = Tracer(b, argv)
    if name == "bpftrace":
        t.ready(b"Attaching")
    time.sleep(WARMUP)
    return t


def one_round(b, name, seconds, cpu, tmp):
    """One run of pingpong under one tracer (or none): a dict of what was measured."""
    if name == "none":
        rate, truth = pingpong(b, seconds, cpu)
        return {"rate": rate}
    c0 = ctxt()
    t = start_tracer(b, name, tmp)
    rate, truth = pingpong(b, seconds, cpu)
    switches = ctxt() - c0
    t.stop()
    x = {"rate": rate, "truth": truth, "switches": switches, "cpu": t.cpu, "rss": t.rss_kb,
         "lost": 0}
    if name.startswith("offcputime"):
        x["total"] = folded_us(t.out)
        m = re.search(r"(\d+) samples lost", t.err)
        x["lost"] = int(m.group(1)) if m else 0
    elif name == "bpftrace":
        x["total"] = bpftrace_us(t.out)
    else:
        data = os.path.join(tmp, "offcpu.data")
        x["lost"] = lost_perf(t.err)
        rep = b.Run(["perf", "report", "-i", data, "--stdio", "--no-children", "-q",
                     "-g", "folded,0,caller,count"]).wait()
        x["cpu"] += rep.cpu
        x["rss"] = max(x["rss"], rep.rss_kb)
        x["total"], x["script_cpu"] = perf_script_us(data)
        x["data_mb"] = os.path.getsize(data) / 1e6
        os.unlink(data)
    if t.proc.returncode not in (0, 128 + signal.SIGINT):
        b.log("bench: %s exited %d: %s" % (name, t.proc.returncode, t.err.strip()[-300:]))
    return x


def prog_fdinfo(pid):
    """{prog_id: (name hint, run_time_ns, run_cnt, recursion_misses)} of pid's BPF programs."""
    progs = {}
    fd_dir = "/proc/%d/fd" % pid
    for fd in os.listdir(fd_dir):
        try:
            if "bpf-prog" not in os.readlink(os.path.join(fd_dir, fd)):
                continue
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                info = dict(l.split(":", 1) for l in f.read().splitlines() if ":" in l)
        except OSError:
            continue
        if info.get("prog_type", "").strip() != "5":    # BPF_PROG_TYPE_TRACEPOINT
            continue
        progs[int(info["prog_id"])] = tuple(int(info.get(k, "0")) for k in (
            "run_time_ns", "run_cnt", "recursion_misses"))
    return progs


def in_kernel(b, seconds, cpu, tmp):
    """ns per switch of our sched_switch program and bpftrace's, attached at once.

    The program that runs first at a switch pays for the cold caches (the
    stacks it walks): 15-30% more here. The order alternates by round.
    """
    names = ["offcputime bpf", "bpftrace"]
    ns = {n: [] for n in names}
    misses = {n: 0 for n in names}
    subprocess.run(["sysctl", "-q", "kernel.bpf_stats_enabled=1"], check=True)
    try:
        for rep in range(2 * b.REPS):
            order = names if rep % 2 == 0 else names[::-1]
            tracers = [(n, start_tracer(b, n, tmp)) for n in order]
            pingpong(b, seconds, cpu)
            for n, t in tracers:
                for run_ns, cnt, miss in prog_fdinfo(t.pid).values():
                    if cnt:
                        ns[n].append(run_ns / cnt)
                        misses[n] += miss
            for n, t in tracers:
                t.stop()
    finally:
        subprocess.run(["sysctl", "-q", "kernel.bpf_stats_enabled=0"])
    return b.med_spread(ns[names[0]]), b.med_spread(ns[names[1]]), misses


def cpu_k(x):
    """Profiler CPU, ms per 1000 switches traced."""
    return 1e6 * x["cpu"] / x["switches"] if x["switches"] else float("nan")


def run(b, tmp):
    seconds = 2 if b.QUICK else 5
    cpu = os.cpu_count() - 1
    b.log("bench: off-CPU tracers on pingpong (CPU %d), %d rounds of %d s" % (
        cpu, b.REPS, seconds))
    rounds = {n: [] for n in TRACERS}
    for rep in range(b.REPS):
        for n in TRACERS:
            rounds[n].append(one_round(b, n, seconds, cpu, tmp))

    def col(n, key, scale=1.0):
        return b.med_spread([x[key] * scale for x in rounds[n] if key in x])

    # Throughput against the untraced run of the same round: slow drifts of the
    # machine's load cancel out.
    cost = {n: b.med_spread([cpu_k(x) for x in rounds[n]]) for n in TRACERS[1:]}
    thr = {n: b.med_spread([x["rate"] / none["rate"] for x, none in zip(rounds[n],
                                                                         rounds["none"])])
           for n in TRACERS[1:]}
    anchor = cost["perf record"][0]
    b.results.append(("offcpu", "untraced pingpong", "%s round trips/s" % b.fmt(
        col("none", "rate"))))
    for n in TRACERS[1:]:
        xs = rounds[n]
        agree = b.med_spread([x["total"] / x["truth"] for x in xs if x["truth"]])
        line = ("throughput %s of untraced; CPU %s ms / 1000 switches, ratio %.2f; "
                "peak RSS %s; off-CPU total %s of the threads' own; lost %d" % (
                    b.fmt(thr[n]), b.fmt(cost[n]), cost[n][0] / anchor,
                    b.fmt(col(n, "rss", 1 / 1024.0), " MB"), b.fmt(agree),
                    sum(x["lost"] for x in xs)))
        if n == "perf record":
            line += "; perf script alone %s s CPU, perf.data %s" % (
                b.fmt(col(n, "script_cpu")), b.fmt(col(n, "data_mb"), " MB"))
        b.results.append(("offcpu", n, line))
    b.results.append(("offcpu", "switches traced per round",
                      b.fmt(col("offcputime bpf", "switches"))))

    b.log("bench: in-kernel cost per switch, %d rounds" % (2 * b.REPS))
    o, t, misses = in_kernel(b, seconds, cpu, tmp)
    b.results.append(("offcpu", "in-kernel, offcputime bpf", "%s; %d recursion misses" % (
        b.fmt(o, " ns/switch"), misses["offcputime bpf"])))
    b.results.append(("offcpu", "in-kernel, bpftrace", "%s; %d recursion misses" % (
        b.fmt(t, " ns/switch"), misses["bpftrace"])))

    # Goal: the cheapest of them. The bpf backend against every other tracer, the
    # perf backend against perf record, its counterpart.
    ratio = o[0] / t[0] if t[0] else float("nan")
    b.verdict("off-CPU in-kernel ns per switch vs bpftrace", "%.2fx" % ratio, "<= 1.0x",
              ratio <= 1.0)
    for n, others in (("offcputime bpf", TRACERS[2:]), ("offcputime perf", ["perf record"])):
        what = n.split()[1]
        best = min(cost[m][0] for m in others)
        b.verdict("off-CPU profiler CPU (%s) vs perf record" % what,
                  "%.2fx" % (cost[n][0] / anchor), "<= %.2fx" % (best / anchor),
                  cost[n][0] <= best)
        best = max(thr[m][0] for m in others)
        b.verdict("pingpong throughput under offcputime %s" % what, "%.2f" % thr[n][0],
                  ">= %.2f" % best, thr[n][0] >= best)
