#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Installs the Debian 12 packages that building and testing `profile` need.
# Idempotent: does nothing when every package is already installed.
set -eu

PACKAGES="build-essential pkg-config clang llvm libbpf-dev libelf-dev zlib1g-dev linux-perf
libunwind-dev check bpftool libc6-dbg binutils procps util-linux python3
protobuf-c-compiler libprotobuf-c-dev chromium"

# The tests run pprof-format and playwright-core with node; Debian's if none is here.
command -v node >/dev/null 2>&1 || PACKAGES="$PACKAGES nodejs npm"

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
