# SPDX-License-Identifier: GPL-2.0
"""Threads started mid-run: the main thread spins for a third of the time,
then starts two threads that spin in late_worker. Usage: threads.py [SECONDS]"""
import sys
import threading
import time

import truth


def early_main(end):
    n = 0
    truth.record("early_main")
    while time.time() < end:
        n += 1


def late_worker(end):
    n = 0
    truth.record("late_worker")
    while time.time() < end:
        n += 1


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    start = time.time()
    early_main(start + seconds / 3)
    end = start + seconds
    workers = [threading.Thread(target=late_worker, args=(end,)) for _ in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()


if __name__ == "__main__":
    main()
