#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Build the ports in contrib/ that the host test suites run against, on
# libidm's build BUILD_DIR (installed under each port's work dir, with
# DESTDIR), where those suites look for them:
#   tgt       BUILD_DIR/tgt-idm-work: tgtd on libidm and stock tgtd (suite
#             'tgt', and the guests' tgt tests)
#   libiscsi  BUILD_DIR/libiscsi-idm-work: libiscsi 1.20.0 with its libidm
#             transport, its iscsi-test-cu (suite 'libiscsi', and the
#             guests' libiscsi iSER tests)
# A suite whose port is not built skips (77). quickstart.sh and .ci/run
# both call this, once each, so that the README's test command runs the
# same host tests as CI (.ci/run names one port per call, to time each).
# usage: contrib/build-ports.sh BUILD_DIR [PORT...]   (default: all of them)
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [tgt] [libiscsi]" >&2; exit 2; }
BUILD=$1
shift
PORTS=("$@")
[ ${#PORTS[@]} -gt 0 ] || PORTS=(tgt libiscsi)
HERE=$(cd "$(dirname "$0")" && pwd)
[ -f "$BUILD/build.ninja" ] || { echo "build-ports: $BUILD is not a meson build dir" >&2; exit 2; }

for port in "${PORTS[@]}"; do
	case $port in
	# Debian's tgt (apt-get source the first time, then about 15 s of make)
	tgt) "$HERE/tgt/build-tgt-idm.sh" --work "$BUILD/tgt-idm-work" --stock --libidm-build "$BUILD" ;;
	# libiscsi 1.20.0 (apt-get source from trixie the first time; autotools,
	# about 2 minutes on 2 cores)
	libiscsi) "$HERE/libiscsi/build-libiscsi-idm.sh" --work "$BUILD/libiscsi-idm-work" --libidm-build "$BUILD" ;;
	*) echo "build-ports: unknown port $port (tgt, libiscsi)" >&2; exit 2 ;;
	esac
done
