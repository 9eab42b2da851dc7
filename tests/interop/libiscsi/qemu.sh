#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Debian's QEMU (qemu-img, qemu-io: block-iscsi links libiscsi.so.7) on
# the libiscsi of contrib/libiscsi and its libidm transport
# (LD_LIBRARY_PATH, LIBISCSI_TRANSPORT=idm), against idm-target and
# tgtd-on-libidm: tests/lib/qemu.sh's checks (pattern writes of 512 B to
# 4 MiB read back with -P in the same and in a new session, qemu-img
# convert of a random file onto the LUN and back, cmp), a scattered
# writev/readv, and a short qemu-img bench (4 KiB reads, 16 in flight) whose
# time is printed. That the I/O went through libidm is checked twice: each
# target's session logs libiscsi's "through libidm tcp", and with libidm
# offered no tcp provider (IDM_PROVIDERS=iser) the same qemu-io fails.
# Usage: qemu.sh IDM_TARGET LIBISCSI_WORK TGT_WORK
# shellcheck disable=SC2034,SC2154,SC2016 # IDM_TEST_NAME is read by the lib; URL_*, PID_* set by start_*; FAIL_DIAG is eval'd
IDM_TEST_NAME=libiscsi-idm-qemu
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=../../lib/qemu.sh
. "$(dirname "$0")/../../lib/qemu.sh"
IDM_TARGET=${1:?usage: qemu.sh IDM_TARGET LIBISCSI_WORK TGT_WORK}
find_libiscsi_idm "${2:?}"
find_tgt_idm "${3:?}"
need_qemu_iscsi

SIZE=$((64 << 20))
start_idm_target idmtarget 64M
start_tgtd tgtidm "$TGTD_IDM" 7 64M || fail "tgtd-on-libidm did not start"
declare -A LABEL=([idmtarget]="idm-target" [tgtidm]="tgtd-on-libidm")
declare -A LOGF=([idmtarget]="$TMP/target-idmtarget.log" [tgtidm]="$TMP/tgtd-tgtidm.log")

# Everything from here on: QEMU on the patched library and libidm
export LD_LIBRARY_PATH=$LIBISCSI_IDM_LIBDIR LIBISCSI_TRANSPORT=idm
export IDM_PROVIDER_PATH=$LIBISCSI_IDM_PROVDIR

for target in idmtarget tgtidm; do
	url=URL_$target pid=PID_$target
	label=${LABEL[$target]}
	alive() {
		kill -0 "${!pid}" 2>/dev/null && return 0
		tail -20 "${LOGF[$target]}"
		die "$label died"
	}
	FAIL_DIAG='tail -20 "${LOGF[$target]}"'
	log "== against $label"
	# the transport: libiscsi says which one connected
	run_bounded 30 "$TMP/qemu-which.out" env LIBISCSI_DEBUG=2 \
		qemu-io -f raw -r -c 'read -P 0 0 4k' "${!url}" || fail "qemu-io read (LIBISCSI_DEBUG=2) failed"
	grep -q 'through libidm tcp' "$TMP/qemu-which.out" ||
		fail "libiscsi did not log \"through libidm tcp\": is LD_LIBRARY_PATH's libiscsi.so.7 the one QEMU loaded?"
	echo "ok   libiscsi: $(grep -m1 -o 'connection established.*through libidm tcp' "$TMP/qemu-which.out")"
	# and without libidm's tcp provider the I/O cannot happen
	run_bounded 30 "$TMP/qemu-noprov.out" env IDM_PROVIDERS=iser \
		qemu-io -f raw -r -c 'read 0 4k' "${!url}" || true
	! grep -Eq '^read [0-9]+/' "$TMP/qemu-noprov.out" ||
		fail "qemu-io read with no tcp provider offered to libidm"
	echo "ok   with IDM_PROVIDERS=iser, qemu-io cannot connect: $(grep -m1 -io 'provider[^.]*' "$TMP/qemu-noprov.out" || echo failed)"
	alive

	qemu_checks "${!url}" "$SIZE" alive

	# scattered: 4 KiB + 64 KiB + 512 B from three buffers, at an
	# offset not a multiple of 4 KiB, read back into three buffers
	log "qemu-io: writev/readv of 4 KiB + 64 KiB + 512 B at 40 MiB + 512"
	off=$(((40 << 20) + 512))
	run_bounded 60 "$TMP/qemu-v.out" qemu-io -f raw \
		-c "writev -P 0x5a $off 4k 64k 512" -c "readv -P 0x5a $off 4k 64k 512" \
		-c "read -P 0x5a $off 70144" "${!url}" || fail "qemu-io writev/readv failed"
	qemu_io_ok "$TMP/qemu-v.out" 3 || fail "qemu-io writev/readv"
	echo "ok   qemu-io: writev of 3 buffers, readv and read of the range pattern-verified"
	alive

	log "qemu-img bench: 4 KiB reads, 16 in flight"
	run_bounded 120 "$TMP/qemu-bench.out" qemu-img bench -f raw -c 20000 -d 16 -s 4096 \
		"${!url}" || fail "qemu-img bench failed"
	secs=$(sed -n 's/^Run completed in \([0-9.]*\) seconds.*/\1/p' "$TMP/qemu-bench.out")
	[ -n "$secs" ] || fail "qemu-img bench printed no time"
	echo "ok   qemu-img bench against $label: 20000 reads of 4 KiB (16 in flight) in $secs s: $(awk -v s="$secs" 'BEGIN {printf "%d", 20000 / s}') IOPS"
	alive
done
echo "PASS: QEMU on libiscsi's libidm transport against idm-target and tgtd-on-libidm"
