# SPDX-License-Identifier: GPL-2.0
"""Off-CPU: three waits in time.sleep one after another, a third of the
run each; the last one ends with the process. Usage: waits.py [SECONDS]"""
import sys
import time

import truth


def first_wait(seconds):
    truth.record("first_wait")
    time.sleep(seconds)


def second_wait(seconds):
    truth.record("second_wait")
    time.sleep(seconds)


def last_wait(seconds):
    truth.record("last_wait")
    time.sleep(seconds)


def main():
    third = (float(sys.argv[1]) if len(sys.argv) > 1 else 0.75) / 3
    first_wait(third)
    second_wait(third)
    last_wait(third)


if __name__ == "__main__":
    main()
