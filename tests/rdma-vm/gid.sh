# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# Sourced by the RDMA tests, in the one-guest rig (tests/iser-interop) and
# in the two-guest one (pair-lib.sh).

# rdma_gid_index DEV IPV4: the GID index of IPV4's RoCEv2 GID on port 1 of
# DEV, for verbs tools that take one (-g / -x); rxe lists the IPv4-mapped
# GID after the link-local one. Prints 1 when none matches.
rdma_gid_index() {
	local f want a b c d
	IFS=. read -r a b c d <<<"$2"
	want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$a" "$b" "$c" "$d")
	for f in /sys/class/infiniband/"$1"/ports/1/gids/*; do
		[ "$(cat "$f" 2>/dev/null)" = "$want" ] && { echo "${f##*/}"; return 0; }
	done
	echo 1
}
