# SPDX-License-Identifier: GPL-2.0
"""Recursion DEPTH deep, then a pure-Python loop at the bottom. With
"chain", DEPTH distinct functions instead (chain1 calls chain2 ... calls
chain_leaf): every frame its own code object, as in a service's call path.
Usage: deep.py [SECONDS] [DEPTH] [chain]"""
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


def chain_leaf(end):
    """leaf's loop under its own name: a profile of both tells them apart."""
    n = 0
    truth.record("chain_leaf")
    while time.time() < end:
        n += 1
    return n


def make_chain(depth):
    """chain1 .. chainDEPTH, each calling the next; the last calls chain_leaf."""
    names = {"chain_leaf": chain_leaf}
    for i in range(depth, 0, -1):
        callee = "chain%d" % (i + 1) if i < depth else "chain_leaf"
        exec("def chain%d(end):\n    return %s(end)\n" % (i, callee), names)
    return names["chain1"]


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    depth = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    sys.setrecursionlimit(max(1000, depth + 100))
    if len(sys.argv) > 3 and sys.argv[3] == "chain":
        make_chain(depth)(time.time() + seconds)
    else:
        recurse(depth, time.time() + seconds)


if __name__ == "__main__":
    main()
