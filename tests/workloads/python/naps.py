# SPDX-License-Identifier: GPL-2.0
"""Off-CPU waits shorter than a drain: nap() sleeps 1 ms, then spin() runs
3 ms on the CPU, in turn. Usage: naps.py [SECONDS]"""
import sys
import time


def spin():
    end = time.perf_counter() + 0.003
    while time.perf_counter() < end:
        pass


def nap():
    time.sleep(0.001)


def main():
    end = time.time() + (float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
    while time.time() < end:
        nap()
        spin()


if __name__ == "__main__":
    main()
