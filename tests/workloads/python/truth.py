# SPDX-License-Identifier: GPL-2.0
"""The workloads' own record of what they ran: the Python stack at a point,
as the profiler is to name it (function: co_qualname from 3.11, co_name
before; the code object's file; the line), written once per label to the
file named by $PROFILE_TRUTH as lines "label<TAB>frame;frame;..." (root
first, each frame "name|file|line"). Nothing is written without it."""
import os
import sys
import threading

_seen = set()
_lock = threading.Lock()


def _name(code):
    return getattr(code, "co_qualname", code.co_name)


def stack(skip=1):
    """Root-first frames of the caller (skip frames above it)."""
    f = sys._getframe(skip)
    out = []
    while f is not None:
        out.append((_name(f.f_code), f.f_code.co_filename, f.f_lineno))
        f = f.f_back
    out.reverse()
    return out


def record(label):
    path = os.environ.get("PROFILE_TRUTH")
    if not path:
        return
    with _lock:
        if label in _seen:
            return
        _seen.add(label)
        frames = stack(2)
        line = label + "\t" + ";".join("%s|%s|%d" % f for f in frames) + "\n"
        with open(path, "a") as out:
            out.write(line)


def record_times(times):
    """Per-function CPU seconds the program measured itself: "time<TAB>name<TAB>seconds"."""
    path = os.environ.get("PROFILE_TRUTH")
    if not path:
        return
    with _lock:
        with open(path, "a") as out:
            for name in sorted(times):
                out.write("time\t%s\t%.6f\n" % (name, times[name]))
