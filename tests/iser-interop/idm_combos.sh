#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# idm-initiator against idm-target over iSER (iser:// at $IDM_RDMA_IP)
# with every combination of the keys that shape iSER data movement, the
# RDMA twin of tests/interop/initiator/combos.sh:
#   ImmediateData x InitialR2T x FirstBurstLength/MaxBurstLength (512/512,
#   4096/16384, defaults) x InitiatorRecvDataSegmentLength/
#   TargetRecvDataSegmentLength (512, 8192, 256 KiB, defaults) x
#   iSERHelloRequired = 96 logins; TaggedBufferForSolicitedDataOnly and
#   MaxOutstandingR2T alternate so that each of their values meets every
#   value of every other key. (Neither changes the bytes libidm's iSER
#   provider moves: no R2T is ever on the wire, and solicited data is
#   read from Write VA + (offset - unsolicited length) either way.)
# Each login writes and reads back a verified pattern in I/Os of 1 block,
# FirstBurst 4 KiB + 1 block, one 8 KiB segment + 1 block, MaxBurst
# 16 KiB + 1 block, 195 blocks and 1 MiB + 1 block: every size straddles
# a burst or segment boundary of some combination (no SCSI transfer is
# smaller than one 512-byte block). Both sides must report the same
# negotiated keys. Then idm-target imposes its keys (--key) on an
# initiator that offers its defaults.
# Usage: idm_combos.sh PATH/TO/idm-initiator PATH/TO/idm-target
IDM_TEST_NAME=idm-iser-combos
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
INI=${1:?usage: $0 idm-initiator idm-target}
IDM_TARGET=${2:?usage: $0 idm-initiator idm-target}
need_rdma

IOS=512,4608,8704,16896,99840,1049088 # one of each: 1152 KiB in all
VERIFY=(--verify 1152k --verify-io "$IOS" -d 8)
INI_SECS=${IDM_COMBOS_TIMEOUT:-90}
# shellcheck disable=SC2016 # expanded by fail()
FAIL_DIAG='echo "--- idm-target log:"; tail -n 30 "$TMP/target.log"'

n=0
bad=0
failed=()
# The guest runs under TCG, where starting any program costs ~0.15 s:
# the checks below use bash builtins only, so a combination costs two
# exec()s (timeout and idm-initiator) and the matrix stays within budget.
# now_ms: NOW = milliseconds since the epoch, without a subshell
now_ms() { local t=${EPOCHREALTIME/./}; NOW=$((10#$t / 1000)); }
TLOG_SEEN=0
# pause SECS: sleep without exec(1): a read that times out on a FIFO
# nobody writes (the guest has no /dev/fd for <(...)).
mkfifo "$TMP/never"
exec {PAUSE_FD}<>"$TMP/never"
pause() { read -r -t "$1" -u "$PAUSE_FD" || true; }

# stop_target: SIGTERM must end idm-target, sessions and all, within
# 10 s (it exits 0 then); the time it takes is logged.
stop_target() {
	local t0 i rc
	now_ms
	t0=$NOW
	kill -TERM "$TGT_PID" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		kill -0 "$TGT_PID" 2>/dev/null || break
		pause 0.1
	done
	if kill -0 "$TGT_PID" 2>/dev/null; then
		kill -KILL "$TGT_PID" 2>/dev/null
		wait "$TGT_PID" 2>/dev/null
		tail -n 20 "$TMP/target.log"
		fail "idm-target still ran 10 s after SIGTERM"
	fi
	wait "$TGT_PID"
	rc=$?
	now_ms
	log "idm-target stopped $((NOW - t0)) ms after SIGTERM, exit status $rc"
	[ $rc = 0 ] || { tail -n 20 "$TMP/target.log"; fail "idm-target exited $rc"; }
}

# combo DESC INI_ARGS TGT_WANT -- WANT...: one login and verify. The
# initiator's "Negotiated:" line must hold each WANT (a key=value), and
# idm-target's session line for it TGT_WANT (a bash regex).
combo() {
	local desc=$1 args=$2 twant=$3 w ok=1 t0 rc ms neg="" sess="" l
	local -a out tlog
	shift 4
	n=$((n + 1))
	now_ms
	t0=$NOW
	# shellcheck disable=SC2086 # args is a word list
	timeout -k 5 "$INI_SECS" "$INI" -t 30 --seed "$n" $args "${VERIFY[@]}" \
		"$URL" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	now_ms
	ms=$((NOW - t0))
	T_RUNS=$((T_RUNS + ms))
	if [ $rc -ne 0 ]; then
		ok=0
		echo "   idm-initiator exited $rc$([ $rc = 124 ] && echo " (timed out)")"
	fi
	mapfile -t out <"$TMP/out"
	for l in "${out[@]}"; do
		[[ $l == Negotiated:* ]] && neg="$l "
	done
	for w in "$@"; do
		[[ $neg == *" $w "* ]] || { ok=0; echo "   missing $w"; }
	done
	[[ ${out[-1]:-} == "verify: wrote "*": OK" ]] || ok=0
	mapfile -t -s "$TLOG_SEEN" tlog <"$TMP/target.log"
	TLOG_SEEN=$((TLOG_SEEN + ${#tlog[@]}))
	for l in "${tlog[@]}"; do
		[[ $l == *"normal session"* ]] && sess=$l
	done
	if ! [[ $sess =~ $twant ]]; then
		ok=0
		echo "   idm-target's session line lacks /$twant/: ${sess:-none}"
	fi
	if [ $ok = 1 ]; then
		printf 'ok   [%2d] %2d.%01d s  %s\n' "$n" $((ms / 1000)) $((ms % 1000 / 100)) "$desc"
	else
		printf 'FAIL [%2d] %2d.%01d s  %s\n' "$n" $((ms / 1000)) $((ms % 1000 / 100)) "$desc"
		echo "   idm-initiator $args ${VERIFY[*]} $URL"
		sed 's/^/   | /' "$TMP/out" | tail -n 8
		sed 's/^/   ! /' "$TMP/err" | tail -n 12
		printf '   T %s\n' "${tlog[@]}" | grep -v ' info: ' | tail -n 8
		bad=$((bad + 1))
		failed+=("[$n] $desc")
	fi
	target_alive
}

IQN=iqn.2026-11.org.libidm:iser-combos
start_idm_target "$IQN" ram:16M
URL=iser://$IP:$PORT/$IQN/1

# FirstBurstLength MaxBurstLength ("-": the initiator's default offer,
# 256 KiB / 1 MiB, which idm-target accepts as it is)
BURSTS=("512 512" "4096 16384" "- -")
# InitiatorRecvDataSegmentLength TargetRecvDataSegmentLength ("-": the
# defaults, 256 KiB and 8 KiB)
RDSLS=("512 512" "8192 8192" "262144 262144" "- -")
log "$((2 * 2 * ${#BURSTS[@]} * ${#RDSLS[@]} * 2)) combinations, verify I/O sizes $IOS"
now_ms
T_START=$NOW
T_RUNS=0
ii=0
for imm in yes no; do
for r2t in yes no; do
for ((bi = 0; bi < ${#BURSTS[@]}; bi++)); do
	read -r fbl mbl <<<"${BURSTS[bi]}"
	for ((di = 0; di < ${#RDSLS[@]}; di++)); do
		read -r irdsl trdsl <<<"${RDSLS[di]}"
		for hello in no yes; do
			hi=0
			[ $hello = yes ] && hi=1
			tagged=no maxr2t=1 tword="" hword=""
			(((bi + di) & 1)) && tagged=yes tword=" TaggedBufferForSolicitedDataOnly"
			(((di + hi + ii) & 1)) && maxr2t=8
			[ $hello = yes ] && hword=" iSERHelloRequired"
			args="--immediate-data $imm --initial-r2t $r2t"
			args+=" --max-outstanding-r2t $maxr2t"
			args+=" --tagged-buffer-solicited-only $tagged --iser-hello $hello"
			[ "$fbl" = - ] || args+=" --first-burst $fbl --max-burst $mbl"
			[ "$irdsl" = - ] ||
				args+=" --initiator-recv-dsl $irdsl --target-recv-dsl $trdsl"
			# the first login also runs discovery over iSER
			[ $n = 0 ] || args+=" --no-discovery"
			[ "$fbl" = - ] && fbl=262144 mbl=1048576
			[ "$irdsl" = - ] && irdsl=262144 trdsl=8192
			combo "Imm=$imm R2T=$r2t FBL/MBL=$fbl/$mbl IRDSL/TRDSL=$irdsl/$trdsl Hello=$hello Tagged=$tagged MaxR2T=$maxr2t" \
				"$args" \
				"ImmediateData=${imm^} InitialR2T=${r2t^} MaxBurst=$mbl FirstBurst=$fbl MRDSL=$irdsl/$trdsl digests=None/None iSER$tword$hword\\)" \
				-- "RDMAExtensions=Yes" "ImmediateData=${imm^}" "InitialR2T=${r2t^}" \
				"FirstBurstLength=$fbl" "MaxBurstLength=$mbl" "MaxOutstandingR2T=$maxr2t" \
				"InitiatorRecvDataSegmentLength=$irdsl" "TargetRecvDataSegmentLength=$trdsl" \
				"TaggedBufferForSolicitedDataOnly=${tagged^}" "iSERHelloRequired=${hello^}"
		done
	done
done
ii=$((ii + 1))
done
done
now_ms
T_MATRIX=$(((NOW - T_START) / 1000))
log "initiator-driven matrix: $((n - bad)) of $n passed in $T_MATRIX s"

# After all those sessions idm-target must hold no connection: only its
# listening CM id, no QP. Its registered memory (the LUN and its buffer
# pool) and its size are logged: both must stay flat from run to run.
rss="?"
while read -r k v _; do [ "$k" = VmRSS: ] && rss=$v; done <"/proc/$TGT_PID/status"
if command -v rdma >/dev/null 2>&1; then
	rdma res show cm_id >"$TMP/res" 2>&1
	rdma res show qp >>"$TMP/res" 2>&1
	rdma res show mr >>"$TMP/res" 2>&1
	ncm=0 nqp=0 nmr=0 mrkib=0
	while read -r l; do
		[[ $l == *" pid $TGT_PID "* ]] || continue
		case $l in
		*cm-idn*) ncm=$((ncm + 1)) ;;
		*lqpn*) nqp=$((nqp + 1)) ;;
		*mrlen*)
			nmr=$((nmr + 1))
			[[ $l =~ mrlen\ ([0-9]+) ]] && mrkib=$((mrkib + BASH_REMATCH[1] / 1024))
			;;
		esac
	done <"$TMP/res"
	log "idm-target after $n sessions: RSS $rss KiB, $ncm CM id(s), $nqp QP(s), $nmr MR(s) of $mrkib KiB"
	if [ "$ncm" -gt 1 ] || [ "$nqp" != 0 ]; then
		grep " pid $TGT_PID " "$TMP/res"
		fail "idm-target kept RDMA resources of ended sessions"
	fi
else
	log "idm-target after $n sessions: RSS $rss KiB (no rdma tool: resources not checked)"
fi
stop_target

# The target's side of the command line: idm-target --key answers, the
# initiator offers its defaults (Imm=Yes R2T=No 256k/1m, IRDSL 256k,
# TRDSL 8k) and must end up with the target's values.
n_matrix=$n
tcombo() {
	local desc=$1 keys=$2
	shift 2
	IQN=iqn.2026-11.org.libidm:iser-combos-t$((n + 1))
	: >"$TMP/target.log"
	TLOG_SEEN=0
	# shellcheck disable=SC2086 # keys is a word list
	start_idm_target "$IQN" ram:16M $keys
	URL=iser://$IP:$PORT/$IQN/1
	combo "$desc" "--no-discovery" "$@"
	stop_target
}
tcombo "target --key ImmediateData=No InitialR2T=Yes FBL/MBL=4096/16384" \
	"--key ImmediateData=No --key InitialR2T=Yes --key FirstBurstLength=4096 --key MaxBurstLength=16384" \
	"ImmediateData=No InitialR2T=Yes MaxBurst=16384 FirstBurst=4096 MRDSL=262144/8192" -- \
	"ImmediateData=No" "InitialR2T=Yes" "FirstBurstLength=4096" "MaxBurstLength=16384"
tcombo "target --key FBL/MBL=512/512 IRDSL/TRDSL=512/512" \
	"--key FirstBurstLength=512 --key MaxBurstLength=512 --key InitiatorRecvDataSegmentLength=512 --key TargetRecvDataSegmentLength=512" \
	"ImmediateData=Yes InitialR2T=No MaxBurst=512 FirstBurst=512 MRDSL=512/512" -- \
	"FirstBurstLength=512" "MaxBurstLength=512" \
	"InitiatorRecvDataSegmentLength=512" "TargetRecvDataSegmentLength=512"
tcombo "target --key ImmediateData=No IRDSL/TRDSL=8192/4096" \
	"--key ImmediateData=No --key InitiatorRecvDataSegmentLength=8192 --key TargetRecvDataSegmentLength=4096" \
	"ImmediateData=No InitialR2T=No MaxBurst=1048576 FirstBurst=262144 MRDSL=8192/4096" -- \
	"ImmediateData=No" "InitialR2T=No" \
	"InitiatorRecvDataSegmentLength=8192" "TargetRecvDataSegmentLength=4096"

now_ms
T_ALL=$(((NOW - T_START) / 1000))
echo "$((n - bad)) of $n combinations passed ($n_matrix initiator-driven," \
	"$((n - n_matrix)) target-driven) in $T_ALL s, $((T_RUNS / 1000)) s of it in idm-initiator"
if [ $bad -ne 0 ]; then
	printf 'failed: %s\n' "${failed[@]}"
	exit 1
fi
log "PASS"
