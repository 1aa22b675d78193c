# SPDX-License-Identifier: GPL-2.0
"""Recursion DEPTH deep, then a pure-Python loop at the bottom.
Usage: deep.py [SECONDS] [DEPTH]"""
import sys
import time

import truth


def leaf(end):
    n = 0
    truth.record("leaf")
    while time.time() < end:
        n += 1
    return n


def recurse(depth, end):
    if depth <= 1:
        return leaf(end)
    return recurse(depth - 1, end)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    depth = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    sys.setrecursionlimit(max(1000, depth + 100))
    recurse(depth, time.time() + seconds)


if __name__ == "__main__":
    main()
