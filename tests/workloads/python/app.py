# SPDX-License-Identifier: GPL-2.0
"""A small service: two threads handle requests; each request parses its
data in a pure-Python loop and compresses it with zlib (which releases the
GIL). Usage: app.py [SECONDS]"""
import sys
import threading
import time
import zlib

import truth


def parse(data):
    total = 0
    for b in data:
        total = (total * 31 + b) % 1000003
    truth.record("parse")
    return total


def compress_block(data):
    out = zlib.compress(data, 9)
    truth.record("compress_block")
    return out


def handle_request(data):
    parse(data)
    compress_block(data)


def serve(seconds):
    data = bytes(bytearray(range(256))) * 48
    end = time.time() + seconds
    while time.time() < end:
        handle_request(data)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    worker = threading.Thread(target=serve, args=(seconds,))
    worker.start()
    serve(seconds)
    worker.join()


if __name__ == "__main__":
    main()
