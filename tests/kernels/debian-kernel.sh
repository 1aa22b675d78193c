#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Debian 12's own kernel for the kernel matrix: the image of the package
# that linux-image-cloud-amd64 depends on (6.1, with BTF), as
# DIR/linux-VERSION-debian/bzImage and its config. Fetched with apt-get
# download and unpacked with dpkg-deb: nothing is installed on the host,
# nothing goes to /boot. Kept in DIR until Debian has a newer one. No
# modules: its config builds in all that the guest uses (serial console,
# devtmpfs, initramfs, BPF, perf events, cgroups, tracing).
#
# Usage: debian-kernel.sh DIR
set -eu

[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$1
meta=linux-image-cloud-amd64

# The versioned package the meta-package depends on now, and its version.
resolve() {
	pkg=$(apt-cache depends "$meta" 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -1)
	ver=
	[ -z "$pkg" ] ||
		ver=$(apt-cache show --no-all-versions "$pkg" 2>/dev/null | sed -n 's/^Version: //p')
	[ -n "$ver" ]
}

fetch() {
	rm -rf "$tmp"
	mkdir -p "$tmp"
	(cd "$tmp" && apt-get download -qq "$pkg" >/dev/null 2>&1) || return 1
	dpkg-deb --fsys-tarfile "$tmp"/*.deb | tar -x -C "$tmp" --wildcards './boot/*'
}

if ! resolve; then
	apt-get update -qq >/dev/null 2>&1 || true
	resolve || { echo "debian-kernel: apt knows no $meta" >&2; exit 1; }
fi
# 6.1.192-2: the column is 6.1.192-debian.
name=linux-${ver%%-*}-debian
if [ -f "$dir/$name/bzImage" ]; then
	echo "check-kernels: Debian's kernel $pkg $ver (kept in $dir)"
	exit 0
fi
tmp=$dir/.fetch
mkdir -p "$dir"
if ! fetch; then
	# Lists older than the archive: the version they name is gone.
	apt-get update -qq >/dev/null 2>&1 || true
	resolve && fetch || { echo "debian-kernel: apt-get download $pkg failed" >&2; exit 1; }
	name=linux-${ver%%-*}-debian
fi
rm -rf "$dir"/linux-*-debian
mkdir -p "$dir/$name"
mv "$tmp"/boot/vmlinuz-* "$dir/$name/bzImage"
mv "$tmp"/boot/config-* "$dir/$name/config"
rm -rf "$tmp"
echo "check-kernels: Debian's kernel $pkg $ver fetched into $dir/$name"
