# SPDX-License-Identifier: GPL-2.0
"""A generator consumed in a loop, and an asyncio coroutine awaiting another.
Usage: genasync.py [SECONDS]"""
import asyncio
import sys
import time

import truth


def produce(count):
    for i in range(count):
        n = 0
        for j in range(300):
            n += i * j
        truth.record("produce")
        yield n


def consume():
    return sum(produce(200))


async def compute():
    n = 0
    for j in range(20000):
        n += j
    truth.record("compute")
    return n


async def worker(end):
    while time.time() < end:
        await compute()
        consume()


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    loop = asyncio.new_event_loop()
    loop.run_until_complete(worker(time.time() + seconds))
    loop.close()


if __name__ == "__main__":
    main()
