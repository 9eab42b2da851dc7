# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# What the tgt-on-libidm tests share (sourced): where the tgtd built by
# contrib/tgt/build-tgt-idm.sh is, starting a tgtd with one file-backed
# LUN on 127.0.0.1, and reading a CUnit run. The tgt port itself is
# GPL-2.0-only and lives in contrib/tgt; these scripts only run it.
: "${IDM_TEST_NAME:=tgt-idm}"
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

IQN=iqn.2026-11.org.libidm:tgt-idm

# tgtd_answers PID TGTADM...: tgtd PID answers tgtadm, or has exited
tgtd_answers() { timeout 5 "${@:2}" --op show --mode system || ! kill -0 "$1"; }

# find_tgt_idm WORKDIR: sets TGTD_IDM, TGTADM (unchanged tgtadm), TGTD_STOCK
# from the work dir of build-tgt-idm.sh (its env.sh), or skips.
find_tgt_idm() {
	local work=${1:-${TGT_IDM_WORK:-}}
	if [ -z "${TGTD_IDM:-}" ]; then
		if [ -z "$work" ] || [ ! -f "$work/env.sh" ]; then
			skip "tgtd on libidm not built: run contrib/build-ports.sh BUILDDIR (as quickstart.sh does), or contrib/tgt/build-tgt-idm.sh --work ${work:-DIR} --stock (or set TGT_IDM_WORK/TGTD_IDM)"
		fi
		# shellcheck disable=SC1091
		. "$work/env.sh"
	fi
	[ -x "$TGTD_IDM" ] || skip "no tgtd-on-libidm at $TGTD_IDM"
	ldd "$TGTD_IDM" | grep -q 'libidm\.so' || skip "$TGTD_IDM is not linked with libidm"
	TGTADM=${TGTADM_IDM:-$(command -v tgtadm || true)}
	[ -x "$TGTADM" ] || skip "no tgtadm"
	if [ -z "${TGTD_STOCK:-}" ] || [ ! -x "$TGTD_STOCK" ]; then
		TGTD_STOCK=$(command -v tgtd || true)
	fi
	export TGT_IPC_SOCKET=$TMP/tgtd-ipc
}

# start_tgtd NAME BINARY CONTROL_PORT LUNSIZE: a tgtd on 127.0.0.1 (a free
# port), target IQN:NAME with file LUN 1; sets PORT_<NAME>, URL_<NAME>,
# PID_<NAME>. Other portals (the iSER tests, tests/tgt-iser): TGT_ADDR
# (the address, 127.0.0.1), TGT_LLD (tgtadm's --lld, iscsi), TGT_SCHEME
# (of the URL, iscsi), TGTD_ARGS (an array: more tgtd options, @PORT@
# replaced by the port), TGT_IQN (the target's name instead of
# IQN:NAME), TGT_LUN_ARGS (an array: tgtadm's options for LUN 1 instead
# of a file of LUNSIZE, e.g. --bstype rbd --backing-store POOL/IMAGE);
# tgtd's environment is the caller's (e.g. TGT_IDM_PROVIDERS).
start_tgtd() {
	local name=$1 bin=$2 cport=$3 size=$4 port pid attempt lun
	local addr=${TGT_ADDR:-127.0.0.1} tiqn=${TGT_IQN:-$IQN:$1}
	local adm=("$TGTADM" -C "$cport" --lld "${TGT_LLD:-iscsi}") more=()
	for attempt in 1 2 3 4 5; do
		port=$(free_port) || return 1
		[ -z "${TGTD_ARGS+set}" ] || more=("${TGTD_ARGS[@]//@PORT@/$port}")
		# tgtd uses the libidm it was linked with (installed) and its
		# providers (found through IDM_PROVDIR for a DESTDIR install),
		# not the build tree's meson points at
		env -u LD_LIBRARY_PATH -u IDM_PROVIDER_PATH \
			${IDM_PROVDIR:+IDM_PROVIDER_PATH=$IDM_PROVDIR} \
			"$bin" -f -C "$cport" --iscsi portal="$addr:$port" "${more[@]}" \
			>"$TMP/tgtd-$name.log" 2>&1 &
		pid=$!
		wait_until 30 tgtd_answers "$pid" "${adm[@]}" >/dev/null 2>&1
		if wait_port "$port" 5 "$addr"; then
			PIDS="$PIDS $pid"
			break
		fi
		echo "tgtd $name could not listen on $port (attempt $attempt)"
		stop_pid "$pid"
		pid=
	done
	[ -n "$pid" ] || return 1
	# tgtd ignores SIGTERM while targets exist: ask it to exit first
	on_exit "timeout 5 ${adm[*]} --op delete --mode system" \
		"timeout 5 ${adm[*]} --op delete --force --mode target --tid 1"
	if [ -n "${TGT_LUN_ARGS+set}" ]; then
		lun=("${TGT_LUN_ARGS[@]}")
	else
		truncate --size="$size" "$TMP/lun-$name.img" || return 1
		lun=(-b "$TMP/lun-$name.img")
	fi
	timeout 5 "${adm[@]}" --op new --mode target --tid 1 -T "$tiqn" &&
	timeout 5 "${adm[@]}" --op bind --mode target --tid 1 -I ALL &&
	timeout 30 "${adm[@]}" --op new --mode logicalunit --tid 1 --lun 1 \
		"${lun[@]}" --blocksize=512 || return 1
	printf -v "PORT_$name" '%s' "$port"
	printf -v "URL_$name" '%s' "${TGT_SCHEME:-iscsi}://$addr:$port/$tiqn/1"
	printf -v "PID_$name" '%s' "$pid"
	echo "tgtd ($name, $bin) on $addr:$port, control port $cport"
}

# results FILE: "Suite.Test passed|FAILED" for every test of a CUnit run.
results() {
	awk '/^Suite: /{suite=$2}
	     /^  Test: /{if (name != "") print name, st; name=suite "." $2; st="?"}
	     /(^|\.\.\.)passed( |$)/ && name != "" {st="passed"}
	     /(^|\.\.\.)FAILED$/ && name != "" {st="FAILED"}
	     /^Run Summary/{if (name != "") print name, st; name=""}
	     END {if (name != "") print name, st}' "$1"
}

# summary FILE: "passed total" of the CUnit tests line of a run.
summary() {
	awk '/^ *tests /{print $4, $2; exit}' "$1"
}

# compare_runs TITLE PASSED/RUN(stock) PASSED/RUN(port): $TMP/stock.out
# and $TMP/idm.out as $TMP/*.res, a table of the tests failing on either,
# those passing on the port only; sets WORSE to the tests stock tgtd passes
# and tgtd-on-libidm does not (empty: none).
compare_runs() {
	local better
	results "$TMP/stock.out" | sort >"$TMP/stock.res"
	results "$TMP/idm.out" | sort >"$TMP/idm.res"
	echo
	printf '%-50s %-8s %-8s\n' "$1" "stock" "libidm"
	printf '%-50s %-8s %-8s\n' "tests passed / run" "$2" "$3"
	echo "tests failing on either (or not run):"
	join -a1 -a2 -e missing -o 0,1.2,2.2 "$TMP/stock.res" "$TMP/idm.res" |
		awk '$2 != "passed" || $3 != "passed" {printf "  %-48s %-8s %-8s\n", $1, $2, $3}'
	# shellcheck disable=SC2034 # the callers read it
	WORSE=$(join -a1 -e missing -o 0,1.2,2.2 "$TMP/stock.res" "$TMP/idm.res" |
		awk '$2 == "passed" && $3 != "passed" {print "  " $1 " (" $3 ")"}')
	better=$(join -o 0,1.2,2.2 "$TMP/stock.res" "$TMP/idm.res" |
		awk '$2 != "passed" && $3 == "passed" {print "  " $1}')
	[ -z "$better" ] || printf 'passing on libidm only:\n%s\n' "$better"
}
