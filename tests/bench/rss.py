# SPDX-License-Identifier: GPL-2.0
"""
make bench, section rss (issue 45): the peak RSS of a system-wide
`profile -a -F 999 -f SECONDS` (no -p: every CPU; -a only adds bcc's _[k]
annotations) with the bpf backend's default, --unwind auto (.eh_frame
tables of every process compiled into the BPF maps), on a host that is
busy in two ways at once: busy.py's compile loop (compile_loop.sh, one gcc
loop per CPU at nice 0: short-lived processes whose binaries' tables come
and go) and another system-wide profiler sampling beside it
(bpftrace `profile:hz:999 { @[ustack, kstack] = count(); }`, or with
BENCH_RSS_BESIDE=perf `perf record -a -g -F 999`). The same command with
--unwind fp in the same conditions, for comparison; the two one after the
other, in an order alternating by round, each beside a new start of the
other profiler. Target: at most 35 MB in every round (auto).

Reported for each run: peak RSS (GNU time), -v's memory at the end of
sampling, and -v's native unwinding totals (processes, tables, rows, MB in
the maps). Called by bench.py with itself as an argument, like busy.py.
"""
import os
import re
import subprocess
import time

import busy

FREQ = 999
MODES = ("auto", "fp")


def beside(b, seconds, tmp):
    """The other system-wide profiler, for seconds from now; its name and Run."""
    if os.environ.get("BENCH_RSS_BESIDE") == "perf":
        argv = [*b.perf_record(), "-q", "-a", "-g", "-F", str(FREQ), "-o",
                os.path.join(tmp, "rss-beside.data"), "--", "sleep", str(seconds)]
        return "perf record -a -g", b.Run(argv, stdout=subprocess.DEVNULL)
    # busy.py's map size: its default 4096 keys fill on this load.
    prog = "profile:hz:%d { @[ustack, kstack] = count(); } interval:s:%d { exit(); }" % (
        FREQ, seconds)
    return "bpftrace", b.Run(["env", "BPFTRACE_MAP_KEYS_MAX=65536", "bpftrace", "-e", prog],
                             stdout=subprocess.DEVNULL)


def native_totals(err):
    """-v's native unwinding totals, short."""
    m = re.search(r"native unwinding: (\d+) processes, (\d+) tables \((\d+) loaded.*?\), "
                  r"(\d+) rows, (\d+) rules, ([\d.]+) MB in the maps.*?, (\d+) compiles in "
                  r"([\d.]+) ms \((\d+) saved", err)
    if not m:
        return "no native unwinding line"
    return ("%s processes, %s tables (%s loaded), %s rows, %s rules, %s MB in the maps, "
            "%s compiles in %s ms (%s saved by the grace)" % m.groups())


def one(b, mode, seconds, tmp):
    name, other = beside(b, seconds + 8, tmp)
    time.sleep(4)  # attached (bpftrace compiles first)
    r = b.Run([b.PROFILE, "-a", "-v", "--unwind", mode, "-F", str(FREQ), "-f", str(seconds)],
              stdout=subprocess.DEVNULL).wait()
    other.wait()
    data = os.path.join(tmp, "rss-beside.data")
    if os.path.exists(data):
        os.unlink(data)
    x = busy.parse_ours(r)
    x.update(rss=r.rss_kb / 1024.0, cpu=r.cpu, beside=name, beside_rss=other.rss_kb / 1024.0,
             native=native_totals(r.err) if mode == "auto" else "")
    if not x["samples"]:
        b.log("bench: rss, %s: %s" % (mode, r.err.strip()[-500:]))
    return x


def run(b, tmp):
    seconds = 8 if b.QUICK else 20
    b.log("bench: rss, %d rounds of %d s x %s beside a compile loop and another profiler" % (
        b.REPS, seconds, ", ".join(MODES)))
    load = busy.start_compile_loop(tmp)
    got = {m: [] for m in MODES}
    try:
        time.sleep(3)  # the loops are compiling
        for rep in range(b.REPS):
            for mode in (MODES if rep % 2 == 0 else MODES[::-1]):
                x = one(b, mode, seconds, tmp)
                got[mode].append(x)
                b.log("bench: rss round %d %s: peak RSS %.1f MB, %.2f s CPU, %d samples, "
                      "%d lost; beside %s (%.1f MB)" % (rep, mode, x["rss"], x["cpu"],
                                                         x["samples"], x["lost"], x["beside"],
                                                         x["beside_rss"]))
    finally:
        busy.stop_compile_loop(load)
    for mode in MODES:
        xs = got[mode]
        b.results.append(("rss", "profile --unwind %s" % mode, "peak RSS %s, CPU %s s, %s "
                          "samples, lost %s; beside %s" % (
                              b.fmt(b.med_spread([x["rss"] for x in xs]), " MB"),
                              b.fmt(b.med_spread([x["cpu"] for x in xs])),
                              b.fmt(b.med_spread([x["samples"] for x in xs])),
                              b.fmt(b.med_spread([x["lost"] for x in xs])), xs[0]["beside"])))
    b.results.append(("rss", "auto / fp peak RSS, by round", b.fmt(b.med_spread(
        [a["rss"] / f["rss"] for a, f in zip(got["auto"], got["fp"]) if f["rss"]]))))
    for mode in MODES:
        for i, x in enumerate(got[mode]):
            b.results.append(("rss, -v by round", "%s, round %d" % (mode, i + 1),
                              "peak RSS %.1f MB; %s%s" % (
                                  x["rss"], x["memory"],
                                  "; " + x["native"] if x["native"] else "")))
    peak = max(x["rss"] for x in got["auto"])
    b.verdict("rss: auto beside a compile loop and %s, every round" % got["auto"][0]["beside"],
              "%.1f MB" % peak, "<= 35 MB", peak <= 35)
