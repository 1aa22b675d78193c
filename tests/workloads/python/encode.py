# SPDX-License-Identifier: GPL-2.0
"""A leaf loop in Python (score_leaf) in turn with json.dumps (Indexer.build),
whose encoder is C: the native frames of one and the Python frames of the
other are a few milliseconds apart, so frames read after the sample (not at
it) land on the wrong native stack. The CPU time each took by the thread's
own clock is written to $PROFILE_TRUTH. Usage: encode.py [SECONDS]"""
import json
import sys
import time

import truth

# thread_time from 3.7, process_time from 3.3, clock (CPU time on Linux) on 2.7.
clock = getattr(time, "thread_time", None) or getattr(time, "process_time", None) or time.clock


def score_leaf(ms):
    end = clock() + ms / 1000.0
    n = 0
    while clock() < end:
        n += 1
    return n


class Indexer:
    def __init__(self):
        # Strings, numbers and nesting: the C encoder's own work, no Python callbacks.
        self.doc = [{"id": i, "name": "item-%d" % i, "tags": ["a", "b", str(i)],
                     "score": i * 0.5, "nested": {"k": [i, i + 1, i + 2]}}
                    for i in range(800)]

    def build(self):
        return json.dumps(self.doc)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    times = {"score_leaf": 0.0, "Indexer.build": 0.0}
    ix = Indexer()
    end = time.time() + seconds
    while time.time() < end:
        t0 = clock()
        score_leaf(4)
        t1 = clock()
        ix.build()
        t2 = clock()
        times["score_leaf"] += t1 - t0
        times["Indexer.build"] += t2 - t1
    truth.record_times(times)


if __name__ == "__main__":
    main()
