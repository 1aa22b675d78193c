# SPDX-License-Identifier: GPL-2.0
"""Several workloads one after another in this one process, each as its own
__main__ with its own arguments, each recording its truth into its own file:
one interpreter start for many stacks. Usage: inturn.py DIR SPEC... where
SPEC is NAME:SECONDS[:ARG...] (deep:0.3:200), run as NAME.py SECONDS ARG...
with $PROFILE_TRUTH set to DIR/NAME[ARG...].truth (deep200.truth)."""
import os
import sys

import truth

here = os.path.dirname(os.path.abspath(__file__))
# Every workload's code and globals, kept: a code object freed and its
# address reused by the next workload's before the profiler named it would
# name the old samples by the new code (reuse.py is the test of that).
kept = []


def run(out, spec):
    parts = spec.split(":")
    name, args = parts[0], parts[1:]
    os.environ["PROFILE_TRUTH"] = os.path.join(out, name + "".join(args[1:]) + ".truth")
    truth._seen.clear()
    path = os.path.join(here, name + ".py")
    with open(path, "rb") as f:
        code = compile(f.read(), path, "exec")
    scope = {"__name__": "__main__", "__file__": path}
    kept.append((code, scope))
    sys.argv[:] = [path] + args
    exec(code, scope)


def main():
    out, specs = sys.argv[1], sys.argv[2:]
    for spec in specs:
        run(out, spec)


if __name__ == "__main__":
    main()
