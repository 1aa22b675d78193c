# SPDX-License-Identifier: GPL-2.0
"""Off-CPU: one thread sleeps in time.sleep, another waits on a lock the
main thread holds. Usage: blocked.py [SECONDS]"""
import sys
import threading
import time

import truth


def waits_in_sleep(end):
    truth.record("waits_in_sleep")
    while time.time() < end:
        time.sleep(0.01)


def waits_on_lock(lock, end):
    truth.record("waits_on_lock")
    while time.time() < end:
        if lock.acquire(timeout=0.05):
            lock.release()


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    end = time.time() + seconds
    lock = threading.Lock()
    lock.acquire()
    threads = [threading.Thread(target=waits_in_sleep, args=(end,)),
               threading.Thread(target=waits_on_lock, args=(lock, end))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lock.release()


if __name__ == "__main__":
    main()
