#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Installs the Debian 12 packages that building and testing `profile` need.
# Idempotent: does nothing when every package is already installed.
#
# Usage: install-deps.sh [--demo | --kernels] [--list]
#   --demo     only what building the binary and the demo workload needs
#              (`make demo`): no test tools, no browser
#   --kernels  the build's and what `make check-kernels` boots old kernels
#              with: qemu, a static busybox and cpio for the initramfs,
#              the stock programs its rows profile
#   --list  print the packages of the chosen set, install nothing
set -eu

# Building build/profile and the workloads (clang), symbolizing libc.
BUILD_PACKAGES="build-essential pkg-config clang libbpf-dev libelf-dev libdw-dev zlib1g-dev
libunwind-dev bpftool libc6-dbg protobuf-c-compiler libprotobuf-c-dev"
# `make check`: the test runner, perf to compare with, llvm-objdump for the
# 4.9 check, chromium for the SVG checks, man and bash for the docs checks,
# real programs for the fidelity suite (golang-go: a stripped Go program, gofmt,
# and go to build one; openssl: libcrypto's SHA-512, code without a symbol),
# gdb for the Python layouts' check against DWARF.
TEST_PACKAGES="llvm linux-perf check binutils procps util-linux python3 chromium man-db
bash-completion gzip xz-utils sqlite3 findutils golang-go gdb libpython3.11 openssl"
# `make check-kernels` (tests/kernels/): only when kernel images are there;
# Debian's own xz, bzip2, zstd and sqlite3 (and gzip, coreutils' sort) are
# copied into the guest for its stock programs rows.
KERNEL_PACKAGES="qemu-system-x86 busybox-static cpio gzip xz-utils bzip2 zstd sqlite3"

demo=0
kernels=0
list=0
for arg in "$@"; do
	case $arg in
	--demo) demo=1 ;;
	--kernels) kernels=1 ;;
	--list) list=1 ;;
	*)
		echo "usage: $0 [--demo | --kernels] [--list]" >&2
		exit 2
		;;
	esac
done

PACKAGES=$BUILD_PACKAGES
if [ $kernels -eq 1 ]; then
	PACKAGES="$PACKAGES $KERNEL_PACKAGES"
elif [ $demo -eq 0 ]; then
	PACKAGES="$PACKAGES $TEST_PACKAGES"
	# The tests run pprof-format and playwright-core with node; Debian's if none is here.
	command -v node >/dev/null 2>&1 || PACKAGES="$PACKAGES nodejs npm"
fi
if [ $list -eq 1 ]; then
	# shellcheck disable=SC2086
	printf '%s\n' $PACKAGES
	exit 0
fi

missing=""
for p in $PACKAGES; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages:$missing (run as root to install them)" >&2
	exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
