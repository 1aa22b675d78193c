# SPDX-License-Identifier: GPL-2.0
"""Three functions taking turns as shares.py's do (5:3:2 ms of their thread's
CPU time), each spending nearly all of it in a C function of its own
(zlib.crc32, zlib.adler32, bytes.translate on 64 KiB), so the native leaf
frame of a sample tells which Python function ran at that instant: a
Python read made later (the perf backend's) raced the program when its
innermost Python frame is another one. Usage: race.py [SECONDS]"""
import sys
import time
import zlib

clock = getattr(time, "thread_time", time.process_time)
BUF = bytes(range(256)) * 256
TABLE = bytes(range(255, -1, -1))


def race_crc(ms):
    end = clock() + ms / 1000.0
    while clock() < end:
        zlib.crc32(BUF)


def race_adler(ms):
    end = clock() + ms / 1000.0
    while clock() < end:
        zlib.adler32(BUF)


def race_translate(ms):
    end = clock() + ms / 1000.0
    while clock() < end:
        BUF.translate(TABLE)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    end = time.time() + seconds
    while time.time() < end:
        race_crc(5)
        race_adler(3)
        race_translate(2)


if __name__ == "__main__":
    main()
