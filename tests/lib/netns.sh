# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# A network of the test's own (sourced, not run): the script runs again in
# a network namespace of its own, so that nothing it sets up touches the
# host's network or outlives it, and a veth pair joins that namespace to a
# second one, a "peer" host with an address of its own.
#
#   . tests/lib/netns.sh
#   netns_reexec IDM_MY_NETNS 100 "$0" "$@"   # first: before common.sh
#   . tests/lib/common.sh
#   netns_peer 10.9.0.1 10.9.0.2              # sets IN_PEER, NETNS_DEV
#   "${IN_PEER[@]}" some-client 10.9.0.1 ...

# netns_reexec GUARD SECS SCRIPT ARGS...: unless the variable GUARD is 1,
# run SCRIPT with ARGS again in a network namespace of its own (as root,
# else in an unprivileged user namespace), bounded to SECS, with GUARD=1;
# exit 77 saying why when no namespace can be made.
netns_reexec() {
	local guard=$1 secs=$2 flags
	shift 2
	[ "${!guard:-}" = 1 ] && return 0
	command -v unshare >/dev/null 2>&1 ||
		{ echo "SKIP: unshare not installed (util-linux)"; exit 77; }
	for flags in -n -rn; do
		if unshare "$flags" true 2>/dev/null; then
			export "$guard=1"
			exec timeout -k 5 "$secs" unshare "$flags" "$BASH" "$@"
		fi
	done
	echo "SKIP: cannot create a network namespace (needs CAP_NET_ADMIN: root, or unprivileged user namespaces)"
	exit 77
}

# netns_peer LOCAL_IP PEER_IP [N]: lo up here, and a veth pair from here
# (NETNS_DEV, LOCAL_IP/24) to a second namespace (PEER_IP/24, lo up) held
# open by a process that sleeps in it (NETNS_HOLDER, in PIDS, stopped at
# the end). Sets IN_PEER, the command prefix that runs a command in the
# second namespace. N tells several peers apart: the devices are idm-lN
# here and idm-pN there (idm-l and idm-p without it). Skips (77) without
# a veth pair or a second namespace.
# Needs tests/lib/common.sh (TMP, PIDS, skip, die).
netns_peer() {
	local lip=$1 pip=$2 pdev=idm-p${3:-} holder
	need ip iproute2
	need nsenter util-linux
	NETNS_DEV=idm-l${3:-}
	ip link set lo up || skip "cannot bring lo up in the namespace"
	ip link add "$NETNS_DEV" type veth peer name "$pdev" 2>"$TMP/veth.err" ||
		skip "cannot create a veth pair: $(cat "$TMP/veth.err")"
	{ ip addr add "$lip/24" dev "$NETNS_DEV" && ip link set "$NETNS_DEV" up; } ||
		die "cannot set up $NETNS_DEV"
	unshare --net sleep 3600 &
	holder=$!
	PIDS="$PIDS $holder"
	for _ in $(seq 50); do
		[ "$(readlink "/proc/$holder/ns/net")" != "$(readlink /proc/self/ns/net)" ] && break
		sleep 0.1
	done
	[ "$(readlink "/proc/$holder/ns/net")" != "$(readlink /proc/self/ns/net)" ] ||
		skip "cannot create a second network namespace"
	ip link set "$pdev" netns "$holder" || die "cannot move $pdev"
	# shellcheck disable=SC2034 # read by the callers
	NETNS_HOLDER=$holder
	IN_PEER=(nsenter "--net=/proc/$holder/ns/net")
	{ "${IN_PEER[@]}" ip link set lo up &&
		"${IN_PEER[@]}" ip addr add "$pip/24" dev "$pdev" &&
		"${IN_PEER[@]}" ip link set "$pdev" up; } || die "cannot set up $pdev"
}

# netns_reach IP PORT: wait (5 s) until the second namespace (IN_PEER)
# connects to IP:PORT; dies if it never does.
netns_reach() {
	for _ in $(seq 50); do
		"${IN_PEER[@]}" bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null && return 0
		sleep 0.1
	done
	die "the second namespace cannot reach $1:$2"
}
