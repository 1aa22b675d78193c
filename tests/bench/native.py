# SPDX-License-Identifier: GPL-2.0
"""
make bench, section native (issue 45): what unwinding user stacks inside
the BPF program from compiled .eh_frame tables (`--unwind auto` on the bpf
backend) costs, next to a frame-pointer walk of the same depth and to the
stack copies of `--unwind dwarf`, in the same run, interleaved.

- In-kernel ns per sample (run_time_ns / run_cnt of the profiler's own
  programs, from its fdinfo, with BPF stats held on): a 40-deep stack
  built without frame pointers under auto, against a 40-deep recursion
  that keeps them (workloads/deep spin) under fp. Target: at most 1.5x,
  held to 40 different functions (workloads/nofp distinct: every frame
  its own lookup); a 40-deep recursion (nofp deep), whose frames return
  to one pc that the walk looks up once, is shown beside it.
- The profiler's own CPU seconds (wait4) for the no-frame-pointer chain
  under auto against the same chain under fp: at most 1.3x.
- Samples whose stack reaches main, per mode.
- Bytes crossing to user space per sample, each run traced from its
  first syscall (bytes_run): what its bpf() calls copy out of maps
  (values of lookups, keys of get_next_key, keys and values of batches,
  by each map's sizes in its fdinfo) and the records the kernel wrote
  into its perf rings (16 bytes for each record that wakes the native
  store; the side-band rings' data_head from -v, said apart: every
  process's mmaps, forks and exits on the host, whatever the mode).
  Target: auto's on the 40 functions no more than fp's on the same
  chain (a stored stack is 1 KiB at any depth: the bytes follow how many
  different stacks a drain reads); fp's on deep spin, whose leaf loop
  has fewer pcs than nofp_c's, is shown beside. Files and /proc read by
  the tracker and the table compiler are not counted.
Two workload processes, one per CPU of this 2-CPU VM, so that every
sample is a workload's (the idle task's are filtered in the program, and
would make the mean of a cheap run look cheaper still).
"""
import os
import re
import signal
import subprocess
import time

FREQ = 999
DEPTH = 40


def start_workloads(b, argv, n=2):
    return [subprocess.Popen(argv, stdout=subprocess.DEVNULL) for _ in range(n)]


def reach_main(folded):
    total = reach = 0
    for line in folded.splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        total += int(count)
        if ";main;" in ";" + stack + ";" or stack.split(";")[1:2] == ["main"]:
            reach += int(count)
    return reach, total


def profiled_ns(b, mode, pids, seconds):
    """A bpf run of -p pids under --unwind mode: (its Run, waited for; the median over
    quarter-second windows of its busiest program's in-kernel ns per run)."""
    run = b.Run([b.PROFILE, "--backend", "bpf", "--unwind", mode, "-v", "-f", "-F", str(FREQ),
                 "-p", ",".join(str(p) for p in pids), str(seconds + 2)])
    fds = []
    t0 = time.monotonic()
    while not fds and time.monotonic() - t0 < 10:
        time.sleep(0.2)
        fds = b.prog_fds(b.command_pid(run.proc) or 0)
    time.sleep(0.5)
    windows, last = [], b.prog_runs(fds)
    for _ in range(int(seconds * 4)):
        time.sleep(0.25)
        now = b.prog_runs(fds)
        if now[1] > last[1]:
            windows.append((now[0] - last[0]) / (now[1] - last[1]))
        last = now
    run.wait()
    return run, sorted(windows)[len(windows) // 2] if windows else float("nan")


def one_run(b, mode, argv, seconds):
    """(ns per sample, profiler CPU s, samples, share reaching main) of one run."""
    work = start_workloads(b, argv + [str(seconds + 6), str(DEPTH)])
    run, ns = profiled_ns(b, mode, [p.pid for p in work], seconds)
    for p in work:
        p.send_signal(signal.SIGKILL)
        p.wait()
    reach, total = reach_main(run.out)
    return ns, run.cpu, total, (reach / total if total else float("nan")), run.err


# The profiler's bpf() calls that copy map data out: lookups (and lookup-and-delete) by
# map fd, get_next_key by map fd, batches (lookup, lookup-and-delete) with the count the
# kernel wrote back (union bpf_attr: batch.count at 32, batch.map_fd at 36).
BPF_READS = r"""
tracepoint:syscalls:sys_enter_bpf /pid == $1/ { @cmd[tid] = args->cmd; @attr[tid] = (uint64)args->uattr; }
tracepoint:syscalls:sys_exit_bpf /pid == $1 && @attr[tid]/ {
  $r = args->ret; $c = @cmd[tid]; $a = @attr[tid];
  if (($c == 1 || $c == 21) && $r == 0) { @lookup[*(uint32 *)uptr($a)] = count(); }
  if ($c == 4 && $r == 0) { @nextkey[*(uint32 *)uptr($a)] = count(); }
  if ($c == 24 || $c == 25) { @batch[*(uint32 *)uptr($a + 36)] = sum(*(uint32 *)uptr($a + 32)); }
  delete(@cmd[tid]); delete(@attr[tid]);
}
"""
PERCPU_TYPES = {5, 6, 10, 21}  # percpu hash, array, LRU hash, cgroup storage


def possible_cpus():
    with open("/sys/devices/system/cpu/possible") as f:
        return max(int(r.split("-")[-1]) for r in f.read().strip().split(",")) + 1


def map_sizes(pid, sizes):
    """Adds {fd: (key bytes, value bytes as copied out)} of pid's BPF maps to sizes."""
    try:
        fds = os.listdir("/proc/%d/fdinfo" % pid)
    except OSError:
        return
    for fd in fds:
        try:
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                info = dict(l.split(":", 1) for l in f.read().splitlines() if ":" in l)
        except OSError:
            continue
        if "map_type" in info:
            vs = int(info["value_size"])
            if int(info["map_type"]) in PERCPU_TYPES:
                vs = (vs + 7) // 8 * 8 * possible_cpus()
            sizes[int(fd)] = (int(info["key_size"]), vs)


def bytes_run(b, mode, argv, seconds):
    """{maps, stacks, wake, sideband, samples, unknown} of one run, traced from its start:
    bytes of map reads, how many of them were stacks (a value of 1 KiB or more), bytes of
    native_wake records and of side-band records, samples, maps of unknown size read."""
    work = start_workloads(b, argv + [str(seconds + 6), str(DEPTH)])
    # Held before exec (by a shell that execs it when told) until bpftrace traces its pid.
    prof = subprocess.Popen(
        ["sh", "-c", 'read go && exec "$@"', "sh", b.PROFILE, "--backend", "bpf",
         "--unwind", mode, "-v", "-f", "-F", str(FREQ),
         "-p", ",".join(str(p.pid) for p in work), str(seconds)],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    trace = subprocess.Popen(["bpftrace", "-e", BPF_READS, str(prof.pid)],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    t0 = time.monotonic()
    while len(b.prog_fds(trace.pid)) < 2 and time.monotonic() - t0 < 20:
        time.sleep(0.1)
    time.sleep(0.2)
    prof.stdin.write("go\n")
    prof.stdin.close()
    sizes = {}
    while prof.poll() is None:
        map_sizes(prof.pid, sizes)
        time.sleep(0.1)
    err = prof.stderr.read()
    trace.send_signal(signal.SIGINT)
    out, _ = trace.communicate()
    for p in work:
        p.send_signal(signal.SIGKILL)
        p.wait()
    r = {"maps": 0, "stacks": 0, "unknown": 0}
    for kind, fd, n in re.findall(r"^@(\w+)\[(\d+)\]: (\d+)", out, re.M):
        if int(fd) not in sizes:
            r["unknown"] += 1
            continue
        ks, vs = sizes[int(fd)]
        r["maps"] += int(n) * {"lookup": vs, "nextkey": ks, "batch": ks + vs}[kind]
        r["stacks"] += int(n) if kind == "lookup" and vs >= 1016 else 0
    # A native_wake record: header, raw size, the tgid (4 bytes), 8-aligned.
    r["wake"] = 16 * sum(int(x) for x in re.findall(r"\((\d+) noted\)", err))
    # Dummy events on every CPU: every process's mmap, comm, fork and exit on the host.
    r["sideband"] = sum(int(x) for x in re.findall(r"into the rings: (\d+) bytes", err))
    m = re.search(r"^profile: (\d+) samples", err, re.M)
    r["samples"] = int(m.group(1)) if m else 0
    return r


def per(r, *parts):
    """Bytes a sample of bytes_run's parts."""
    return sum(r[p] for p in parts) / r["samples"] if r["samples"] else float("nan")


def run(b, tmp):
    nofp = [os.path.join(b.WORK, "nofp"), "deep"]
    distinct = [os.path.join(b.WORK, "nofp"), "distinct"]
    fp = [os.path.join(b.WORK, "deep"), "spin"]
    b.log("bench: native unwinding, %d rounds of %d s, %d-deep stacks at %d Hz"
          % (b.REPS, b.DURATION, DEPTH, FREQ))
    cases = {"auto, no fp": ("auto", nofp), "auto, no fp, 40 functions": ("auto", distinct),
             "fp, fp kept": ("fp", fp),
             "fp, no fp": ("fp", nofp), "dwarf, no fp": ("dwarf", nofp)}
    got = {k: [] for k in cases}
    # Bytes: the no-fp chain's 40 functions under auto against the same chain under fp
    # (the verdict: as many different stacks, stopped at the leaf) and deep spin under fp
    # (fewer different leaf pcs than nofp_c's loop, so fewer stacks to read: shown beside).
    bcases = {"auto, no fp, 40 functions": ("auto", distinct), "fp, fp kept": ("fp", fp),
              "fp, no fp, 40 functions": ("fp", distinct)}
    sent = {k: [] for k in bcases}
    with b.BpfStats():
        for rep in range(b.REPS):
            order = list(cases)
            for k in order[rep % len(order):] + order[:rep % len(order)]:
                mode, argv = cases[k]
                # nofp deep takes SECONDS DEPTH; deep spin takes SECONDS DEPTH too.
                r = one_run(b, mode, argv, b.DURATION)
                got[k].append(r)
                b.log("bench: native round %d %s: %.0f ns, %.2f s CPU, %d samples, %.3f main"
                      % (rep, k, r[0], r[1], r[2], r[3]))
                if k == "auto, no fp" and rep == 0:
                    m = re.findall(r"^.*(?:native|tables?).*$", r[4], re.M)
                    for line in m[:6]:
                        b.results.append(("native", "-v", line.strip()))
            order = list(bcases)
            for k in order[rep % len(order):] + order[:rep % len(order)]:
                r = bytes_run(b, *bcases[k], b.DURATION)
                sent[k].append(r)
                b.log("bench: native round %d bytes, %s: %d from maps (%d stacks), %d wake, "
                      "%d side-band, %d samples%s" % (
                          rep, k, r["maps"], r["stacks"], r["wake"], r["sideband"],
                          r["samples"], ", %d maps unknown" % r["unknown"] if r["unknown"] else ""))
    for k, rs in got.items():
        b.results.append(("native", k, "%s in kernel, %s CPU s, reaching main %s" % (
            b.fmt(b.med_spread([r[0] for r in rs]), " ns"),
            b.fmt(b.med_spread([r[1] for r in rs])),
            b.fmt(b.med_spread([r[3] for r in rs])))))
    ns = [a[0] / f[0] for a, f in zip(got["auto, no fp"], got["fp, fp kept"])]
    ns40 = [a[0] / f[0] for a, f in zip(got["auto, no fp, 40 functions"], got["fp, fp kept"])]
    cpu = [a[1] / f[1] for a, f in zip(got["auto, no fp"], got["fp, no fp"]) if f[1]]
    m = b.med_spread(ns)
    b.results.append(("native", "auto no-fp recursion / fp fp-kept ns, by round", b.fmt(m)))
    m = b.med_spread(ns40)
    b.results.append(("native", "auto no-fp 40 functions / fp fp-kept ns, by round", b.fmt(m)))
    b.verdict("native: in-kernel ns, 40 functions deep, vs fp", "%.2fx" % m[0], "<= 1.5x",
              m[0] <= 1.5)
    m = b.med_spread(cpu)
    b.results.append(("native", "auto / fp profiler CPU, by round", b.fmt(m)))
    b.verdict("native: profiler CPU vs --unwind fp", "%.2fx" % m[0], "<= 1.3x", m[0] <= 1.3)
    for k, rs in sent.items():
        b.results.append(("native", "bytes to user space, " + k, (
            "%s a sample from maps and wake records (%s KB a run, %s stacks read / 1000 "
            "samples); side-band %s a sample (the host's processes)") % (
                b.fmt(b.med_spread([per(r, "maps", "wake") for r in rs]), " B"),
                b.fmt(b.med_spread([(r["maps"] + r["wake"]) / 1000 for r in rs])),
                b.fmt(b.med_spread([1000 * per(r, "stacks") for r in rs])),
                b.fmt(b.med_spread([per(r, "sideband") for r in rs]), " B"))))
    auto = sent["auto, no fp, 40 functions"]
    for k in ("fp, fp kept", "fp, no fp, 40 functions"):
        m = b.med_spread([per(a, "maps", "wake") / per(f, "maps", "wake")
                          for a, f in zip(auto, sent[k])])
        b.results.append(("native", "auto / %s bytes a sample, by round" % k, b.fmt(m)))
    b.verdict("native: bytes to user space a sample vs fp, same stacks", "%.2fx" % m[0],
              "<= 1.0x", m[0] <= 1.0)
    reach = b.med_spread([r[3] for r in got["auto, no fp"]])
    b.verdict("native: samples reaching main (auto)", "%.3f" % reach[0], ">= 0.97",
              reach[0] >= 0.97)
