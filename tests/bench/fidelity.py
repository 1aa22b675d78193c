# SPDX-License-Identifier: GPL-2.0
"""
make bench, section fidelity (issue 15, "Measured"): real programs from
Debian packages profiled by `profile` (bpf and perf backends) and by
`perf record -g` / `--call-graph dwarf` at the same time, over the same
execution: the programs are stopped until all three profilers sample, run
for CPU_TARGET seconds of their own CPU time, and are stopped again.

Per program and mode: the self share of perf's top-10 functions (leaf
frames, kernel frames included, as `perf report --no-children`) in each
profile, and the share of samples whose stack reaches main or a thread's
start. Targets: every top-10 share within 2 points of perf's, and the
share reaching main at least perf's.
"""
import collections
import os
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("O", os.path.join(ROOT, "build"))
PROFILE = os.path.join(BUILD, "profile")
FREQ = 2999
CPU_TARGET = 4.0
WALL_LIMIT = 30.0
# Frames that mean the walk got to the bottom of the stack: main and libc's callers of it, a
# thread's start, and ld.so's entry (the programs are sampled from their first instruction).
ROOTS = {"main", "__libc_start_call_main", "__libc_start_main", "__libc_start_main_impl",
         "start_thread", "clone3", "__clone3", "clone", "__clone", "_start", "_dl_start"}

PY_LOOP = """
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
def work():
    d = {}
    for i in range(2000):
        d[str(i)] = sorted([i % 7, i % 5, i % 3])
    return len(d)
while True:
    fib(18)
    work()
"""


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def write_inputs(tmp):
    """The same kinds of input as tests/integration/fidelity/check_realprograms.c."""
    data, sql = os.path.join(tmp, "data.txt"), os.path.join(tmp, "load.sql")
    x = 12345

    def rnd():
        nonlocal x
        x = (x * 1103515245 + 12345) & 0xffffffff
        return x
    vocab = ["".join(chr(97 + rnd() % 26) for _ in range(2 + rnd() % 8)) for _ in range(4096)]
    with open(data, "w") as f:
        size = 0
        while size < 32 << 20:
            line = " ".join(vocab[(rnd() >> 8) % 4096] for _ in range(12)) + " %d\n" % (rnd() >> 2)
            f.write(line)
            size += len(line)
    with open(sql, "w") as f:
        f.write("CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c INTEGER);\n"
                "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n LIMIT 200000)\n"
                "INSERT INTO t SELECT x, hex(randomblob(8)), x % 1000 FROM n;\n"
                "CREATE INDEX tc ON t(c);\n")
        for i in range(3000):
            f.write("SELECT count(*), sum(length(t2.b)) FROM t t1 JOIN t t2 ON t1.c = t2.c AND "
                    "t2.a < %d WHERE t1.b LIKE '%%A%d%%' GROUP BY t1.c %% 17 ORDER BY 2 LIMIT 3;\n"
                    % (300 + i % 7, i % 10))
    return data, sql


def programs(data, sql):
    d8 = [data] * 8
    return [
        ("gzip", [(["/usr/bin/gzip", "-9", "-c"] + d8, None)]),
        ("xz", [(["/usr/bin/xz", "-9", "-T1", "-c", data], None)]),
        ("sqlite3", [(["/usr/bin/sqlite3", ":memory:"], sql)]),
        ("python3", [(["/usr/bin/python3", "-c", PY_LOOP], None)]),
        ("find", [(["/usr/bin/find"] + ["/usr"] * 20 + ["-xdev"], None)]),
        ("pipeline", [(["/bin/cat"] + d8, None), (["/usr/bin/gzip", "-1"], None),
                      (["/usr/bin/xz", "-1", "-T1"], None)]),
    ]


def nice20():
    os.setpriority(os.PRIO_PROCESS, 0, -20)


def start_program(stages):
    """The stages chained by pipes, each stopped once it runs its own image."""
    procs, prev = [], None
    for i, (argv, stdin_path) in enumerate(stages):
        stdin = open(stdin_path) if stdin_path else (prev.stdout if prev else subprocess.DEVNULL)
        last = i == len(stages) - 1
        p = subprocess.Popen(argv, stdin=stdin, stderr=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL if last else subprocess.PIPE,
                             preexec_fn=nice20)
        if prev:
            prev.stdout.close()
        procs.append(p)
        prev = p
    for p, (argv, _) in zip(procs, stages):
        t0 = time.monotonic()
        while time.monotonic() - t0 < 5:
            try:
                if os.readlink("/proc/%d/exe" % p.pid) != os.readlink("/proc/self/exe"):
                    break
            except OSError:
                pass
            time.sleep(0.001)
        os.kill(p.pid, signal.SIGSTOP)
    return procs


def cpu_seconds(procs):
    total = 0.0
    for p in procs:
        try:
            fields = open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            pass
    return total


def fold_ours(text):
    """Folded lines to (samples, leaf counts, samples reaching a root)."""
    total, reach, leaves = 0, 0, collections.Counter()
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        frames = stack.split(";")[1:]
        n = int(count)
        total += n
        leaves[frames[-1] if frames else "[unknown]"] += n
        if ROOTS & set(frames):
            reach += n
    return total, leaves, reach


def fold_perf_script(text):
    """perf script -F comm,ip,sym: a header line, then one frame a line, leaf first."""
    total, reach, leaves = 0, 0, collections.Counter()
    frames = []

    def flush():
        nonlocal total, reach
        if frames:
            total += 1
            leaves[frames[0]] += 1
            if ROOTS & set(frames):
                reach += 1
    for line in text.splitlines():
        if not line.strip():
            flush()
            frames = []
        elif line[0] in " \t":
            parts = line.split(None, 1)
            name = parts[1].strip() if len(parts) > 1 else "[unknown]"
            frames.append(name.split("+0x")[0])
        else:
            flush()
            frames = []
    flush()
    return total, leaves, reach


def profile_window(stages, mode, tmp, perf_record):
    procs = start_program(stages)
    pids = ",".join(str(p.pid) for p in procs)
    ours = {}
    for backend in ("bpf", "perf"):
        err = open(os.path.join(tmp, "%s.err" % backend), "w+")
        out = open(os.path.join(tmp, "%s.folded" % backend), "w+")
        ours[backend] = (subprocess.Popen(
            [PROFILE, "--backend", backend, "--unwind", mode, "-v", "-f", "-F", str(FREQ),
             "-p", pids, "120"], stdout=out, stderr=err, preexec_fn=nice20), out, err)
    data = os.path.join(tmp, "perf.data")
    ctl, ack = os.path.join(tmp, "ctl"), os.path.join(tmp, "ack")
    for f in (ctl, ack):
        if os.path.exists(f):
            os.unlink(f)
        os.mkfifo(f)
    cg = ["-g"] if mode == "fp" else ["--call-graph", "dwarf"]
    rec = subprocess.Popen([*perf_record, "-q", "-F", str(FREQ), *cg, "-p", pids, "-o", data,
                            "-D", "-1", "--control", "fifo:%s,%s" % (ctl, ack)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=nice20)
    # perf starts with its events off; "enable" and its "ack" say when it samples.
    ctl_fd = os.open(ctl, os.O_WRONLY)
    ack_fd = os.open(ack, os.O_RDONLY)
    os.write(ctl_fd, b"enable\n")
    os.read(ack_fd, 16)
    t0 = time.monotonic()
    for backend, (p, out, err) in ours.items():
        while "sampling started" not in open(err.name).read():
            if p.poll() is not None or time.monotonic() - t0 > 30:
                raise RuntimeError("profile --backend %s did not start: %s" %
                                   (backend, open(err.name).read()[-400:]))
            time.sleep(0.02)
    c0, t0 = cpu_seconds(procs), time.monotonic()
    for p in procs:
        os.kill(p.pid, signal.SIGCONT)
    while cpu_seconds(procs) - c0 < CPU_TARGET and time.monotonic() - t0 < WALL_LIMIT:
        time.sleep(0.02)
    for p in procs:
        os.kill(p.pid, signal.SIGSTOP)
    cpu, wall = cpu_seconds(procs) - c0, time.monotonic() - t0
    for p, _, _ in ours.values():
        p.send_signal(signal.SIGINT)
    rec.send_signal(signal.SIGINT)
    for p, _, _ in ours.values():
        p.wait()
    rec.communicate()
    os.close(ctl_fd)
    os.close(ack_fd)
    for p in procs:
        p.kill()
        p.wait()
    res = {}
    for backend, (p, out, err) in ours.items():
        out.seek(0)
        res["profile " + backend] = fold_ours(out.read())
        out.close()
        err.close()
    script = subprocess.run(["perf", "script", "-i", data, "-F", "comm,ip,sym", "--no-inline"],
                            capture_output=True, text=True)
    res["perf"] = fold_perf_script(script.stdout)
    os.unlink(data)
    return res, cpu, wall


def run(tmp, results, verdicts, perf_record=("perf", "record")):
    """Adds its rows to bench.py's results and verdicts; perf_record: bench.perf_record()."""
    log("bench: fidelity, real programs next to perf record (%d Hz, %.0f s of their CPU each)"
        % (FREQ, CPU_TARGET))
    work = tempfile.mkdtemp(dir=tmp)
    data, sql = write_inputs(work)
    table = []
    for name, stages in programs(data, sql):
        missing = [argv[0] for argv, _ in stages if not os.access(argv[0], os.X_OK)]
        if missing:
            log("bench: fidelity: skipping %s: %s not installed" % (name, missing[0]))
            continue
        for mode in ("fp", "dwarf", "auto"):
            res, cpu, wall = profile_window(stages, mode, work, perf_record)
            ptotal, pleaves, preach = res["perf"]
            top = [f for f, _ in pleaves.most_common(10)]
            row = {"program": name, "mode": mode, "perf_n": ptotal,
                   "perf_reach": 100.0 * preach / max(1, ptotal)}
            for who in ("profile bpf", "profile perf"):
                total, leaves, reach = res[who]
                diffs = [(abs(100.0 * leaves[f] / max(1, total) -
                              100.0 * pleaves[f] / max(1, ptotal)), f) for f in top]
                worst = max(diffs) if diffs else (0.0, "")
                row[who] = (total, worst, 100.0 * reach / max(1, total))
                # (name, target, measured, verdict), as bench.py's verdict() keeps them
                verdicts.append(("%s %s %s: perf's top-10 self shares" % (
                    name, mode, who.split()[1]), "within 2 points",
                    "%.2f (%s)" % worst, "PASS" if worst[0] <= 2.0 else "FAIL"))
                verdicts.append(("%s %s %s: samples reaching main" % (
                    name, mode, who.split()[1]), ">= perf's %.2f%%" % row["perf_reach"],
                    "%.2f%%" % row[who][2], "PASS" if row[who][2] >= row["perf_reach"] else "FAIL"))
            detail = "; ".join("%s %.1f/%.1f/%.1f" % (
                f, 100.0 * pleaves[f] / max(1, ptotal),
                100.0 * res["profile bpf"][1][f] / max(1, res["profile bpf"][0]),
                100.0 * res["profile perf"][1][f] / max(1, res["profile perf"][0])) for f in top)
            results.append(("fidelity", "%s %s top-10 (perf/bpf/perf-backend %%)" % (name, mode),
                            detail))
            table.append(row)
            log("bench: fidelity: %s %s done (%.1f s CPU in %.1f s)" % (name, mode, cpu, wall))
    for row in table:
        b, p = row["profile bpf"], row["profile perf"]
        results.append(("fidelity", "%s %s" % (row["program"], row["mode"]),
                        "samples perf %d / bpf %d / perf-backend %d; top-10 largest difference "
                        "bpf %.2f, perf-backend %.2f points; reaching main perf %.2f%%, bpf "
                        "%.2f%%, perf-backend %.2f%%" % (
                            row["perf_n"], b[0], p[0], b[1][0], p[1][0], row["perf_reach"],
                            b[2], p[2])))
