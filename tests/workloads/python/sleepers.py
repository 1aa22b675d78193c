# SPDX-License-Identifier: GPL-2.0
"""Many idle threads: THREADS threads wait on an event that is set at the
end, while the main thread wakes every 100 ms (so that a profiler sees the
process). Prints "ready THREADS" once all have started. Usage:
sleepers.py [THREADS [SECONDS]]"""
import sys
import threading
import time


def idle(event):
    event.wait()


def main():
    nr = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    end = time.time() + (float(sys.argv[2]) if len(sys.argv) > 2 else 30.0)
    event = threading.Event()
    threads = [threading.Thread(target=idle, args=(event,)) for _ in range(nr)]
    for t in threads:
        t.start()
    print("ready %d" % nr, flush=True)
    while time.time() < end:
        time.sleep(0.1)
    event.set()
    for t in threads:
        t.join()


if __name__ == "__main__":
    main()
