#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The Node.js of the kernel matrix's Node rows (issue 48), as a second
# cpio archive that run.sh appends to the initramfs of the guests KM_NODE
# names only (the kernel unpacks archives laid end to end, each
# compressed): the host's node without its DWARF (99 MB with it, 96 MB and
# 39 MB gzipped without; the v8dbg_ constants and symbols stay), the
# libraries it loads, and tests/workloads/node/render.js in /w/node. Cached
# in OUT (rebuilt when node or render.js is newer). Where the host has no
# node, OUT is an empty archive and the rows say n/a.
#
# Usage: node.sh OUT.cpio.gz WORKLOADS_DIR
# Prints one line: what it has and its size.
set -eu

[ $# -eq 2 ] || { echo "usage: $0 OUT.cpio.gz WORKLOADS_DIR" >&2; exit 2; }
out=$1
work=$2
node=${KM_NODE_BIN:-$(command -v node || true)}

if [ -n "$node" ] && [ -f "$out" ] && [ "$out" -nt "$node" ] && [ "$out" -nt "$work/render.js" ]; then
	echo "node.sh: $out kept ($(du -k "$out" | cut -f1) KiB)"
	exit 0
fi

root=$(mktemp -d "${TMPDIR:-/tmp}/kmatrix-node.XXXXXX")
chmod 0755 "$root"
trap 'rm -rf "$root"' EXIT

if [ -z "$node" ] || ! command -v objcopy >/dev/null 2>&1; then
	# An archive of one directory: the guest finds no /node/node (n/a rows).
	mkdir -p "$root/node"
	echo "${node:+objcopy missing}${node:-no node on the host}" >"$root/node/missing"
else
	node=$(readlink -f "$node")
	mkdir -p "$root/node" "$root/w/node"
	objcopy --strip-debug "$node" "$root/node/node"
	cp "$work/render.js" "$root/w/node/"
	# Its libraries at the paths ldd found them under (the base archive's own
	# copies of the same files are the same bytes).
	ldd "$node" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
		while read -r lib; do
			dir=$root$(readlink -f "$(dirname "$lib")")
			mkdir -p "$dir"
			cp -L "$lib" "$dir/$(basename "$lib")"
		done
	"$root/node/node" --version >"$root/node/version"
fi
(cd "$root" && find . -mindepth 1 | sort | cpio -o -H newc --quiet) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
echo "node.sh: $(cat "$root/node/version" 2>/dev/null || cat "$root/node/missing"): $out ($(du -k "$out" | cut -f1) KiB)"
