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


def one_run(b, mode, argv, seconds):
    """(ns per sample, profiler CPU s, samples, share reaching main) of one run."""
    work = start_workloads(b, argv + [str(seconds + 6), str(DEPTH)])
    pids = ",".join(str(p.pid) for p in work)
    run = b.Run([b.PROFILE, "--backend", "bpf", "--unwind", mode, "-v", "-f", "-F", str(FREQ),
                 "-p", pids, str(seconds + 2)])
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
    for p in work:
        p.send_signal(signal.SIGKILL)
        p.wait()
    reach, total = reach_main(run.out)
    ns = sorted(windows)[len(windows) // 2] if windows else float("nan")
    return ns, run.cpu, total, (reach / total if total else float("nan")), run.err


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
    reach = b.med_spread([r[3] for r in got["auto, no fp"]])
    b.verdict("native: samples reaching main (auto)", "%.3f" % reach[0], ">= 0.97",
              reach[0] >= 0.97)
