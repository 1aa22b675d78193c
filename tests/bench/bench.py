#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
make bench: what `profile` costs, next to perf and bpftrace on the same
workload in the same run, as ratios to `perf record -g` + `perf report`.

Costs that hold still on a noisy VM: CPU seconds of the profiler's own
processes (user + sys, from wait4), in-kernel run time of BPF programs
(kernel.bpf_stats_enabled), peak RSS, time from the end of sampling to the
last byte of output, lost samples. Every comparison runs interleaved
(A B C A B C ...) and reports the median and the spread (min..max).
"""
import ctypes
import json
import os
import re
import selectors
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("O", os.path.join(ROOT, "build"))
PROFILE = os.path.join(BUILD, "profile")
WORK = os.path.join(BUILD, "workloads")
QUICK = os.environ.get("BENCH_QUICK") == "1"
REPS = 1 if QUICK else 3
DURATION = 2 if QUICK else 5

results = []   # (section, name, value-string)
verdicts = []  # (target, measured, PASS/FAIL)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def ensure_tools():
    missing = [p for p, b in (("linux-perf", "perf"), ("bpftrace", "bpftrace"),
                              ("time", "/usr/bin/time"), ("austin", "austin"))
               if not shutil.which(b)]
    if missing:
        log("bench: installing " + " ".join(missing))
        subprocess.run(["apt-get", "install", "-y", "-qq"] + missing, check=True,
                       stdout=subprocess.DEVNULL,
                       env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))


def rss_argv(argv, path):
    """argv under GNU time, which writes the command's own peak RSS (KB) to path.

    wait4's ru_maxrss of a child started from here is at least this Python
    process's peak RSS: exec records the peak of the memory it replaces (the
    parent's, shared by vfork). A child started by time starts from time's.
    CPU seconds from wait4 on time include the command's (it reaps it).
    """
    return ["/usr/bin/time", "-f", "%M", "-o", path] + list(argv)


def peak_rss_kb(path):
    """The last line of time's file ("Command terminated by signal 2" may come first)."""
    try:
        with open(path) as f:
            return int(f.read().split()[-1])
    except (OSError, ValueError, IndexError):
        return 0
    finally:
        if os.path.exists(path):
            os.unlink(path)


def command_pid(proc):
    """The pid of the command that time runs, None once it is gone."""
    for _ in range(100):
        try:
            with open("/proc/%d/task/%d/children" % (proc.pid, proc.pid)) as f:
                kids = f.read().split()
        except OSError:
            return None
        if kids:
            return int(kids[0])
        if proc.poll() is not None:
            return None
        time.sleep(0.01)
    return None


def signal_command(proc, sig):
    """Signals the command that time runs (time itself ignores SIGINT)."""
    pid = command_pid(proc)
    if pid:
        os.kill(pid, sig)


class Run:
    """One process: its output, CPU seconds (user + sys) from wait4, peak RSS from time."""

    def __init__(self, argv, stdout=None, stop_after=None, stop_signal=signal.SIGINT):
        self.start = time.monotonic()
        out = stdout if stdout is not None else subprocess.PIPE
        fd, self.rss_path = tempfile.mkstemp(prefix="bench-rss.")
        os.close(fd)
        self.proc = subprocess.Popen(rss_argv(argv, self.rss_path), stdout=out,
                                     stderr=subprocess.PIPE)
        self.stop_after = stop_after
        self.stop_signal = stop_signal
        self.signal_time = None

    def wait(self):
        if self.stop_after is not None:
            time.sleep(max(0, self.stop_after - (time.monotonic() - self.start)))
            self.signal_time = time.monotonic()
            signal_command(self.proc, self.stop_signal)
        # The time of the last byte of output, not of exit (freeing maps comes after).
        # Both pipes at once: a tool that fills its stderr pipe (bpftrace's
        # "failed to look up stack id" lines) while we wait for its stdout
        # to end would block and never exit.
        chunks = {}
        self.last_byte = None
        sel = selectors.DefaultSelector()
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe:
                sel.register(pipe.fileno(), selectors.EVENT_READ)
                chunks[pipe.fileno()] = []
        out_fd = self.proc.stdout.fileno() if self.proc.stdout else None
        while sel.get_map():
            for key, _ in sel.select():
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    sel.unregister(key.fd)
                    continue
                chunks[key.fd].append(chunk)
                if key.fd == out_fd:
                    self.last_byte = time.monotonic()
        sel.close()
        out = b"".join(chunks.get(out_fd, []))
        err = b"".join(chunks.get(self.proc.stderr.fileno(), [])) if self.proc.stderr else b""
        _, status, ru = os.wait4(self.proc.pid, 0)
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        self.end = time.monotonic()
        self.cpu = ru.ru_utime + ru.ru_stime
        self.rss_kb = peak_rss_kb(self.rss_path)
        self.out = out.decode(errors="replace")
        self.err = err.decode(errors="replace")
        return self


_perf_record = []


def perf_record():
    """["perf", "record", options this host needs], probed once per run.

    tests/support/perf-record-options.sh says which and why: --buildid-mmap
    where the kernel corrupts the MMAP2 records of perf's events next to an
    event with attr.build_id (ours), which crashes perf record and report.
    The reports name the same frames; perf's CPU lacks its build-id pass, so
    the results say when the anchor ran so.
    """
    if not _perf_record:
        probe = subprocess.run([os.path.join(ROOT, "tests", "support", "perf-record-options.sh")],
                               capture_output=True, text=True, check=True)
        log("bench: " + probe.stderr.strip())
        _perf_record.extend(["perf", "record", *probe.stdout.split()])
        if len(_perf_record) > 2:
            results.append(("anchor", "perf record options", "%s (%s)" % (
                " ".join(_perf_record[2:]), probe.stderr.strip())))
    return _perf_record


def start_load(threads, seconds):
    return subprocess.Popen([os.path.join(WORK, "busy"), str(threads), str(seconds)])


def ours(backend, freq, seconds, extra=()):
    r = Run([PROFILE, "--backend", backend, "-v", "-F", str(freq), "-f", *extra,
             str(seconds)]).wait()
    m = re.search(r"profile: (\d+) samples, (\d+) kept", r.err)
    r.samples = int(m.group(1)) if m else 0
    return {"cpu": r.cpu, "rss": r.rss_kb, "samples": r.samples, "run": r}


def perf_anchor(mode, freq, seconds, tmp):
    data = os.path.join(tmp, "perf.data")
    cg = ["-g"] if mode == "fp" else ["--call-graph", "dwarf"]
    rec = Run([*perf_record(), "-q", "-F", str(freq), "-a", *cg, "-o", data, "--",
               "sleep", str(seconds)]).wait()
    t0 = time.monotonic()
    rep = Run(["perf", "report", "-i", data, "--stdio", "--no-children", "-q",
               "-g", "folded,0,caller,count"]).wait()
    latency = time.monotonic() - t0
    stats = Run(["perf", "report", "-i", data, "--stats"]).wait()
    m = re.search(r"SAMPLE events:\s+(\d+)", stats.out)
    os.unlink(data)
    return {"cpu": rec.cpu + rep.cpu, "rss": max(rec.rss_kb, rep.rss_kb),
            "samples": int(m.group(1)) if m else 0, "latency": latency}


def bpftrace_anchor(freq, seconds):
    prog = "profile:hz:%d { @[kstack, ustack, comm] = count(); }" % freq
    r = Run(["bpftrace", "-e", prog], stop_after=seconds + 1.0).wait()
    samples = sum(int(x) for x in re.findall(r"\]: (\d+)\s*$", r.out, re.M))
    return {"cpu": r.cpu, "rss": r.rss_kb, "samples": samples}


def per_k(x):
    return 1000.0 * x["cpu"] / x["samples"] if x["samples"] else float("nan")


def med_spread(values):
    values = [v for v in values if v == v]
    if not values:
        return float("nan"), float("nan"), float("nan")
    return statistics.median(values), min(values), max(values)


def fmt(m, unit=""):
    med, lo, hi = m
    return "%.3g%s (%.3g..%.3g)" % (med, unit, lo, hi)


def verdict(name, measured, target, ok):
    verdicts.append((name, target, measured, "PASS" if ok else "FAIL"))


def bench_cpu(tmp):
    """Profiler CPU per 1000 samples and peak RSS, 999 Hz, 2 busy threads."""
    log("bench: profiler CPU, %d rounds of %d s" % (REPS, DURATION))
    names = ["profile bpf", "profile perf", "perf -g", "perf dwarf", "bpftrace"]
    cpu = {n: [] for n in names}
    rss = {n: [] for n in names}
    for rep in range(REPS):
        for n in names:
            load = start_load(2, DURATION + 3)
            time.sleep(0.3)
            if n == "profile bpf":
                x = ours("bpf", 999, DURATION)
            elif n == "profile perf":
                x = ours("perf", 999, DURATION)
            elif n == "perf -g":
                x = perf_anchor("fp", 999, DURATION, tmp)
            elif n == "perf dwarf":
                x = perf_anchor("dwarf", 999, DURATION, tmp)
            else:
                x = bpftrace_anchor(999, DURATION)
            load.kill()
            load.wait()
            cpu[n].append(per_k(x))
            rss[n].append(x["rss"] / 1024.0)
    base = med_spread(cpu["perf -g"])[0]
    for n in names:
        m = med_spread(cpu[n])
        results.append(("cpu", n, "%s ms CPU / 1000 samples, ratio %.2f, peak RSS %s" % (
            fmt((m[0] * 1000, m[1] * 1000, m[2] * 1000)), m[0] / base, fmt(med_spread(rss[n]), " MB"))))
    r_bpf = med_spread(cpu["profile bpf"])[0] / base
    r_perf = med_spread(cpu["profile perf"])[0] / base
    verdict("bpf backend CPU vs perf -g", "%.2fx" % r_bpf, "<= 0.5x", r_bpf <= 0.5)
    verdict("perf backend (fp) CPU vs perf -g", "%.2fx" % r_perf, "<= 1.0x", r_perf <= 1.0)
    rss_perf = med_spread(rss["profile perf"])[0]
    verdict("peak RSS, perf backend (fp)", "%.1f MB" % rss_perf, "<= 20 MB", rss_perf <= 20)


def bench_dwarf(tmp):
    """--unwind dwarf: unwind cost per sample and profiler CPU next to perf's dwarf mode.

    System-wide at 999 Hz for 10 s on nofp chain (two threads, no frame
    pointers), the same way for all three; perf's CPU includes perf report.
    """
    seconds = 3 if QUICK else 10
    log("bench: dwarf mode, %d rounds of %d s" % (REPS, seconds))
    names = ["profile bpf dwarf", "profile perf dwarf", "perf dwarf"]
    cpu = {n: [] for n in names}
    per = {n: [] for n in names}
    rss = {n: [] for n in names}
    unwind_us = {n: [] for n in names[:2]}
    replayed = {n: [] for n in names[:2]}
    for rep in range(REPS):
        for n in names:
            load = subprocess.Popen([os.path.join(WORK, "nofp"), "chain", str(seconds + 3)])
            time.sleep(0.3)
            if n == "perf dwarf":
                x = perf_anchor("dwarf", 999, seconds, tmp)
            else:
                x = ours(n.split()[1], 999, seconds, ("--unwind", "dwarf"))
                m = re.search(r"dwarf unwind: (\d+) stacks, median ([0-9.]+) us each, "
                              r"(\d+) of (\d+) steps replayed", x["run"].err)
                if m:
                    unwind_us[n].append(float(m.group(2)))
                    replayed[n].append(100.0 * int(m.group(3)) / max(1, int(m.group(4))))
            load.kill()
            load.wait()
            cpu[n].append(x["cpu"])
            per[n].append(per_k(x))
            rss[n].append(x["rss"] / 1024.0)
    base = med_spread(cpu["perf dwarf"])[0]
    for n in names:
        m = med_spread(cpu[n])
        line = "%s s CPU for %d s, ratio %.2f; %s ms / 1000 samples; peak RSS %s" % (
            fmt(m), seconds, m[0] / base, fmt(tuple(v * 1000 for v in med_spread(per[n]))),
            fmt(med_spread(rss[n]), " MB"))
        if n in unwind_us:
            line += "; unwind median %s, steps replayed %s" % (
                fmt(med_spread(unwind_us[n]), " us"), fmt(med_spread(replayed[n]), "%"))
        results.append(("dwarf", n, line))
    for n in names[:2]:
        r = med_spread(cpu[n])[0] / base
        verdict("%s CPU vs perf dwarf + report" % n.split()[1], "%.2fx" % r, "<= 0.25x",
                r <= 0.25)
        u = med_spread(unwind_us[n])[0]
        verdict("%s dwarf: median unwind per sample" % n.split()[1], "%.2f us" % u, "<= 3 us",
                u <= 3)


def prog_fds(pid):
    """The fdinfo paths of the BPF programs process pid holds: other people's profilers
    on a shared machine run programs of the same names."""
    paths = []
    try:
        fds = os.listdir("/proc/%d/fdinfo" % pid)
    except OSError:
        return paths
    for fd in fds:
        path = "/proc/%d/fdinfo/%s" % (pid, fd)
        try:
            with open(path) as f:
                if re.search(r"^prog_id:", f.read(), re.M):
                    paths.append(path)
        except OSError:
            continue
    return paths


def prog_runs(paths):
    """(run_time_ns, run_cnt) of the program that ran most among paths' (fdinfo)."""
    best = (0, 0)
    for path in paths:
        try:
            with open(path) as f:
                text = f.read()
        except OSError:
            continue
        t = re.search(r"^run_time_ns:\s+(\d+)", text, re.M)
        c = re.search(r"^run_cnt:\s+(\d+)", text, re.M)
        if t and c and int(c.group(1)) > best[1]:
            best = (int(t.group(1)), int(c.group(1)))
    return best


def prog_stats():
    """{(name, id): (run_time_ns, run_cnt)} of every perf_event BPF program (bpftool)."""
    out = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True,
                         text=True).stdout
    return {(p.get("name"), p["id"]): (p.get("run_time_ns", 0), p.get("run_cnt", 0))
            for p in json.loads(out or "[]") if p.get("type") == "perf_event"}


class BpfStats:
    """Run-time stats of BPF programs while held (with BpfStats(): ...).

    BPF_ENABLE_STATS (5.8) holds them on by a file descriptor: other users
    of this shared machine switching kernel.bpf_stats_enabled off mid-run
    (another bench ending) do not turn them off under us, which they do
    to the sysctl (seen: a run_cnt of 32 for 453 samples with the sysctl,
    418 for 419 with the descriptor). The sysctl before 5.8.
    """

    def __enter__(self):
        libc = ctypes.CDLL(None, use_errno=True)
        attr = ctypes.create_string_buffer(8)    # bpf_attr.enable_stats.type = BPF_STATS_RUN_TIME
        self.fd = libc.syscall(321, 32, attr, 8) if os.uname().machine == "x86_64" else -1
        if self.fd < 0:
            subprocess.run(["sysctl", "-q", "kernel.bpf_stats_enabled=1"], check=True)
        return self

    def __exit__(self, *exc):
        if self.fd >= 0:
            os.close(self.fd)
        else:
            subprocess.run(["sysctl", "-q", "kernel.bpf_stats_enabled=0"])


def bench_in_kernel():
    """In-kernel ns per sample: ours (frame pointers, and the default, auto), libbpf-tools'
    profile and bpftrace's, at the same time.

    All attached at once on the same load (system-wide, 999 Hz, busy 2: frame pointers), the
    order of starting rotating by round (whichever runs first at an interrupt pays for cold
    caches). Each program's run_time_ns / run_cnt from its owner's fdinfo over windows of
    a quarter second: the median window of each round, so that a window where the host
    took a vCPU in the middle of a run (its time is counted to the run) does not decide.
    "ours, fp" is --unwind fp, the path issue 45's unwinder must not make dearer (at most
    0.8x libbpf-tools'); "ours, auto" the default, which also walks, by their .eh_frame
    tables, the samples of whatever else on the host keeps no frame pointers.
    libbpf-tools' profile is not packaged: BENCH_LBT_PROFILE names one built by hand from
    bcc's libbpf-tools (docs/BENCHMARKS.md, Method).
    """
    log("bench: in-kernel cost per sample")
    lbt = os.environ.get("BENCH_LBT_PROFILE")
    secs = DURATION + 14  # the later starts (bpftrace compiles) and the windows
    ours_argv = [PROFILE, "--backend", "bpf", "-F", "999", "-f"]
    tools = {"ours, fp": ours_argv + ["--unwind", "fp", str(secs)],
             "ours, auto": ours_argv + [str(secs)],
             "bpftrace": ["bpftrace", "-e", "profile:hz:999 { @[kstack, ustack, comm] = count(); }"
                          " interval:s:%d { exit(); }" % secs]}
    if lbt:
        tools["libbpf-tools"] = [lbt, "-F", "999", "-f", str(secs)]
    else:
        results.append(("kernel", "libbpf-tools profile", "not measured: BENCH_LBT_PROFILE unset"))
    order = list(tools)
    mine = [k for k in tools if k.startswith("ours")]
    ns = {k: [] for k in tools}
    ratio = {(o, k): [] for o in mine for k in tools if k not in mine}
    # Stats held by a descriptor (BpfStats): another bench ending on this shared machine
    # switches the sysctl off under us.
    with BpfStats():
        for rep in range(REPS):
            load = start_load(2, secs + 4)
            runs, fds = [], {}
            for k in order[rep % len(order):] + order[:rep % len(order)]:
                runs.append(Run(tools[k], stdout=subprocess.DEVNULL))
                # Loaded and attached (bpftrace compiles first), before the next starts.
                t0 = time.monotonic()
                while not fds.get(k) and time.monotonic() - t0 < 10:
                    time.sleep(0.5)
                    fds[k] = prog_fds(command_pid(runs[-1].proc) or 0)
                time.sleep(0.5)
            windows = {k: [] for k in tools}
            last = {k: prog_runs(fds[k]) for k in tools}
            for _ in range(int(DURATION * 4)):
                time.sleep(0.25)
                for k in tools:
                    now = prog_runs(fds[k])
                    if now[1] > last[k][1]:
                        windows[k].append((now[0] - last[k][0]) / (now[1] - last[k][1]))
                    last[k] = now
            row = {k: statistics.median(w) for k, w in windows.items() if w}
            for k, v in row.items():
                ns[k].append(v)
            for (o, k), rs in ratio.items():
                if o in row and k in row:
                    rs.append(row[o] / row[k])
            log("bench: in-kernel round %d: %s" % (rep, ", ".join(
                "%s %.0f ns" % kv for kv in sorted(row.items()))))
            for r in runs:
                r.wait()
            load.kill()
            load.wait()
    for k in tools:
        results.append(("kernel", "%s program" % k, fmt(med_spread(ns[k]), " ns/sample")))
    for (o, k), rs in ratio.items():
        results.append(("kernel", "%s / %s, by round" % (o, k), fmt(med_spread(rs))))
    # The default (auto) against both peers: the targets of the table at the top of
    # docs/BENCHMARKS.md; the frame-pointer path against libbpf-tools': issue 45's.
    for k in tools:
        if k not in mine:
            m = med_spread(ratio[("ours, auto", k)])
            verdict("in-kernel cost per sample (auto) vs %s" % k, "%.2fx" % m[0], "<= 0.8x",
                    m[0] <= 0.8)
    if lbt:
        m = med_spread(ratio[("ours, fp", "libbpf-tools")])
        verdict("in-kernel ns, fp path vs libbpf-tools", "%.2fx" % m[0], "<= 0.8x", m[0] <= 0.8)


def bench_latency(tmp):
    """From the end of sampling (SIGINT) to the last byte of output, by unique stacks."""
    log("bench: report latency")
    # -p: only manystacks' stacks count, whatever else runs on this shared machine.
    for paths, secs in ((100, 2), (10000, 8), (100000, 12)):
        if QUICK and paths > 10000:
            continue
        for backend in ("bpf", "perf"):
            lat, uniq, rss = [], [], []
            # The largest case takes long; one round keeps make bench near 10 minutes.
            for rep in range(REPS if paths <= 10000 else 1):
                load = subprocess.Popen([os.path.join(WORK, "manystacks"), str(paths),
                                         str(secs + 2)])
                time.sleep(0.3)
                size = str(max(16384, 4 * paths))
                extra = ["--stack-storage-size", size, "--hash-storage-size", size]
                r = Run([PROFILE, "--backend", backend, "-F", "9999", "-f", *extra,
                         "-p", str(load.pid)], stop_after=secs).wait()
                load.kill()
                load.wait()
                lat.append((r.last_byte or r.end) - r.signal_time)
                uniq.append(len(r.out.splitlines()))
                rss.append(r.rss_kb / 1024.0)
            m = med_spread(lat)
            results.append(("latency", "%s, %d paths" % (backend, paths),
                            "%s, %d unique stacks, peak RSS %s" % (
                                fmt((m[0] * 1000, m[1] * 1000, m[2] * 1000), " ms"),
                                statistics.median(uniq), fmt(med_spread(rss), " MB"))))
            if paths == 10000:
                # Issue 16's targets, at >= 10000 unique stacks.
                verdict("report latency at %d unique stacks (%s)" % (min(uniq), backend),
                        "%.0f ms" % (m[0] * 1000), "< 100 ms", m[0] < 0.1)
                verdict("peak RSS at %d unique stacks (%s)" % (min(uniq), backend),
                        "%.1f MB" % max(rss), "< 20 MB", max(rss) < 20)
    # The anchor's post-processing at 10000 paths: perf report on its file.
    load = subprocess.Popen([os.path.join(WORK, "manystacks"), "10000", "7"])
    time.sleep(0.3)
    x = perf_anchor("fp", 9999, 5, tmp)
    load.kill()
    load.wait()
    results.append(("latency", "perf report -g folded, 10000 paths", "%.0f ms" % (x["latency"] * 1000)))


def bench_symbols(tmp):
    """Issue 5's case: ~10 000 unique stacks across 50 binaries, cold caches."""
    log("bench: symbolization across 50 binaries")
    libdir = os.path.join(tmp, "libs")
    subprocess.run([os.path.join(ROOT, "tests", "bench", "gen_libs.sh"), libdir, "10000"],
                   check=True, stdout=subprocess.DEVNULL)
    for backend in ("perf", "bpf"):
        lat, rss, uniq = [], [], []
        for rep in range(1):
            load = subprocess.Popen([os.path.join(libdir, "many_binaries"), "12"])
            time.sleep(0.5)
            r = Run([PROFILE, "--backend", backend, "-F", "9999", "-f",
                     "--stack-storage-size", "65536", "--hash-storage-size", "65536"],
                    stop_after=None)
            time.sleep(8)
            # Cold: nothing of the 50 binaries or their symbols in the page cache.
            subprocess.run(["sh", "-c", "sync; echo 3 > /proc/sys/vm/drop_caches"])
            r.stop_after = 0
            r.start = time.monotonic()
            r.wait()
            load.kill()
            load.wait()
            lat.append(r.last_byte - r.signal_time)
            rss.append(r.rss_kb / 1024.0)
            uniq.append(len(r.out.splitlines()))
        m = med_spread(lat)
        results.append(("symbols", "%s, 50 binaries" % backend,
                        "%s to the last byte, %d unique stacks, peak RSS %.1f MB" % (
                            fmt((m[0] * 1000, m[1] * 1000, m[2] * 1000), " ms"),
                            statistics.median(uniq), max(rss))))
        verdict("report latency, 50 binaries, cold (%s)" % backend, "%.0f ms" % (m[0] * 1000),
                "<= 100 ms", m[0] <= 0.1)
        verdict("peak RSS, 50 binaries (%s)" % backend, "%.1f MB" % max(rss), "<= 50 MB",
                max(rss) <= 50)


# What profile writes in brackets that is no frame without a name.
MARKER = re.compile(r"\[(truncated|goroutine stack not followed|Missed (User|Kernel) Stack"
                    r"|python: [^\]]*)\]")


def unresolved(frame):
    """[unknown], a bare address as perf prints them, or a frame named only by its file,
    "[libcrypto.so.3]", as profile's folded stacks print one without a symbol (issue 45)."""
    return (frame == "[unknown]" or re.fullmatch(r"0x[0-9a-f]+", frame) is not None
            or (frame.startswith("[") and frame.endswith("]") and not MARKER.fullmatch(frame)))


def unknown_share(folded_text, skip_comm=None):
    """Share of frames not resolved (see unresolved)."""
    frames = unknown = 0
    for line in folded_text.splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        if skip_comm and stack.split(";")[0] == skip_comm:
            continue
        parts = stack.split(";")[1:]
        frames += len(parts) * int(count)
        unknown += sum(unresolved(p) for p in parts) * int(count)
    return 100.0 * unknown / frames if frames else float("nan")


def bench_unknown(tmp):
    """[unknown] frames in a system-wide profile of this machine, ours next to perf's."""
    log("bench: [unknown] frames, system-wide")
    load = start_load(2, DURATION + 4)
    data = os.path.join(tmp, "perf.data")
    p = Run([PROFILE, "-F", "999", "-f", str(DURATION)])
    rec = Run([*perf_record(), "-q", "-F", "999", "-a", "-g", "-o", data, "--", "sleep",
               str(DURATION)])
    p.wait()
    rec.wait()
    load.kill()
    load.wait()
    rep = Run(["perf", "report", "-i", data, "--stdio", "--no-children", "-q",
               "-g", "folded,0,caller,count"]).wait()
    # perf's folded lines are "count stack" under a header line per symbol.
    perf_lines = "\n".join("%s %s" % (l.split(" ", 1)[1], l.split(" ", 1)[0])
                           for l in rep.out.splitlines()
                           if l.strip() and l.split(" ", 1)[0].isdigit() and " " in l)
    # perf record runs alongside: Debian's perf is stripped, so its own frames have no
    # names in our profile, while perf's profile does not see its own start-up.
    results.append(("symbols", "[unknown] frames, system-wide",
                    "profile %.2f%%, perf %.2f%%; leaving out the comm perf: profile %.2f%%, "
                    "perf %.2f%%" % (unknown_share(p.out), unknown_share(perf_lines),
                                     unknown_share(p.out, "perf"),
                                     unknown_share(perf_lines, "perf"))))


def bench_lost():
    """9999 Hz on all CPUs: what the kernel could not deliver."""
    secs = 5 if QUICK else 30
    log("bench: lost samples at 9999 Hz, %d s" % secs)
    for backend in ("perf", "bpf"):
        load = start_load(2, secs + 3)
        r = Run([PROFILE, "--backend", backend, "-F", "9999", "-f", str(secs)]).wait()
        load.kill()
        load.wait()
        m = re.search(r"WARNING: (\d+) samples lost", r.err)
        lost = int(m.group(1)) if m else 0
        m = re.search(r"WARNING: (\d+) stack traces could not be displayed", r.err)
        missed = int(m.group(1)) if m else 0
        results.append(("lost", backend, "%d samples lost, %d stacks missed" % (lost, missed)))
        verdict("lost samples at 9999 Hz (%s)" % backend, "%d lost, %d missed" % (lost, missed),
                "0", lost == 0 and missed == 0)


def bench_growth(tmp):
    """CPU per 1000 samples as frequency and busy threads grow."""
    log("bench: growth with frequency and threads")
    secs = 2
    for freq in (49, 999, 9999):
        for threads in (1, 2, 8):
            row = []
            for n in ("profile bpf", "profile perf", "perf -g"):
                load = start_load(threads, secs + 3)
                time.sleep(0.2)
                if n == "profile bpf":
                    x = ours("bpf", freq, secs)
                elif n == "profile perf":
                    x = ours("perf", freq, secs)
                else:
                    x = perf_anchor("fp", freq, secs, tmp)
                load.kill()
                load.wait()
                row.append("%s %.2f ms" % (n, per_k(x) * 1000))
            results.append(("growth", "%d Hz, %d threads" % (freq, threads), "; ".join(row)))


def bench_replay():
    """The perf backend's per-sample path on a recorded stream, as fast as it goes."""
    log("bench: replayed sample streams (fp on busy, dwarf on nofp chain)")
    replay = os.path.join(BUILD, "tests", "bench-replay")
    secs = 2 if QUICK else 3
    for mode, load_argv in (("fp", [os.path.join(WORK, "busy"), "2", str(secs + 3)]),
                            ("dwarf", [os.path.join(WORK, "nofp"), "chain", str(secs + 3)])):
        load = subprocess.Popen(load_argv, stdout=subprocess.DEVNULL)
        time.sleep(0.3)
        r = Run([replay] + (["--dwarf"] if mode == "dwarf" else []) + [str(secs), "7"]).wait()
        load.kill()
        load.wait()
        line = r.out.decode().strip() if isinstance(r.out, bytes) else r.out.strip()
        results.append(("replay", mode, line))


def main():
    if os.geteuid() != 0:
        sys.exit("bench: run as root (system-wide profiling, bpf_stats)")
    ensure_tools()
    with tempfile.TemporaryDirectory() as tmp:
        # BENCH_ONLY=dwarf,lost runs only those sections; BENCH_SOAK=SECONDS adds busy's soak.
        only = os.environ.get("BENCH_ONLY", "").split(",")
        for name, fn in (("cpu", lambda: bench_cpu(tmp)), ("dwarf", lambda: bench_dwarf(tmp)),
                         ("in-kernel", bench_in_kernel), ("latency", lambda: bench_latency(tmp)),
                         ("symbols", lambda: bench_symbols(tmp)),
                         ("fidelity", lambda: __import__("fidelity").run(tmp, results, verdicts,
                                                                          perf_record())),
                         ("unknown", lambda: bench_unknown(tmp)), ("lost", bench_lost),
                         ("offcpu", lambda: __import__("offcpu").run(sys.modules[__name__], tmp)),
                         ("python", lambda: __import__("python").run(sys.modules[__name__], tmp)),
                         ("node", lambda: __import__("node").run(sys.modules[__name__], tmp)),
                         ("node-kernel",
                          lambda: __import__("node_kernel").run(sys.modules[__name__], tmp)),
                         ("native", lambda: __import__("native").run(sys.modules[__name__], tmp)),
                         ("rss", lambda: __import__("rss").run(sys.modules[__name__], tmp)),
                         ("growth", lambda: bench_growth(tmp)), ("replay", bench_replay),
                         # BENCH_ONLY=soak: busy.py's soak alone (BENCH_SOAK=SECONDS).
                         ("busy", lambda: __import__("busy").run(
                             sys.modules[__name__], tmp,
                             table_too=only == [""] or "busy" in only))):
            if only == [""] or name in only or (name == "busy" and "soak" in only):
                fn()
    print("# profile benchmark, %s, kernel %s, %d CPUs" % (
        time.strftime("%Y-%m-%d"), os.uname().release, os.cpu_count()))
    section = None
    for sec, name, value in results:
        if sec != section:
            print("\n## %s" % sec)
            section = sec
        print("- %-36s %s" % (name, value))
    print("\n## targets")
    for name, target, measured, v in verdicts:
        print("- %-4s %-48s %-14s (target %s)" % (v, name, measured, target))


if __name__ == "__main__":
    main()
