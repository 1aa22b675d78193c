# SPDX-License-Identifier: GPL-2.0
"""naps.py under a name of its own: the process's comm set to COMM (the
folded lines of a system-wide run start with it), then "ready" printed and
naps.py's loop of 1 ms naps and 3 ms spins run. Usage: napsvc.py COMM [SECONDS]"""
import ctypes
import sys

import naps

PR_SET_NAME = 15


def main():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NAME, sys.argv[1].encode(), 0, 0, 0):
        sys.exit("prctl: errno %d" % ctypes.get_errno())
    print("ready", flush=True)
    sys.argv[1:] = sys.argv[2:]
    naps.main()


if __name__ == "__main__":
    main()
