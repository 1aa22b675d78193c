#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Builds the initramfs that the kernel matrix boots (tests/kernels/run.sh):
# busybox-static, build/profile and build/offcputime, the workloads, every
# shared library they load (from ldd), /init and the checks it runs.
# Debian 12's glibc needs Linux 3.2 or later, which every image here is.
#
# Usage: initramfs.sh BUILD_DIR OUT.cpio.gz
set -eu

[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR OUT.cpio.gz" >&2; exit 2; }
build=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
busybox=$(command -v busybox) || { echo "initramfs: busybox not found" >&2; exit 1; }
# A dynamically linked busybox would need its libraries in the guest too.
if ldd "$busybox" >/dev/null 2>&1; then
	echo "initramfs: $busybox is not static (install busybox-static)" >&2
	exit 1
fi

root=$(mktemp -d "${TMPDIR:-/tmp}/kmatrix-root.XXXXXX")
chmod 0755 "$root"
trap 'rm -rf "$root"' EXIT

# Debian's merged /usr: the loader and libraries are found through /lib64 and /lib.
mkdir -p "$root/bin" "$root/usr/lib64" "$root/usr/lib/x86_64-linux-gnu" "$root/etc" \
	"$root/proc" "$root/sys" "$root/dev" "$root/tmp" "$root/w" "$root/run"
ln -s usr/lib "$root/lib"
ln -s usr/lib64 "$root/lib64"
cp "$busybox" "$root/bin/busybox"
for applet in $("$busybox" --list); do
	[ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done

# add FILE DIR: FILE into the guest's DIR; its libraries (ldd) come along.
# More programs for the guest (an interpreter for rows that profile one,
# with its own files copied beside it) are one call each.
elves=""
add() {
	cp "$1" "$root$2/"
	elves="$elves $root$2/$(basename "$1")"
}

add "$build/profile" /bin
# The native unwinder's object, which bpftool loads alone in its row to show
# the verifier's counts.
mkdir -p "$root/w/bpf"
cp "$build/bpf/profile_native.bpf.o" "$root/w/bpf/"
# The host's bpftool, when it has one, pins the map of the --mntnsmap row.
bpftool=$(command -v bpftool || command -v /usr/sbin/bpftool || true)
[ -z "$bpftool" ] || add "$bpftool" /bin
ln -s profile "$root/bin/offcputime"
for w in "$build"/workloads/*; do
	[ -f "$w" ] || continue
	add "$w" /w
done

# Debian 12's own programs, built without frame pointers, for the stock
# programs rows (checks.sh): in /stock, not /bin, where busybox's applets
# of the same names are symlinks that cp would follow onto busybox. Those
# the host lacks (scripts/install-deps.sh --kernels installs them) are
# named in /stock/missing.
mkdir -p "$root/stock"
: >"$root/stock/missing"
for p in xz gzip bzip2 zstd sqlite3 sort; do
	if [ -x "/usr/bin/$p" ]; then
		add "/usr/bin/$p" /stock
	else
		echo "$p" >>"$root/stock/missing"
	fi
done

# The small Pythons of the Python rows (python.sh, cached in BUILD): each
# in /py/VERSION, its libpython also where the loader looks without the
# RUNPATH of the host's pyenv, whose path the guest lacks; the workloads in
# /w/py; the versions pyenv lacks in /py/missing.
"$here/python.sh" "$build/kernels/python" "$here/../workloads/python" \
	${KM_PYTHONS:-3.12}
mkdir -p "$root/py" "$root/w/py"
cp "$build/kernels/python/missing" "$root/py/missing"
for v in $(cat "$build/kernels/python/ready"); do
	cp -a "$build/kernels/python/$v" "$root/py/$v"
	for lib in "$root/py/$v"/lib/libpython*.so.1.0; do
		ln -s "/py/$v/lib/$(basename "$lib")" "$root/usr/lib/x86_64-linux-gnu/"
		elves="$elves $lib"
	done
done
cp "$here"/../workloads/python/deep.py "$here"/../workloads/python/blocked.py \
	"$here"/../workloads/python/truth.py "$root/w/py/"

# debug_symbols LIB: the symbol table of LIB's separate debug file, found
# by build-id where the host has one (libc6-dbg, a build dependency:
# libc's start_thread, clone3 and __libc_start_call_main, the loader's
# _start), without its DWARF (libc's 4 MB are 0.3 MB): the guest's stacks
# are named as the host's are.
debug_symbols() {
	command -v readelf >/dev/null && command -v objcopy >/dev/null || return 0
	dbg_id=$(readelf -n "$1" 2>/dev/null | sed -n 's/^ *Build ID: \([0-9a-f]*\)$/\1/p' | head -1)
	[ -n "$dbg_id" ] || return 0
	dbg=/usr/lib/debug/.build-id/$(echo "$dbg_id" | cut -c1-2)/$(echo "$dbg_id" | cut -c3-).debug
	[ -f "$dbg" ] || return 0
	mkdir -p "$root$(dirname "$dbg")"
	objcopy --strip-debug "$dbg" "$root$dbg"
}

# Every library that the binaries load, at the path ldd found it under.
# shellcheck disable=SC2086
libs=$(for f in $elves; do ldd "$f" 2>/dev/null || true; done |
	awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | sort -u)
for lib in $libs; do
	case $lib in
	*/workloads/*) continue ;; # the workloads' own libraries are in /w
	*/libpython*) continue ;;  # the small Pythons' are in /py
	esac
	dir=$root$(readlink -f "$(dirname "$lib")")
	mkdir -p "$dir"
	cp -L "$lib" "$dir/$(basename "$lib")"
	debug_symbols "$lib"
done

# su needs the users; nobody is who the unprivileged checks run as.
printf 'root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/tmp:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"

cp "$here/init" "$root/init"
cp "$here/checks.sh" "$root/checks.sh"
chmod 0755 "$root/init"

(cd "$root" && find . | sort | cpio -o -H newc --quiet) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
