#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# The README quick start: install what libidm needs (Debian/Ubuntu, apt-get),
# build it into build/ with the ports its host tests run against (Debian's
# tgt and libiscsi on libidm, contrib/build-ports.sh), and run the main job: idm-target
# and idm-initiator moving verified data over 127.0.0.1 and printing the
# throughput.
# Then run the tests with: meson test -C build --print-errorlogs --num-processes 2
set -euo pipefail
cd "$(dirname "$0")"

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
pkgs=$(sed -e 's/#.*//' .ci/packages.txt | tr -s ' \t\n' ' ')
echo "quickstart: installing packages: $pkgs"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
# shellcheck disable=SC2086
$sudo apt-get install -y -q --no-install-recommends $pkgs

if [ -f build/meson-private/coredata.dat ]; then
    meson setup --reconfigure build
else
    meson setup build
fi
ninja -C build
# what suites 'tgt' and 'libiscsi' run: without it, those tests skip (77)
contrib/build-ports.sh build

if [ ! -x examples/run-main-job.sh ]; then
    echo "quickstart: examples/run-main-job.sh is missing; the library is built in build/" >&2
    exit 1
fi
exec examples/run-main-job.sh build
