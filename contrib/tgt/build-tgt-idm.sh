#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Fetch Debian's tgt source, apply contrib/tgt/patches (GPL-2.0-only, like
# tgt), install libidm into a prefix under the work dir and build tgtd and
# tgtadm on it; optionally start tgtd-on-libidm with one file-backed LUN.
#
# Usage: build-tgt-idm.sh [options]
#   --work DIR          work directory (default: ./tgt-idm-work)
#   --libidm-src DIR    libidm source tree (default: this script's tree);
#                       configured into DIR/libidm-build with
#                       --prefix=DIR/_inst, built and installed there
#   --libidm-build DIR  instead: an existing libidm meson build directory,
#                       installed with DESTDIR=DIR/_dest (its own prefix)
#   --system-libidm     instead: the libidm already installed, as pkg-config
#                       finds it (the libidm-dev package, or PKG_CONFIG_PATH)
#   --stock             also build stock tgtd/tgtadm (DIR/tgt-stock)
#   --start             start tgtd-on-libidm (foreground daemon, in the
#                       background of this shell) and set up a target
#   --port N            iSCSI port for --start (default 3261)
#   --control-port N    tgtd -C/--control-port for --start (default 1)
#   --lun FILE          backing file for --start (default DIR/lun1.img, 256M)
#   --iqn IQN           target name for --start
# Needs root (or sudo) for the apt steps (a deb-src stanza, apt-get update)
# when apt does not list the pinned tgt source yet, unless the source is
# already unpacked in the work dir.
set -euo pipefail

TGT_VERSION='1:1.0.85-1+deb12u1'
TGT_UPSTREAM=1.0.85
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$PWD/tgt-idm-work
LIBIDM_SRC=$(cd "$HERE/../.." && pwd)
LIBIDM_BUILD=
SYSTEM_LIBIDM=0
STOCK=0
START=0
PORT=3261
CPORT=1
LUN=
IQN=iqn.2026-11.org.libidm:tgt-idm
APT=(apt-get -o DPkg::Lock::Timeout=600 -q)

die() { echo "build-tgt-idm: $*" >&2; exit 1; }
say() { echo "build-tgt-idm: $*"; }

while [ $# -gt 0 ]; do
	case $1 in
	--work) WORK=$2; shift ;;
	--libidm-src) LIBIDM_SRC=$2; shift ;;
	--libidm-build) LIBIDM_BUILD=$2; shift ;;
	--system-libidm) SYSTEM_LIBIDM=1 ;;
	--stock) STOCK=1 ;;
	--start) START=1 ;;
	--port) PORT=$2; shift ;;
	--control-port) CPORT=$2; shift ;;
	--lun) LUN=$2; shift ;;
	--iqn) IQN=$2; shift ;;
	-h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d;s/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown option $1 (see --help)" ;;
	esac
	shift
done
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
SRC=$WORK/tgt-$TGT_UPSTREAM

# 1. the source
# has_src: apt knows the pinned source version. Any deb-src line is not
# enough: one for another release (trixie, say) lists only its own tgt.
# (grep reads it all: with -q, apt-cache's SIGPIPE fails the pipe.)
has_src() { apt-cache showsrc tgt 2>/dev/null | grep -x "Version: $TGT_VERSION" >/dev/null; }
if [ ! -d "$SRC" ]; then
	command -v dpkg-source >/dev/null || die "dpkg-dev is needed (apt-get install dpkg-dev)"
	if ! has_src; then
		sudo=()
		if [ "$(id -u)" != 0 ]; then
			command -v sudo >/dev/null ||
				die "apt does not list tgt $TGT_VERSION's source and we are neither root nor have sudo"
			sudo=(sudo)
		fi
		# the deb-src twin of the release's own sources, unless there
		if [ -e /etc/apt/sources.list.d/debian-src.sources ] ||
		   [ -e /etc/apt/sources.list.d/debian-src.list ]; then
			:
		elif [ -f /etc/apt/sources.list.d/debian.sources ]; then
			say "adding /etc/apt/sources.list.d/debian-src.sources (deb-src)"
			sed 's/^Types:.*/Types: deb-src/' /etc/apt/sources.list.d/debian.sources |
				"${sudo[@]}" tee /etc/apt/sources.list.d/debian-src.sources >/dev/null
		elif grep -qsE '^deb ' /etc/apt/sources.list; then
			say "adding /etc/apt/sources.list.d/debian-src.list (deb-src)"
			sed -n 's/^deb /deb-src /p' /etc/apt/sources.list |
				"${sudo[@]}" tee /etc/apt/sources.list.d/debian-src.list >/dev/null
		else
			die "cannot find an apt source to copy as deb-src"
		fi
		"${sudo[@]}" "${APT[@]}" update
	fi
	if ! has_src; then
		avail=$(apt-cache showsrc tgt 2>/dev/null | sed -n 's/^Version: //p' | sort -V | tail -1)
		say "NOTE: apt lists no tgt source $TGT_VERSION (the series' pin; newest listed: ${avail:-none})."
		say "      If $TGT_VERSION is gone from the archive, fetch it from snapshot.debian.org."
	fi
	(cd "$WORK" && "${APT[@]}" source "tgt=$TGT_VERSION") ||
		die "apt-get source tgt=$TGT_VERSION failed (has the archive moved on?)"
fi
[ -f "$SRC/debian/changelog" ] || die "$SRC is not an unpacked tgt source"
got=$(dpkg-parsechangelog -l "$SRC/debian/changelog" -S Version)
[ "$got" = "$TGT_VERSION" ] || die "unpacked tgt is $got, the series is for $TGT_VERSION"

# 2. stock copy and patched copy
if [ "$STOCK" = 1 ] && [ ! -d "$WORK/tgt-stock" ]; then
	cp -a "$SRC" "$WORK/tgt-stock"
fi
rm -rf "$WORK/tgt-idm"
cp -a "$SRC" "$WORK/tgt-idm"
while read -r p; do
	case $p in ''|'#'*) continue ;; esac
	say "applying $p"
	patch -d "$WORK/tgt-idm" -p1 --forward --batch -s <"$HERE/patches/$p" ||
		die "patch $p does not apply to tgt $TGT_VERSION"
done <"$HERE/patches/series"

# 3. libidm, installed the way an integrator would
if [ "$SYSTEM_LIBIDM" = 1 ]; then
	pkg-config --exists libidm ||
		die "--system-libidm: pkg-config finds no libidm (install libidm-dev, or set PKG_CONFIG_PATH)"
	LIBDIR=$(pkg-config --variable=libdir libidm)
	PROVDIR=$(pkg-config --variable=providerdir libidm)
elif [ -n "$LIBIDM_BUILD" ]; then
	say "installing libidm from $LIBIDM_BUILD into DESTDIR $WORK/_dest"
	rm -rf "$WORK/_dest"
	meson install -C "$LIBIDM_BUILD" --destdir "$WORK/_dest" >"$WORK/libidm-install.log"
	pc=$(find "$WORK/_dest" -name libidm.pc | head -1)
	[ -n "$pc" ] || die "no libidm.pc under $WORK/_dest"
	# the .pc is relocatable (its prefix is relative to its own
	# directory): -I, -L and the variables are below the staging dir
	PKG_CONFIG_PATH=$(dirname "$pc")
	export PKG_CONFIG_PATH
	LIBDIR=$(realpath -m "$(pkg-config --variable=libdir libidm)")
	PROVDIR=$(realpath -m "$(pkg-config --variable=providerdir libidm)")
else
	if [ ! -f "$WORK/libidm-build/build.ninja" ]; then
		say "configuring libidm ($LIBIDM_SRC) with --prefix=$WORK/_inst"
		meson setup "$WORK/libidm-build" "$LIBIDM_SRC" --prefix="$WORK/_inst" \
			-Dtests=false -Dman=disabled -Dbuildtype=debugoptimized >"$WORK/libidm-setup.log"
	fi
	ninja -j2 -C "$WORK/libidm-build" >"$WORK/libidm-build.log" ||
		die "libidm build failed: $WORK/libidm-build.log"
	meson install -C "$WORK/libidm-build" >"$WORK/libidm-install.log"
	pc=$(find "$WORK/_inst" -name libidm.pc | head -1)
	PKG_CONFIG_PATH=$(dirname "$pc")
	export PKG_CONFIG_PATH
	LIBDIR=$(pkg-config --variable=libdir libidm)
	PROVDIR=$(pkg-config --variable=providerdir libidm)
fi
pkg-config --exists libidm || die "pkg-config does not find the installed libidm"
say "libidm $(pkg-config --modversion libidm): $(pkg-config --cflags --libs libidm)"

# 4. build
# Backing-store modules: each tgtd loads the modules of its own directory
# (tgt's BSDIR, from make's libdir), never /usr/lib/tgt/backing-store,
# where Debian's tgt-rbd puts a bs_rbd.so built for Debian's tgtd. tgt's
# rbd backing store (CEPH_RBD=1: bs_rbd.so, with librados and librbd) is
# built for both tgtds when librbd's headers are installed (librbd-dev,
# librados-dev).
RBD=0
if printf '#include <rbd/librbd.h>\n#include <rados/librados.h>\n' |
	${CC:-cc} -E -x c - >/dev/null 2>&1; then
	RBD=1
else
	say "NOTE: librbd-dev/librados-dev not installed: no rbd backing store (bs_rbd.so)"
fi
# make_tgt DIR LOG FLAGS...: tgtd, tgtadm (and bs_rbd.so) in DIR/usr,
# modules installed in DIR/lib/backing-store
make_tgt() {
	local dir=$1 log=$2 targets=(tgtd tgtadm) flags
	shift 2
	flags=("$@" "libdir=$dir/lib")
	[ "$RBD" = 0 ] || { flags+=(CEPH_RBD=1); targets+=(bs_rbd.so); }
	# objects built with other flags (BSDIR is compiled in): start over
	if [ "$(cat "$dir/.build-flags" 2>/dev/null)" != "${flags[*]}" ]; then
		make -C "$dir/usr" clean >/dev/null 2>&1 || true
	fi
	say "building $(basename "$dir"): make -C usr ${flags[*]} ${targets[*]}"
	make -j2 -C "$dir/usr" "${flags[@]}" "${targets[@]}" >"$log" 2>&1 || return 1
	echo "${flags[*]}" >"$dir/.build-flags"
	rm -rf "$dir/lib"
	mkdir -p "$dir/lib/backing-store"
	[ "$RBD" = 0 ] || install -m 755 "$dir/usr/bs_rbd.so" "$dir/lib/backing-store/"
}
MAKEFLAGS_TGT=(ISCSI_RDMA=1)
if grep -qs '^ISCSI_IDM' "$WORK/tgt-idm/usr/Makefile" || grep -qs 'ISCSI_IDM' "$WORK/tgt-idm/usr/Makefile"; then
	MAKEFLAGS_TGT+=(ISCSI_IDM=1)
	# a run path only to a libidm outside the dynamic linker's own search
	[ "$SYSTEM_LIBIDM" = 1 ] || MAKEFLAGS_TGT+=("IDM_RPATH=$LIBDIR")
fi
make_tgt "$WORK/tgt-idm" "$WORK/tgt-idm-build.log" "${MAKEFLAGS_TGT[@]}" ||
	{ tail -30 "$WORK/tgt-idm-build.log"; die "tgt-idm build failed: $WORK/tgt-idm-build.log"; }
if [ "$STOCK" = 1 ]; then
	make_tgt "$WORK/tgt-stock" "$WORK/tgt-stock-build.log" ISCSI_RDMA=1 ||
		die "stock build failed: $WORK/tgt-stock-build.log"
fi
cat >"$WORK/env.sh" <<EOT
# sourced by tests: where things are
TGTD_IDM=$WORK/tgt-idm/usr/tgtd
TGTADM_IDM=$WORK/tgt-idm/usr/tgtadm
TGTD_STOCK=$WORK/tgt-stock/usr/tgtd
IDM_LIBDIR=$LIBDIR
IDM_PROVDIR=$PROVDIR
# 1 when both tgtds have tgt's rbd backing store (bs_rbd.so in their
# module directories, lib/backing-store)
TGT_RBD=$RBD
EOT
say "built $WORK/tgt-idm/usr/tgtd ($(ldd "$WORK/tgt-idm/usr/tgtd" | grep -o 'libidm[^ ]* => [^ ]*' || echo 'libidm not linked'))"

# 5. optionally start it
if [ "$START" = 1 ]; then
	LUN=${LUN:-$WORK/lun1.img}
	[ -f "$LUN" ] || truncate -s 256M "$LUN"
	[ -n "$LIBIDM_BUILD" ] && export IDM_PROVIDER_PATH=$PROVDIR
	"$WORK/tgt-idm/usr/tgtd" -f -C "$CPORT" --iscsi "portal=127.0.0.1:$PORT" \
		>"$WORK/tgtd-idm.log" 2>&1 &
	pid=$!
	echo "$pid" >"$WORK/tgtd-idm.pid"
	adm=("$WORK/tgt-idm/usr/tgtadm" -C "$CPORT")
	for _ in $(seq 50); do "${adm[@]}" --op show --mode target >/dev/null 2>&1 && break; sleep 0.1; done
	"${adm[@]}" --lld iscsi --op new --mode target --tid 1 -T "$IQN"
	"${adm[@]}" --lld iscsi --op new --mode logicalunit --tid 1 --lun 1 -b "$LUN"
	"${adm[@]}" --lld iscsi --op bind --mode target --tid 1 -I ALL
	say "tgtd-on-libidm (pid $pid) serves iscsi://127.0.0.1:$PORT/$IQN/1"
	say "stop it: ${adm[*]} --op delete --force --mode target --tid 1 && ${adm[*]} --op delete --mode system"
fi
