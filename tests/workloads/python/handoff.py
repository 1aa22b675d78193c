# SPDX-License-Identifier: GPL-2.0
"""Off-CPU waits of microseconds: two threads hand an item back and forth
through two queues, each waiting while the other runs. Prints the round
trips made. Usage: handoff.py [SECONDS]"""
import queue
import sys
import threading
import time


def pong(inbox, outbox):
    while True:
        item = inbox.get()
        if item is None:
            return
        outbox.put(item)


def main():
    end = time.time() + (float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
    to_pong, to_ping = queue.Queue(), queue.Queue()
    thread = threading.Thread(target=pong, args=(to_pong, to_ping))
    thread.start()
    trips = 0
    while time.time() < end:
        to_pong.put(trips)
        to_ping.get()
        trips += 1
    to_pong.put(None)
    thread.join()
    print("handoff: %d round trips" % trips)


if __name__ == "__main__":
    main()
