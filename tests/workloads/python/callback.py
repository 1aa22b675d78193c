# SPDX-License-Identifier: GPL-2.0
"""Python -> C -> Python: sorted() calling a key function that spins.
Usage: callback.py [SECONDS]"""
import sys
import time

import truth


def slow(x):
    n = 0
    for _ in range(2000):
        n += x
    truth.record("slow")
    return n


def outer(data):
    return sorted(data, key=lambda x: slow(x))


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    end = time.time() + seconds
    data = list(range(50, 0, -1))
    while time.time() < end:
        outer(data)


if __name__ == "__main__":
    main()
