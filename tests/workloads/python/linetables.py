# SPDX-License-Identifier: GPL-2.0
"""A hostile process (issue 46 row 2): COUNT code objects, copies of one
function (CodeType.replace), sharing one line table padded to SIZE bytes,
or, with "distinct", each its own table of that size. Each runs: chains
of 120 of them, each calling the next, the last spinning for 5 ms, in
turn over all of them, so that a profile names every one. Prints "ready"
once they are made. Usage: linetables.py [SECONDS] [COUNT] [SIZE] [distinct]"""
import sys
import time

CHAIN = 120
HOPS = []


def hop(i, left, stop):
    if left:
        return HOPS[i + 1](i + 1, left - 1, stop)
    while time.perf_counter() < stop:
        pass
    return i


def padded(code, size, salt):
    """code's line table, then entries that say nothing, to size bytes; a
    salt other than 0 written in the last 16 of them makes a distinct table."""
    if sys.version_info >= (3, 11):
        table, pad = code.co_linetable, [0xf8, 0xf9]  # "no location", 1 or 2 units
    elif sys.version_info >= (3, 10):
        table, pad = code.co_linetable, [0, 1]  # (0, 0) and (0, 1) pairs: past the code
    else:
        table, pad = code.co_lnotab, [0, 0]
    table += bytes(pad[:1]) * (size - len(table) - 16) + bytes(pad[salt >> k & 1]
                                                               for k in range(16))
    if sys.version_info >= (3, 10):
        return code.replace(co_linetable=table)
    return code.replace(co_lnotab=table)


def make(count, size, distinct):
    base = hop.__code__
    shared = padded(base, size, 0)
    for i in range(count):
        code = padded(base, size, i + 1) if distinct else shared
        code = code.replace(co_name="hop%d" % i)
        HOPS.append(type(hop)(code, globals(), "hop%d" % i))
    # The last of a chain calls past the end: one more, never called.
    HOPS.append(HOPS[0])


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 8192
    size = int(sys.argv[3]) if len(sys.argv) > 3 else 65000
    distinct = len(sys.argv) > 4 and sys.argv[4] == "distinct"
    sys.setrecursionlimit(10000)
    make(count, size, distinct)
    print("ready", flush=True)
    end = time.time() + seconds
    while time.time() < end:
        for first in range(0, count, CHAIN + 1):
            left = min(CHAIN, count - 1 - first)
            HOPS[first](first, left, time.perf_counter() + 0.005)


if __name__ == "__main__":
    main()
