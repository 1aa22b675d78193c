# SPDX-License-Identifier: GPL-2.0
"""A child process that spins for a second and exits while its parent goes
on: the child's Python frames must keep their names. Usage: exits.py [SECONDS]
[CHILD_SECONDS] (the child's time, a third of SECONDS up to a second by default)"""
import os
import sys
import time

import truth


def child_work(end):
    n = 0
    truth.record("child_work")
    while time.time() < end:
        n += 1


def parent_work(end):
    n = 0
    truth.record("parent_work")
    while time.time() < end:
        n += 1


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    child = float(sys.argv[2]) if len(sys.argv) > 2 else min(1.0, seconds / 3)
    start = time.time()
    pid = os.fork()
    if pid == 0:
        child_work(start + child)
        os._exit(0)
    parent_work(start + seconds)
    os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
