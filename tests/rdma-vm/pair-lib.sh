# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# pair-lib.sh: sourced by test scripts that run in guest B of a vm-pair
# (tests/rdma-vm/vm-pair, suite rdma-pair). It drives guest A through the
# pair's agent and the link between the guests. The interface:
#
#   pair_require                  exit 77 (with the reason) unless this is B of a pair
#   pair_a_start NAME CMD...      start CMD in A, in the background, with this
#                                 shell's cwd and exported environment (A's own
#                                 IDM_RDMA_IP, IDM_PAIR_ROLE, IDM_PAIR_PEER_IP)
#   pair_a_log NAME               print the path of NAME's output (readable in B)
#   pair_a_wait_log NAME REGEX TIMEOUT
#                                 wait until NAME's output matches the extended
#                                 REGEX; non-zero on timeout or if NAME exited
#   pair_a_stop NAME [SIGNAL]     signal NAME's process group (TERM; KILL 10 s
#                                 later), wait, echo and return its exit status
#   pair_a_status NAME            echo NAME's exit status; non-zero while it runs
#   pair_a_run TIMEOUT CMD...     run CMD in A, wait (at most TIMEOUT s, then it
#                                 is killed: 124), print its output, return its status
#   pair_link cut|restore         mid-path cut: every frame of both directions is
#                                 dropped on arrival, both NICs keep carrier
#   pair_link down|up             carrier loss on both NICs (QEMU set_link)
#   pair_link ifdown|ifup         A's NIC administratively down/up (ip link set
#                                 inside A): its routes go, rxe's port goes down
#   pair_rxe_counters A|B         that guest's rxe hw counters, NAME=VALUE lines
#   pair_wire_report LABEL BEFORE_A_FILE BEFORE_B_FILE
#                                 the counters' deltas since the two snapshots
#   pair_wire_begin / pair_wire_end LABEL
#                                 the same with snapshots kept in $PAIR_TMP
#   pair_signal NAME / pair_wait NAME TIMEOUT
#                                 a barrier, usable from jobs in A as well
#
# Functions return non-zero on failure and print why on stderr; they never
# exit, except pair_require.

# Process creation costs ~0.1-0.2 s in a TCG guest whose root is 9p, so
# the polling loops below use only builtins: _pair_sleep waits on a FIFO
# nobody writes to (read -t) instead of running sleep(1), and files are
# read with read, not cat.
_pair_sleep() {
	local f
	if [ -z "${_PAIR_SLEEP_FD:-}" ] || [ ! -e "/proc/$BASHPID/fd/$_PAIR_SLEEP_FD" ]; then
		f=/tmp/pair-sleep.$BASHPID.$RANDOM
		mkfifo "$f" && exec {_PAIR_SLEEP_FD}<>"$f"
		rm -f "$f"
	fi
	read -r -t "$1" -u "$_PAIR_SLEEP_FD" _ || true
}
_pair_read() { # _pair_read FILE: its first line into _PAIR_V, without a process
	_PAIR_V=
	[ -s "$1" ] && IFS= read -r _PAIR_V < "$1" 2>/dev/null
}

# IDM_PAIR_SYNC: the directory both guests share (uncached 9p, guest-pair).

pair_require() {
	if [ "${IDM_PAIR_ROLE:-}" != B ] || [ ! -d "${IDM_PAIR_SYNC:-/nonexistent}/jobs" ]; then
		echo "SKIP: needs guest B of the two-guest rig (tests/rdma-vm/ci-pair.sh," \
			"tests/rdma-vm/vm-pair); IDM_PAIR_ROLE='${IDM_PAIR_ROLE:-}'"
		exit 77
	fi
	if [ ! -d "/sys/class/infiniband/${IDM_RDMA_DEV:-rxe0}" ]; then
		echo "SKIP: no RDMA device ${IDM_RDMA_DEV:-rxe0} in guest B"
		exit 77
	fi
	PAIR_TMP=${PAIR_TMP:-$(mktemp -d /tmp/idm-pair-test.XXXXXX)}
}

_pair_name_ok() {
	case "$1" in
	'' | *[!A-Za-z0-9._-]*) echo "pair-lib: bad job name '$1'" >&2; return 1 ;;
	esac
}

_pair_request() { # _pair_request DIR WORDS...: one request file, renamed into place
	local dir=$1 f
	shift
	f=$dir/${EPOCHREALTIME/[.,]/}.$BASHPID.$RANDOM
	echo "$*" > "$f.tmp" && mv "$f.tmp" "$f.req" && printf '%s' "$f"
}

pair_a_log() { printf '%s\n' "${IDM_PAIR_SYNC:?}/jobs/$1/log"; }

pair_a_start() {
	local name=$1 d
	shift
	_pair_name_ok "$name" || return 1
	[ $# -gt 0 ] || { echo "pair-lib: pair_a_start $name: no command" >&2; return 1; }
	d=${IDM_PAIR_SYNC:?}/jobs/$name
	if [ -e "$d/job.sh" ] && [ ! -e "$d/rc" ]; then
		echo "pair-lib: job $name is already running in A" >&2
		return 1
	fi
	[ ! -e "$d" ] || rm -rf "$d"
	mkdir -p "$d"
	# (the agent reads job.sh only after the request below exists)
	{
		export -p
		printf '. %q\n' "${IDM_PAIR_SYNC:?}/A.env"
		printf 'cd -- %q || exit 126\n' "$PWD"
		printf 'exec'
		printf ' %q' "$@"
		printf '\n'
	} > "$d/job.sh"
	_pair_request "${IDM_PAIR_SYNC:?}/q" start "$name" > /dev/null
}

pair_a_status() { _pair_read "${IDM_PAIR_SYNC:?}/jobs/$1/rc" && echo "$_PAIR_V"; }

# The log is read as it grows, line by line, from one descriptor, and
# matched with bash's own ERE matcher ([[ =~ ]], as grep -E): no process
# per poll.
pair_a_wait_log() {
	local name=$1 re=$2 secs=$3 log i fd='' line part='' ended=''
	log=${IDM_PAIR_SYNC:?}/jobs/$name/log
	for ((i = 0; i <= secs * 5; i++)); do
		[ -n "$fd" ] || [ ! -e "$log" ] || exec {fd}< "$log"
		if [ -n "$fd" ]; then
			while IFS= read -r -u "$fd" line; do
				line=$part$line part=
				[[ $line =~ $re ]] && { exec {fd}<&-; return 0; }
			done
			part+=$line # an unfinished last line: keep it for the next pass
			[[ $part =~ $re ]] && { exec {fd}<&-; return 0; }
		fi
		[ -z "$ended" ] || break
		# once the job has ended, one more pass over the rest of its log
		if _pair_read "${IDM_PAIR_SYNC:?}/jobs/$name/rc"; then ended=$_PAIR_V; continue; fi
		_pair_sleep 0.2
	done
	[ -z "$fd" ] || exec {fd}<&-
	if [ -n "$ended" ]; then
		echo "pair-lib: $name ended (status $ended) before its output matched '$re'" >&2
	else
		echo "pair-lib: $name's output did not match '$re' within $secs s" >&2
	fi
	return 1
}

pair_a_stop() {
	local name=$1 sig=${2:-TERM} d i
	d=${IDM_PAIR_SYNC:?}/jobs/$name
	[ -e "$d/job.sh" ] || { echo "pair-lib: no job $name" >&2; return 1; }
	if [ ! -e "$d/rc" ]; then
		_pair_request "${IDM_PAIR_SYNC:?}/q" stop "$name" "${sig#SIG}" > /dev/null
		# the agent sends KILL after 10 s; allow for its polling
		for ((i = 0; i < 150; i++)); do [ -s "$d/rc" ] && break; _pair_sleep 0.2; done
	fi
	_pair_read "$d/rc" || { echo "pair-lib: job $name did not end" >&2; return 1; }
	echo "$_PAIR_V"
	return "$_PAIR_V"
}

pair_a_run() {
	local secs=$1 name i rc l
	shift
	name=run.$BASHPID.$RANDOM
	pair_a_start "$name" timeout -k 5 "$secs" "$@" || return 1
	for ((i = 0; i < (secs + 30) * 10; i++)); do
		[ -s "${IDM_PAIR_SYNC:?}/jobs/$name/rc" ] && break
		_pair_sleep 0.1
	done
	_pair_read "${IDM_PAIR_SYNC:?}/jobs/$name/rc" || pair_a_stop "$name" KILL > /dev/null
	while IFS= read -r l || [ -n "$l" ]; do printf '%s\n' "$l"; done < "${IDM_PAIR_SYNC:?}/jobs/$name/log"
	_pair_read "${IDM_PAIR_SYNC:?}/jobs/$name/rc" && rc=$_PAIR_V || rc=1
	rm -rf "${IDM_PAIR_SYNC:?}/jobs/$name"
	return "$rc"
}

# The cut drops every frame on arrival at each NIC (tc ingress, matchall,
# drop): frames still leave the sender and cross the link, so the capture
# shows what each side (re)sent during the cut, and neither side sees a
# local error or loses carrier, as behind a failed switch. A's half is
# applied through the agent right after B's, so frames from A reach B for
# up to ~0.5 s longer than frames from B reach A.
# shellcheck disable=SC2016 # expanded by the bash that runs it, in each guest
_PAIR_CUT='modprobe -q -a sch_ingress cls_matchall act_gact 2>/dev/null; tc qdisc add dev "$IDM_PAIR_NETDEV" handle ffff: ingress && tc filter add dev "$IDM_PAIR_NETDEV" parent ffff: protocol all prio 1 matchall action drop'
# shellcheck disable=SC2016
_PAIR_RESTORE='tc qdisc del dev "$IDM_PAIR_NETDEV" handle ffff: ingress'

pair_link() {
	local rc=0 req i want
	case "$1" in
	cut)
		bash -c "$_PAIR_CUT" || rc=1
		pair_a_run 30 bash -c "$_PAIR_CUT" || rc=1
		;;
	restore)
		bash -c "$_PAIR_RESTORE" || rc=1
		pair_a_run 30 bash -c "$_PAIR_RESTORE" || rc=1
		;;
	down | up)
		[ "$1" = down ] && want=0 || want=1
		req=$(_pair_request "${IDM_PAIR_SYNC:?}/host" link "$([ "$1" = down ] && echo off || echo on)")
		for ((i = 0; i < 100; i++)); do [ -s "$req.done" ] && break; _pair_sleep 0.1; done
		_pair_read "$req.done"
		[ "$_PAIR_V" = ok ] || {
			echo "pair-lib: the host did not carry out 'link $1' (${req##*/})" >&2
			return 1
		}
		rm -f "$req.done"
		# the guest sees the carrier change a moment later
		for ((i = 0; i < 50; i++)); do
			_pair_read "/sys/class/net/$IDM_PAIR_NETDEV/carrier" && [ "$_PAIR_V" = "$want" ] && break
			_pair_sleep 0.1
		done
		;;
	ifdown | ifup)
		# IFF_UP cleared in A: unlike carrier loss, the connected route
		# goes too (doc/iser.md). ifup waits for the route's return.
		# shellcheck disable=SC2016 # expanded in A
		pair_a_run 30 bash -c 'ip link set dev "$IDM_PAIR_NETDEV" '"${1#if}" > /dev/null || rc=1
		if [ "$1" = ifup ]; then
			# shellcheck disable=SC2016 # expanded in A
			pair_a_run 30 bash -c 'for ((i = 0; i < 100; i++)); do
				[ "$(cat /sys/class/net/$IDM_PAIR_NETDEV/operstate)" = up ] &&
				ip -4 route show dev "$IDM_PAIR_NETDEV" | grep -q . && exit 0
				sleep 0.1; done; exit 1' || rc=1
		fi
		;;
	*)
		echo "pair-lib: pair_link cut|restore|down|up|ifdown|ifup" >&2
		return 1
		;;
	esac
	printf 'pair-lib: link %s at %(%H:%M:%S)T.%s (B'"'"'s clock)\n' "$1" "${EPOCHREALTIME%[.,]*}" "${EPOCHREALTIME#*[.,]}" >&2
	return "$rc"
}

# shellcheck disable=SC2016
_PAIR_COUNTERS='for f in /sys/class/infiniband/${IDM_RDMA_DEV:-rxe0}/ports/1/hw_counters/*; do read -r v < "$f"; echo "${f##*/}=$v"; done'

pair_rxe_counters() {
	case "$1" in
	B) (eval "$_PAIR_COUNTERS") ;;
	A) pair_a_run 30 bash -c "$_PAIR_COUNTERS" ;;
	*) echo "pair-lib: pair_rxe_counters A|B" >&2; return 1 ;;
	esac
}

# pair_wire_report LABEL BEFORE_A BEFORE_B: one line per counter that
# moved, the ones that tell of trouble on the wire first, e.g.
#   wire[mw-10k] rcvd_rnr_err            A=0 B=12   RNR NAKs received (the peer had no Receive posted)
pair_wire_report() {
	local label=$1 ba=$2 bb=$3 na nb
	na=$(mktemp "${PAIR_TMP:-/tmp}/wire-a.XXXXXX")
	nb=$(mktemp "${PAIR_TMP:-/tmp}/wire-b.XXXXXX")
	pair_rxe_counters A > "$na" || { rm -f "$na" "$nb"; return 1; }
	pair_rxe_counters B > "$nb"
	awk -v label="$label" '
	BEGIN {
		n = split("rcvd_rnr_err send_rnr_err retry_rnr_exceeded_err " \
			"rcvd_seq_err out_of_seq_request duplicate_request " \
			"completer_retry_err retry_exceeded_err send_err link_downed " \
			"rdma_sends rdma_recvs sent_pkts rcvd_pkts ack_deferred", order, " ")
		what["rcvd_rnr_err"] = "RNR NAKs received (the peer had no Receive posted)"
		what["send_rnr_err"] = "RNR NAKs sent (a Send found no Receive posted here)"
		what["retry_rnr_exceeded_err"] = "RNR retries exhausted (QP to error)"
		what["rcvd_seq_err"] = "PSN sequence-error NAKs received"
		what["out_of_seq_request"] = "requests with a PSN gap received (answered by a sequence NAK)"
		what["duplicate_request"] = "duplicate requests received (the peer retransmitted)"
		what["completer_retry_err"] = "retransmissions after an ACK timeout or NAK"
		what["retry_exceeded_err"] = "transport retries exhausted (QP to error)"
		what["send_err"] = "packets the NIC could not send"
		what["link_downed"] = "port went down"
		what["rdma_sends"] = "Send packets sent"
		what["rdma_recvs"] = "Send packets received"
		what["sent_pkts"] = "RoCE packets sent"
		what["rcvd_pkts"] = "RoCE packets received"
		what["ack_deferred"] = "ACKs deferred"
	}
	{ split($0, kv, "="); v[FILENAME, kv[1]] = kv[2]; names[kv[1]] = 1 }
	END {
		for (i = 1; i <= n; i++) { show(order[i]); done[order[i]] = 1 }
		# the rest only when they moved (lifespan is a setting, not a count)
		for (c in names)
			if (!(c in done) && c != "lifespan" &&
			    (v[ARGV[3], c] != v[ARGV[1], c] || v[ARGV[4], c] != v[ARGV[2], c]))
				show(c)
	}
	function show(c,   da, db) {
		if (!(c in names)) return
		da = v[ARGV[3], c] - v[ARGV[1], c]; db = v[ARGV[4], c] - v[ARGV[2], c]
		printf "wire[%s] %-24s A=%-8d B=%-8d %s\n", label, c, da, db, what[c]
	}' "$ba" "$bb" "$na" "$nb"
	rm -f "$na" "$nb"
}

pair_wire_begin() {
	: "${PAIR_TMP:?pair_require first}"
	pair_rxe_counters A > "$PAIR_TMP/wire.A" && pair_rxe_counters B > "$PAIR_TMP/wire.B"
}
pair_wire_end() { pair_wire_report "$1" "$PAIR_TMP/wire.A" "$PAIR_TMP/wire.B"; }

pair_signal() {
	_pair_name_ok "$1" || return 1
	mkdir -p "${IDM_PAIR_SYNC:?}/sig" && touch "${IDM_PAIR_SYNC:?}/sig/$1"
}

pair_wait() {
	local f i
	f=${IDM_PAIR_SYNC:?}/sig/$1
	for ((i = 0; i <= ${2:-60} * 5; i++)); do
		[ -e "$f" ] && return 0
		_pair_sleep 0.2
	done
	echo "pair-lib: no signal $1 within ${2:-60} s" >&2
	return 1
}

# pair_gid_index: the GID index of this guest's IPv4 address on rxe0, for
# verbs tools that take one (-g / -x); rxe lists it after the link-local.
# (the directory of this file without running dirname: see _pair_sleep)
_pair_dir=${BASH_SOURCE[0]%/*}
[ "$_pair_dir" != "${BASH_SOURCE[0]}" ] || _pair_dir=.
# shellcheck source-path=SCRIPTDIR source=gid.sh
. "$_pair_dir/gid.sh"
pair_gid_index() {
	rdma_gid_index "${IDM_RDMA_DEV:-rxe0}" "$IDM_RDMA_IP"
}
