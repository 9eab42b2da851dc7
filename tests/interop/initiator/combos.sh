#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# idm-initiator against idm-target on 127.0.0.1 with every combination of
# the keys that change the data path: ImmediateData x InitialR2T x burst
# lengths x digests (2 x 2 x 3 x 4 = 48 logins), each writing and reading
# back a verified pattern with I/Os that straddle the burst boundaries.
# Usage: combos.sh PATH/TO/idm-initiator PATH/TO/idm-target
IDM_TEST_NAME=idm-ini-combos
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
INI=${1:?usage: $0 idm-initiator idm-target}
TGT=${2:?usage: $0 idm-initiator idm-target}
[ -x "$TGT" ] || fail "$TGT is not built"

IQN=iqn.2026-11.org.libidm:ini-combos
log "starting idm-target on 127.0.0.1 (port 0: the target picks one)"
start_target 127.0.0.1:0 10 --target-name "$IQN" --lun ram:16M
wait_port "$PORT" 5 || { tail -n 20 "$TMP/target.log"; fail "idm-target does not listen"; }
log "idm-target listens on 127.0.0.1:$PORT"

URL=iscsi://127.0.0.1:$PORT/$IQN/1
# FirstBurstLength MaxBurstLength MaxRecvDataSegmentLength
BURSTS=("512 1024 512" "8192 65536 8192" "262144 1048576 262144")
DIGESTS=("none none" "crc32c none" "none crc32c" "crc32c crc32c")
INI_TIMEOUT=30
n=0
bad=0
for imm in yes no; do
for r2t in yes no; do
for burst in "${BURSTS[@]}"; do
	read -r fbl mbl dsl <<<"$burst"
	for dig in "${DIGESTS[@]}"; do
		read -r hd dd <<<"$dig"
		n=$((n + 1))
		desc="ImmediateData=$imm InitialR2T=$r2t FBL=$fbl MBL=$mbl MRDSL=$dsl HD=$hd DD=$dd"
		# 195-block I/Os are no multiple of any burst or segment size.
		if ! run_ini --no-discovery --immediate-data $imm --initial-r2t $r2t \
			--first-burst $fbl --max-burst $mbl --max-recv-dsl $dsl \
			--header-digest $hd --data-digest $dd \
			--verify 1950k --verify-io 99840 --seed $n "$URL" >"$TMP/run.log"; then
			echo "FAIL [$n] $desc"
			tail -n 12 "$TMP/run.log"
			bad=$((bad + 1))
			if ! kill -0 "$TGT_PID" 2>/dev/null; then
				tail -n 30 "$TMP/target.log"
				fail "idm-target died"
			fi
			continue
		fi
		# idm-target accepts every offer here (its defaults are the
		# most permissive values), so each outcome is exactly ours.
		want=("ImmediateData=${imm^} InitialR2T=${r2t^}"
			"FirstBurstLength=$fbl MaxBurstLength=$mbl"
			"MaxRecvDataSegmentLength=$dsl/")
		[ $hd = crc32c ] && want+=("HeaderDigest=CRC32C") || want+=("HeaderDigest=None")
		[ $dd = crc32c ] && want+=("DataDigest=CRC32C") || want+=("DataDigest=None")
		ok=1
		for w in "${want[@]}"; do
			grep -q "Negotiated:.*$w" "$TMP/out.txt" || { ok=0; echo "  missing $w"; }
		done
		grep -q "verify: wrote .*: OK" "$TMP/out.txt" || ok=0
		if [ $ok = 1 ]; then
			echo "ok   [$n] $desc"
		else
			echo "FAIL [$n] $desc"
			cat "$TMP/out.txt"
			bad=$((bad + 1))
		fi
	done
done
done
done
kill -0 "$TGT_PID" 2>/dev/null || { tail -n 20 "$TMP/target.log"; fail "idm-target died"; }
echo "$((n - bad)) of $n combinations passed"
[ $bad -eq 0 ] || exit 1
log "PASS"
