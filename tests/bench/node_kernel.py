# SPDX-License-Identifier: GPL-2.0
"""
make bench, section node-kernel (issue 48): what a sample of a 50-deep
JavaScript stack costs in the kernel on the bpf backend's default
(--unwind auto: a Node process's samples are stack copies, whose frames
are walked in user space), against a 50-deep native recursion that keeps
frame pointers under --unwind fp: in-kernel ns per sample (run_time_ns /
run_cnt of the profiler's counting program, from its fdinfo, BPF stats
held on; a tail call's time is its caller's). Target: at most 2x.
Two workload processes, one per CPU, as in the native section; rounds
interleaved. The machine's node (PATH).
"""
import os
import shutil
import signal
import subprocess
import time

FREQ = 999
DEPTH = 50


def one_run(b, mode, argv, seconds):
    """(ns per sample, samples whose stack holds the recursion DEPTH deep) of one run."""
    work = [subprocess.Popen(argv + [str(seconds + 6), str(DEPTH)], stdout=subprocess.DEVNULL)
            for _ in range(2)]
    time.sleep(0.3)
    run, ns = __import__("native").profiled_ns(b, mode, [p.pid for p in work], seconds)
    for p in work:
        p.send_signal(signal.SIGKILL)
        p.wait()
    deep = 0
    for line in run.out.splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        if count.isdigit() and max(sum(f.startswith(n) for f in frames)
                                   for n in ("down (", "deep_recurse")) >= DEPTH - 1:
            deep += int(count)
    return ns, deep


def run(b, tmp):
    node = shutil.which("node")
    if not node:
        b.results.append(("node-kernel", "in-kernel ns", "not measured: no node on PATH"))
        return
    js = [node, os.path.join(b.ROOT, "tests", "workloads", "node", "deep.js")]
    fp = [os.path.join(b.WORK, "deep"), "spin"]
    cases = {"node, auto (copies)": ("auto", js), "native fp, fp": ("fp", fp)}
    got = {k: [] for k in cases}
    b.log("bench: node-kernel: %d-deep stacks at %d Hz, %d rounds of %d s"
          % (DEPTH, FREQ, b.REPS, b.DURATION))
    with b.BpfStats():
        for rep in range(b.REPS):
            order = list(cases)
            for k in order[rep % 2:] + order[:rep % 2]:
                r = one_run(b, *cases[k], b.DURATION)
                got[k].append(r)
                b.log("bench: node-kernel round %d %s: %.0f ns, %d deep samples" % (rep, k, *r))
    for k in cases:
        b.results.append(("node-kernel", k, "%s in kernel, %s samples %d deep" % (
            b.fmt(b.med_spread([r[0] for r in got[k]]), " ns"),
            b.fmt(b.med_spread([r[1] for r in got[k]])), DEPTH)))
    ratios = [a[0] / f[0] for a, f in zip(got["node, auto (copies)"], got["native fp, fp"])
              if f[0] > 0]
    m = b.med_spread(ratios)
    b.results.append(("node-kernel", "node / native fp ns, by round", b.fmt(m)))
    b.verdict("node: in-kernel ns, 50-deep JavaScript vs native fp", "%.2fx" % m[0], "<= 2x",
              m[0] <= 2.0)
