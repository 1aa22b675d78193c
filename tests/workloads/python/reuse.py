# SPDX-License-Identifier: GPL-2.0
"""Code objects freed and their memory reused: run_a and run_b each compile
a function of their own (spin_a, spin_b: code objects of one size), spin in
it for a few milliseconds and drop it, in turn, so that each new code
object is likely to take the place of the one freed just before. A sample
of run_a's stack names spin_a under it, never spin_b. Usage: reuse.py [SECONDS]"""
import sys
import time

SOURCE = """
def spin_%s(end):
    n = 0
    while time.time() < end:
        n += 1
    return n
"""


def make(letter):
    scope = {"time": time}
    exec(compile(SOURCE % letter, "made.py", "exec"), scope)
    return scope["spin_" + letter]


def run_a(ms):
    return make("a")(time.time() + ms / 1000.0)


def run_b(ms):
    return make("b")(time.time() + ms / 1000.0)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    end = time.time() + seconds
    while time.time() < end:
        run_a(20)
        run_b(20)


if __name__ == "__main__":
    main()
