#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Debian's QEMU (qemu-io, qemu-img) over iser:// through libiscsi's libidm
# transport (LIBISCSI_TRANSPORT=idm: libidm's iser provider) against LIO,
# the Linux kernel's target, with its iSER transport (ib_isert), in the
# soft-RoCE guest: tests/lib/qemu.sh's pattern-verified writes and reads
# and the convert round trip, the connections libidm iser's with no
# payload copy on the initiator. (ib_isert receives 8 KiB of data per
# Send at most: the transport offers 8 KiB on iSER, as libiscsi's own
# iSER transport does.)
# Usage: qemu_lio.sh LIBISCSI-IDM-WORKDIR
IDM_TEST_NAME=libiscsi-iser-lio
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/qemu.sh
. "$(dirname "$0")/../lib/qemu.sh"
# shellcheck source-path=SCRIPTDIR source=../iser-interop/lio.sh
. "$(dirname "$0")/../iser-interop/lio.sh"
need_rdma
find_libiscsi_idm "${1:-}"
need_qemu_iscsi
on_idm

IQN=iqn.2026-11.org.libidm:libiscsi-iser-lio
LIO_PORT=${IDM_LIO_PORT:-3260}
lio_start "$IQN" 64 "$LIO_PORT"
FAIL_DIAG='echo "--- kernel log (iser, rxe, target):"; dmesg | grep -iE "isert|iser|rxe|iscsi|target|WARNING|RIP" | tail -n 30'
URL=iser://$IP:$LIO_PORT/$IQN/0

# the counters of every connection go to $TMP/debug (qemu.sh's checks
# parse qemu-io's output: LIBISCSI_DEBUG's lines kept apart)
for tool in qemu-io qemu-img; do
	printf '#!/bin/sh\nexec env LIBISCSI_DEBUG=2 %s %s "$@" 2>>"%s"\n' \
		"${ON_IDM[*]}" "$(command -v "$tool")" "$TMP/debug" >"$TMP/$tool"
	chmod +x "$TMP/$tool"
done
: >"$TMP/debug"
lio_alive() { :; } # a kernel target: its failures show as I/O errors
PATH=$TMP:$PATH qemu_checks "$URL" 67108864 lio_alive
no_initiator_copies "$TMP/debug"
echo "ok   initiator: $ISER_CONNS iSER connections to LIO, 0 payload copies"
log "PASS"
