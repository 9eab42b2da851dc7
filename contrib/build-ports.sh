#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Build the ports in contrib/ that the host test suites run against, on
# libidm's build BUILD_DIR (installed under each port's work dir, with
# DESTDIR), where those suites look for them:
#   tgt  BUILD_DIR/tgt-idm-work: tgtd on libidm and stock tgtd (suite 'tgt',
#        and the guests' tgt tests)
# A suite whose port is not built skips (77). quickstart.sh and .ci/run
# both call this, once each, so that the README's test command runs the
# same host tests as CI.
# usage: contrib/build-ports.sh BUILD_DIR
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
BUILD=$1
HERE=$(cd "$(dirname "$0")" && pwd)
[ -f "$BUILD/build.ninja" ] || { echo "build-ports: $BUILD is not a meson build dir" >&2; exit 2; }

# Debian's tgt (apt-get source the first time, then about 15 s of make)
"$HERE/tgt/build-tgt-idm.sh" --work "$BUILD/tgt-idm-work" --stock --libidm-build "$BUILD"
