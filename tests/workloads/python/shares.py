# SPDX-License-Identifier: GPL-2.0
"""Three functions that each run a known share of the CPU time (5:3:2 by
their own thread CPU clock), in pure-Python loops with no calls below them;
the time each really got is written to $PROFILE_TRUTH. Usage: shares.py [SECONDS]"""
import sys
import time

import truth

# thread_time from 3.7, process_time from 3.3, clock (CPU time on Linux) on 2.7.
clock = getattr(time, "thread_time", None) or getattr(time, "process_time", None) or time.clock


def spin(ms):
    end = clock() + ms / 1000.0
    n = 0
    while clock() < end:
        n += 1
    return n


def share_a():
    end = clock() + 0.005
    n = 0
    while clock() < end:
        n += 1
    return n


def share_b():
    end = clock() + 0.003
    n = 0
    while clock() < end:
        n += 1
    return n


def share_c():
    end = clock() + 0.002
    n = 0
    while clock() < end:
        n += 1
    return n


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    times = {"share_a": 0.0, "share_b": 0.0, "share_c": 0.0}
    fns = [("share_a", share_a), ("share_b", share_b), ("share_c", share_c)]
    end = time.time() + seconds
    while time.time() < end:
        for name, fn in fns:
            t0 = clock()
            fn()
            times[name] += clock() - t0
    truth.record_times(times)


if __name__ == "__main__":
    main()
