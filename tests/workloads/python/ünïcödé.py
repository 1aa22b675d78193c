# SPDX-License-Identifier: GPL-2.0
"""Unicode names: a file, a class and functions named outside ASCII.
Usage: ünïcödé.py [SECONDS]"""
import sys
import time

import truth


class Ωmega:
    def méthode(self, end):
        n = 0
        truth.record("méthode")
        while time.time() < end:
            n += 1


def función_ñ(end):
    Ωmega().méthode(end)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    función_ñ(time.time() + seconds)


if __name__ == "__main__":
    main()
