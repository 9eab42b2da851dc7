#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Debian's QEMU (qemu-io, qemu-img: qemu-utils, qemu-block-extra) over
# iser:// through libiscsi's libidm transport (LIBISCSI_TRANSPORT=idm:
# libidm's iser provider, not libiscsi's own iSER code) against idm-target
# over iSER, in the soft-RoCE guest:
#  - the connection is libidm's iser provider's ("through libidm iser"),
#    and with only the tcp provider allowed the same URL fails;
#  - tests/lib/qemu.sh's checks: qemu-img info, ten pattern writes of
#    512 B to 4 MiB each read back with -P, read again in a new session,
#    a qemu-img convert of 16 MiB + 4.5 KiB onto the LUN and back;
#  - payload copies: none on the initiator (libidm's counters and the
#    transport's own, logged when each connection ends) for that whole
#    run, and none on the target (idm-target's SIGUSR1 dump) for a
#    read-only session: Data-In lands in QEMU's buffers by RDMA Write;
#  - qemu-io readv (two segments of one allocation, adjacent) reads the
#    right data; a READ(10) into two segments with a gap between them
#    (libiscsi's iovector API through sg_probe.py): the iser provider
#    moves it through its staging area, so it reads the right data with
#    exactly its bytes counted as one payload copy, and a read into one
#    buffer on the same session after it copies nothing.
# Usage: qemu.sh LIBISCSI-IDM-WORKDIR PATH/TO/idm-target
IDM_TEST_NAME=libiscsi-iser-qemu
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/qemu.sh
. "$(dirname "$0")/../lib/qemu.sh"
IDM_TARGET=${2:?usage: $0 LIBISCSI-IDM-WORKDIR idm-target}
need_rdma
find_libiscsi_idm "$1"
need_qemu_iscsi
on_idm

IQN=iqn.2026-11.org.libidm:libiscsi-iser
SIZE=67108864
start_idm_target "$IQN" ram:64M --provider tcp,iser
URL=iser://$IP:$PORT/$IQN/1

log "qemu-io over $URL with LIBISCSI_TRANSPORT=idm: libidm's iser provider"
run_bounded 60 "$TMP/probe.out" env LIBISCSI_DEBUG=2 "${ON_IDM[@]}" \
	qemu-io -f raw -r -c "read 0 4096" "$URL" ||
	fail "qemu-io over iSER through libidm"
grep -q 'through libidm iser' "$TMP/probe.out" ||
	fail "no \"through libidm iser\" line: not libidm's iser provider"
target_alive
run_bounded 60 "$TMP/probe2.out" env IDM_PROVIDERS=tcp "${ON_IDM[@]}" \
	qemu-io -f raw -r -c "read 0 4096" "$URL"
grep -Eq 'read 4096/4096' "$TMP/probe2.out" &&
	fail "qemu-io read over iser:// with only libidm's tcp provider allowed"
target_alive
echo "ok   iser:// goes through libidm's iser provider (fails without it)"

# qemu.sh's checks, on the libidm transport; the counters of every
# connection they open go to $TMP/debug (LIBISCSI_DEBUG=2 on stderr would
# mix with qemu-io's output, which qemu_checks parses: a wrapper keeps it
# apart)
cat >"$TMP/qemu-io" <<EOT
#!/bin/sh
exec env LIBISCSI_DEBUG=2 ${ON_IDM[*]} $(command -v qemu-io) "\$@" 2>>"$TMP/debug"
EOT
cp "$TMP/qemu-io" "$TMP/qemu-img"
sed -i "s#$(command -v qemu-io)#$(command -v qemu-img)#" "$TMP/qemu-img"
chmod +x "$TMP/qemu-io" "$TMP/qemu-img"
: >"$TMP/debug"
PATH=$TMP:$PATH qemu_checks "$URL" "$SIZE" target_alive
no_initiator_copies "$TMP/debug"
echo "ok   initiator: $ISER_CONNS iSER connections, 0 payload copies (libidm's and the transport's)"

# the target's counters during a read-only session (its connections are
# gone once the session ended: dump them twice a second while it runs,
# keep the largest sum, as tests/iser-interop/throughput.sh does)
log "a read-only qemu-io session (16 MiB in 1 MiB reads) with idm-target's counters"
mark=$(wc -l <"$TMP/target.log")
(while kill -USR1 "$TGT_PID" 2>/dev/null; do sleep 0.5; done) &
kpid=$!
rcmds=()
for ((i = 0; i < 16; i++)); do rcmds+=(-c "read $((i * 1048576)) 1048576"); done
run_bounded 120 "$TMP/ro.out" "$TMP/qemu-io" -f raw -r "${rcmds[@]}" "$URL" >/dev/null
rc=$?
kill "$kpid" 2>/dev/null
wait "$kpid" 2>/dev/null
if [ "$rc" != 0 ] || ! qemu_io_ok "$TMP/ro.out" 16; then
	fail "the read-only session failed"
fi
target_alive
# per dump: the iSER connections, their payload copies and RDMA Writes
tc=$(tail -n +$((mark + 1)) "$TMP/target.log" | awk '
	/^stats: [0-9]+ connection/ {
		if (n > bn || (n == bn && w > bw)) { bn = n; bc = c; bw = w }
		n = 0; c = 0; w = 0; next
	}
	/^stats .* iser / {
		n++
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^payload_copies=/) { sub(/.*=/, "", $i); c += $i }
			else if ($i ~ /^rdma_writes=/) { sub(/.*=/, "", $i); w += $i }
		}
	}
	END { print bn + 0, bc + 0, bw + 0 }')
read -r tn tcopies twrites <<<"$tc"
[ "$tn" -gt 0 ] || fail "idm-target's SIGUSR1 dumps showed no iSER connection during the session"
[ "$twrites" -gt 0 ] || fail "idm-target posted no RDMA Write for the READs"
[ "$tcopies" = 0 ] || fail "idm-target copied payload $tcopies times serving READs"
echo "ok   target: $twrites RDMA Writes and 0 payload copies serving 16 MiB of READs over iSER"

# qemu-io's readv splits one allocation: segments adjacent in memory,
# which the iser provider takes as one range (the convert above wrote
# the LUN's first 16 MiB: a pattern first)
log "qemu-io readv of two 64 KiB segments of one buffer (adjacent)"
run_bounded 60 "$TMP/adj.out" env "${ON_IDM[@]}" qemu-io -f raw -c "write -P 0x66 2097152 1048576" \
	-c "readv -P 0x66 2097152 65536 65536" -c "read -P 0x66 2097152 4096" "$URL" ||
	fail "qemu-io readv over adjacent segments"
qemu_io_ok "$TMP/adj.out" 3 || fail "qemu-io readv over adjacent segments"
target_alive
echo "ok   a read into adjacent segments lands right"

# scattered: two segments with a gap, through libiscsi's iovector API
# (sg_probe.py), then a read into one buffer on the same session; the
# provider stages the scattered one (copied, and counted: exactly its
# 128 KiB in one copy; the read into one buffer copies nothing)
log "libiscsi READ(10) into two segments with a gap between them (scattered)"
need python3 python3
run_bounded 240 "$TMP/sg.out" env LIBISCSI_DEBUG=2 "${ON_IDM[@]}" python3 \
	"$(dirname "$0")/sg_probe.py" "$IP:$PORT" "$IQN" 1 4096 0x66 ||
	fail "sg_probe.py failed"
target_alive
grep -q '^scattered 0 ok$' "$TMP/sg.out" ||
	fail "the scattered read did not land right"
grep -q '^contiguous 0 ok$' "$TMP/sg.out" ||
	fail "the read into one buffer after the scattered one did not land right"
idm_counters "$TMP/sg.out" >"$TMP/sg.counters"
sed 's/^/   sg_probe: provider, bytes in, bytes out, payload copies, bytes, transport copies, bytes: /' \
	"$TMP/sg.counters"
read -r sgn sgc sgb sgt <<<"$(awk '$1 == "iser" { n++; c += $4; b += $5; t += $6 }
	END { print n + 0, c + 0, b + 0, t + 0 }' "$TMP/sg.counters")"
[ "$sgn" -ge 1 ] || fail "sg_probe.py's connection logged no iSER counters"
[ "$sgc" = 1 ] && [ "$sgb" = 131072 ] && [ "$sgt" = 0 ] ||
	fail "scattered read: $sgc payload copies of $sgb bytes (want 1 of 131072), transport copies $sgt (want 0)"
echo "ok   a scattered read lands right through the provider's staging: 1 copy of 131072 bytes, counted"
log "PASS"
