#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Fetch libiscsi 1.20.0 (the upstream release Debian ships as libiscsi7),
# check it, apply contrib/libiscsi/patches (LGPL-2.1-or-later, like
# libiscsi's lib/; GPL-2.0-or-later for test-tool), install libidm into a
# prefix under the work dir and build libiscsi.so.7 with its libidm
# transport, the iscsi-* utilities and iscsi-test-cu from the same tree.
#
# Usage: build-libiscsi-idm.sh [options]
#   --work DIR          work directory (default: ./libiscsi-idm-work)
#   --tarball FILE      use this libiscsi_1.20.0.orig.tar.gz instead of
#                       fetching it through apt (checked all the same)
#   --libidm-src DIR    libidm source tree (default: this script's tree);
#                       configured into DIR/libidm-build with
#                       --prefix=DIR/_inst, built and installed there
#   --libidm-build DIR  instead: an existing libidm meson build directory,
#                       installed with DESTDIR=DIR/_dest (its own prefix)
#   --system-libidm     instead: the libidm already installed, as pkg-config
#                       finds it (the libidm-dev package, or PKG_CONFIG_PATH)
#   --stock             also build unpatched libiscsi 1.20.0 (DIR/libiscsi-stock)
# Apt (a deb-src stanza for trixie, apt-get update) needs root, unless the
# tarball is already in the work dir or given with --tarball.
#
# Results (also written to DIR/env.sh):
#   DIR/libiscsi-idm/lib/.libs/libiscsi.so.7   the patched library
#   DIR/libiscsi-idm/test-tool/iscsi-test-cu   its conformance suite
#   DIR/libiscsi-idm/utils/.libs/iscsi-*       its utilities
# Run a program on the libidm transport with
#   LD_LIBRARY_PATH=DIR/libiscsi-idm/lib/.libs LIBISCSI_TRANSPORT=idm PROGRAM
# (without LIBISCSI_TRANSPORT, libiscsi's own TCP transport is used).
set -euo pipefail

LIBISCSI_DEB_VERSION=1.20.0-4
LIBISCSI_UPSTREAM=1.20.0
LIBISCSI_TARBALL=libiscsi_1.20.0.orig.tar.gz
# sha256 of the orig tarball (byte-identical to upstream's git tag 1.20.0)
LIBISCSI_SHA256=6321d802103f2a363d3afd9a5ae772de0b4052c84fe6a301ecb576b34e853caa
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$PWD/libiscsi-idm-work
TARBALL=
LIBIDM_SRC=$(cd "$HERE/../.." && pwd)
LIBIDM_BUILD=
SYSTEM_LIBIDM=0
STOCK=0
APT=(apt-get -o DPkg::Lock::Timeout=600 -q)
SRC_STANZA=/etc/apt/sources.list.d/libiscsi-src-trixie.sources

die() { echo "build-libiscsi-idm: $*" >&2; exit 1; }
say() { echo "build-libiscsi-idm: $*"; }

while [ $# -gt 0 ]; do
	case $1 in
	--work) WORK=$2; shift ;;
	--tarball) TARBALL=$(realpath "$2"); shift ;;
	--libidm-src) LIBIDM_SRC=$2; shift ;;
	--libidm-build) LIBIDM_BUILD=$(realpath "$2"); shift ;;
	--system-libidm) SYSTEM_LIBIDM=1 ;;
	--stock) STOCK=1 ;;
	-h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d;s/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown option $1 (see --help)" ;;
	esac
	shift
done
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)

# 1. the source: a tarball given, one already fetched, or apt's
trixie_src_known() {
	apt-cache showsrc libiscsi 2>/dev/null | grep -qx "Version: $LIBISCSI_DEB_VERSION"
}
if [ -n "$TARBALL" ]; then
	[ -f "$TARBALL" ] || die "--tarball $TARBALL: no such file"
	cp "$TARBALL" "$WORK/$LIBISCSI_TARBALL"
elif [ ! -f "$WORK/$LIBISCSI_TARBALL" ]; then
	command -v apt-get >/dev/null || die "no apt-get: give the tarball with --tarball FILE"
	if ! trixie_src_known; then
		if ! grep -rqsE '^Suites:.*\btrixie\b' /etc/apt/sources.list.d/ ||
		   ! grep -rqsE '^Types:.*deb-src' /etc/apt/sources.list.d/; then
			[ "$(id -u)" = 0 ] || die "no deb-src entry for trixie in apt's sources and not root (or give --tarball FILE)"
			# the archive bookworm's own stanza names
			uri=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
			[ -n "$uri" ] || uri=$(sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\) .*/\2/p' /etc/apt/sources.list 2>/dev/null | head -1)
			[ -n "$uri" ] || die "cannot find the Debian archive in apt's sources (or give --tarball FILE)"
			say "adding $SRC_STANZA (deb-src, trixie main, $uri)"
			cat >"$SRC_STANZA" <<-EOT
			Types: deb-src
			URIs: $uri
			Suites: trixie
			Components: main
			Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
			EOT
		fi
		"${APT[@]}" update >"$WORK/apt-update.log" 2>&1 ||
			die "apt-get update failed: $WORK/apt-update.log"
	fi
	if ! trixie_src_known; then
		avail=$(apt-cache showsrc libiscsi 2>/dev/null | sed -n 's/^Version: //p' | sort -V | tr '\n' ' ')
		die "the archive no longer has libiscsi $LIBISCSI_DEB_VERSION (it has: ${avail:-none}).
  The series is for upstream $LIBISCSI_UPSTREAM; fetch $LIBISCSI_TARBALL elsewhere
  (Debian's snapshot archive, or upstream's tag $LIBISCSI_UPSTREAM with git archive) and pass --tarball FILE."
	fi
	say "apt-get source --download-only --tar-only libiscsi=$LIBISCSI_DEB_VERSION"
	(cd "$WORK" && "${APT[@]}" source --download-only --tar-only \
		"libiscsi=$LIBISCSI_DEB_VERSION" >"$WORK/apt-source.log" 2>&1) ||
		die "apt-get source libiscsi=$LIBISCSI_DEB_VERSION failed (has the archive moved on?): $WORK/apt-source.log"
	[ -f "$WORK/$LIBISCSI_TARBALL" ] || die "apt fetched no $LIBISCSI_TARBALL: $WORK/apt-source.log"
fi
got=$(sha256sum "$WORK/$LIBISCSI_TARBALL" | cut -d' ' -f1)
[ "$got" = "$LIBISCSI_SHA256" ] ||
	die "$LIBISCSI_TARBALL has sha256 $got, expected $LIBISCSI_SHA256: not the 1.20.0 release this series is for"
say "$LIBISCSI_TARBALL: sha256 ok"

# 2. pristine, patched (and stock) copies
PRISTINE=$WORK/libiscsi-$LIBISCSI_UPSTREAM
rm -rf "$PRISTINE" "$WORK/libiscsi-idm"
tar -xzf "$WORK/$LIBISCSI_TARBALL" -C "$WORK"
[ -f "$PRISTINE/configure.ac" ] || die "$LIBISCSI_TARBALL did not unpack to $PRISTINE"
cp -a "$PRISTINE" "$WORK/libiscsi-idm"
while read -r p; do
	case $p in ''|'#'*) continue ;; esac
	say "applying $p"
	patch -d "$WORK/libiscsi-idm" -p1 --forward --batch -s <"$HERE/patches/$p" ||
		die "patch $p does not apply to libiscsi $LIBISCSI_UPSTREAM"
done <"$HERE/patches/series"
if [ "$STOCK" = 1 ]; then
	rm -rf "$WORK/libiscsi-stock"
	cp -a "$PRISTINE" "$WORK/libiscsi-stock"
fi

# 3. libidm, installed the way an integrator would (as contrib/tgt does)
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
	# the .pc is relocatable (its prefix is relative to its own directory)
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
	LIBDIR=$(realpath -m "$(pkg-config --variable=libdir libidm)")
	PROVDIR=$(realpath -m "$(pkg-config --variable=providerdir libidm)")
fi
pkg-config --exists libidm || die "pkg-config does not find the installed libidm"
say "libidm $(pkg-config --modversion libidm): $(pkg-config --cflags --libs libidm)"

# 4. build: autotools; no libgcrypt (Debian's libiscsi7 links none; md5.c
# instead); a run path to libidm only when it is outside the linker's own
# search path
build_tree() { # DIR LOG [configure args...]
	local dir=$1 log=$2
	shift 2
	say "building $dir (log: $log)"
	(cd "$dir" && ./autogen.sh && ./configure --disable-manpages --disable-static \
		ac_cv_lib_gcrypt_gcry_control=no "$@" && make -j2) >"$log" 2>&1 ||
		{ tail -30 "$log"; die "build of $dir failed: $log"; }
}
rpath=()
[ "$SYSTEM_LIBIDM" = 1 ] || rpath=("LDFLAGS=-Wl,-rpath,$LIBDIR")
build_tree "$WORK/libiscsi-idm" "$WORK/libiscsi-idm-build.log" "${rpath[@]}"
[ "$STOCK" = 1 ] && build_tree "$WORK/libiscsi-stock" "$WORK/libiscsi-stock-build.log"

LIB=$WORK/libiscsi-idm/lib/.libs/libiscsi.so.7
[ -e "$LIB" ] || die "no $LIB: is patch 0001 (soname 7) in the series?"
soname=$(readelf -d "$LIB" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libiscsi.so.7 ] || die "$LIB has SONAME $soname, not libiscsi.so.7"
[ -x "$WORK/libiscsi-idm/test-tool/iscsi-test-cu" ] ||
	die "no iscsi-test-cu built (libcunit1-dev missing?): $WORK/libiscsi-idm-build.log"
cat >"$WORK/env.sh" <<EOT
# sourced by tests: where things are
LIBISCSI_IDM_LIBDIR=$WORK/libiscsi-idm/lib/.libs
LIBISCSI_IDM_TEST_CU=$WORK/libiscsi-idm/test-tool/iscsi-test-cu
LIBISCSI_IDM_UTILS=$WORK/libiscsi-idm/utils/.libs
LIBISCSI_STOCK_LIBDIR=$WORK/libiscsi-stock/lib/.libs
IDM_LIBDIR=$LIBDIR
IDM_PROVDIR=$PROVDIR
EOT
say "built $LIB (SONAME $soname; $(ldd "$LIB" | grep -o 'libidm[^ ]* => [^ ]*' || echo 'libidm not linked'))"
say "and $WORK/libiscsi-idm/test-tool/iscsi-test-cu"
say "use: LD_LIBRARY_PATH=$WORK/libiscsi-idm/lib/.libs LIBISCSI_TRANSPORT=idm iscsi-ls -s iscsi://HOST:PORT"
