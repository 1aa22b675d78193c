#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The small Pythons of the kernel matrix's Python rows: for each version
# asked, pyenv's interpreter (its executable and libpython, --enable-shared
# builds) without debug info, and of its standard library only the files
# that `python -S -E` loads to run tests/workloads/python/deep.py and
# blocked.py, found by running them here with -v. Cached in OUT/VERSION
# (rebuilt when the pyenv install is newer) and listed in OUT/ready; a
# version that pyenv lacks gets a line "MINOR|why" in OUT/missing, for the
# checks' n/a rows.
#
# Usage: python.sh OUT WORKLOADS_DIR MINOR...   (MINOR: 3.12, or 3.12.1)
# Prints one line per version: what it has and its size.
set -eu

[ $# -ge 2 ] || { echo "usage: $0 OUT WORKLOADS_DIR MINOR..." >&2; exit 2; }
out=$1
work=$2
shift 2
mkdir -p "$out"
: >"$out/missing"
: >"$out/ready"

if command -v pyenv >/dev/null 2>&1; then
	pyroot=$(pyenv root)
else
	pyroot=${PYENV_ROOT:-$HOME/.pyenv}
fi

# prefix_of VERSION: the pyenv install of VERSION (exact, else its newest
# release X.Y.Z; not -dev builds, not free-threaded 't' ones).
prefix_of() {
	if [ -d "$pyroot/versions/$1" ]; then
		echo "$pyroot/versions/$1"
		return
	fi
	ls -d "$pyroot/versions/$1".* 2>/dev/null | grep -E '/[0-9]+\.[0-9]+\.[0-9]+$' | sort -V | tail -1
}

# The files of PREFIX's standard library that the workloads load: python -v
# names each code object it runs ("code object from 'X'", X a .py or a
# __pycache__ .pyc) and each extension module. Printed as paths relative to
# PREFIX/lib, sources for code objects.
loaded() {
	local prefix=$1 minor=$2 tmp
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/kmatrix-py.XXXXXX")
	cp "$work/deep.py" "$work/blocked.py" "$work/truth.py" "$tmp/"
	for w in "deep.py 0.01 3" "blocked.py 0.01"; do
		# shellcheck disable=SC2086
		(cd "$tmp" && env -i "$prefix/bin/python$minor" -S -E -B -v $w 2>&1 >/dev/null) ||
			{ rm -rf "$tmp"; return 1; }
	done | sed -n -e "s/^# code object from '*\([^']*\)'*$/\1/p" \
		-e "s/^# extension module .* loaded from '\([^']*\)'$/\1/p" |
		sed -e 's#/__pycache__/\([^/.]*\)\.[^/]*\.pyc$#/\1.py#' |
		sed -n "s#^$prefix/lib/##p" | sort -u
	rm -rf "$tmp"
}

build() {
	local prefix=$1 minor=$2 dst=$3 lib=$4 f
	rm -rf "$dst.tmp"
	mkdir -p "$dst.tmp/bin" "$dst.tmp/lib/python$minor/lib-dynload"
	strip --strip-debug -o "$dst.tmp/bin/python$minor" "$prefix/bin/python$minor"
	strip --strip-debug -o "$dst.tmp/lib/$lib" "$prefix/lib/$lib"
	# os.py and lib-dynload are the landmarks by which Python finds its
	# prefix; the encodings of the C locale and UTF-8 mode come too.
	files=$(loaded "$prefix" "$minor") || return 1
	for f in $files "python$minor/os.py" "python$minor/encodings/ascii.py" \
		"python$minor/encodings/latin_1.py" "python$minor/encodings/utf_8.py"; do
		[ -f "$prefix/lib/$f" ] || continue
		mkdir -p "$dst.tmp/lib/$(dirname "$f")"
		cp -p "$prefix/lib/$f" "$dst.tmp/lib/$f"
	done
	# Compiled here, so that the guest does not compile them at every start
	# (the .pyc records the source's mtime, which cpio keeps).
	env -i "$prefix/bin/python$minor" -S -E -m compileall -q "$dst.tmp/lib/python$minor" \
		>/dev/null || return 1
	rm -rf "$dst"
	mv "$dst.tmp" "$dst"
}

for v in "$@"; do
	prefix=$(prefix_of "$v")
	if [ -z "$prefix" ]; then
		echo "$v|no Python $v in pyenv ($pyroot/versions)" >>"$out/missing"
		echo "check-kernels: python $v: n/a, no Python $v in pyenv ($pyroot/versions)"
		continue
	fi
	full=$(basename "$prefix")
	minor=${full%.*}
	# libpython3.6m and 3.7m: the ABI flag of pymalloc builds, until 3.8.
	lib=libpython$minor.so.1.0
	[ -f "$prefix/lib/$lib" ] || lib=libpython${minor}m.so.1.0
	if [ ! -x "$prefix/bin/python$minor" ] || [ ! -f "$prefix/lib/$lib" ]; then
		why="pyenv's $full is not an --enable-shared build (no $prefix/lib/libpython$minor.so.1.0)"
		echo "$v|$why" >>"$out/missing"
		echo "check-kernels: python $v: n/a, $why"
		continue
	fi
	dst=$out/$full
	if [ ! -f "$dst/lib/$lib" ] || [ "$prefix/lib/$lib" -nt "$dst/lib/$lib" ]; then
		if ! build "$prefix" "$minor" "$dst" "$lib"; then
			rm -rf "$dst.tmp"
			echo "$v|pyenv's $full did not run the workloads here" >>"$out/missing"
			echo "check-kernels: python $v: n/a, pyenv's $full did not run the workloads here"
			continue
		fi
	fi
	echo "$full" >>"$out/ready"
	echo "check-kernels: python $full: $(du -sk "$dst" | cut -f1) KiB ($(find "$dst/lib/python$minor" -name '*.py' | wc -l) .py files)"
done
