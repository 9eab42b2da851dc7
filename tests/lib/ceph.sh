# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# A one-node Ceph cluster that a test starts and stops by itself (sourced,
# not run), from Debian's packages (ceph-mon, ceph-osd, ceph-common): one
# monitor on 127.0.0.1 or CEPH_ADDR (a free port, msgr2 only), CEPH_OSDS OSDs
# (default 1) on the in-memory object store, a pool and an RBD image.
# No manager: RBD's data path, pool and image management need only the
# monitor and the OSDs (a manager would add ~100 MB of Python and seconds
# of start-up for nothing a test here asks of it).
#
#   . tests/lib/common.sh        # (or let this file source it)
#   . tests/lib/ceph.sh
#   ceph_up "$TMP/ceph"          # exit 77 when a package is missing
#   rbd info "$CEPH_POOL/$CEPH_IMAGE"   # CEPH_CONF is exported
#   ceph_rss                     # "mon=KiB osd.0=KiB ... total=KiB"
#   kr=$(ceph_user gw)           # client.gw, RBD caps on the pool only
#   ceph_down                    # also run on exit
#
# Before ceph_up (all optional): CEPH_POOL (rbd), CEPH_IMAGE (img),
# CEPH_IMAGE_SIZE (256M), CEPH_IMAGE_FEATURES (rbd's default set when
# unset: layering, exclusive-lock, object-map, fast-diff, deep-flatten),
# CEPH_OSDS (1), CEPH_ADDR (127.0.0.1: the address the monitor and the
# OSDs bind, e.g. one that other network namespaces reach),
# CEPH_CONF_EXTRA (lines added to the configuration's [global] section,
# read by every daemon from its start), CEPH_OBJECTSTORE (memstore; bluestore puts each OSD on a
# sparse file in DIR), CEPH_MEMSTORE_BYTES (2G: each memstore OSD's
# capacity, taken from RAM only as data is written), CEPH_START_GUARD (120:
# hang guard in seconds, scaled by IDM_TEST_TIME_SCALE).
# After it, exported: CEPH_DIR, CEPH_CONF (the configuration file;
# librados, `ceph` and `rbd` find it through the environment),
# CEPH_KEYRING (the cephx keyring, mode 0600, holding every key of the
# cluster; the configuration names it), CEPH_USER (admin: the cephx id a
# client gives, client.admin, every tool's default), CEPH_MON_ADDR
# (v2:127.0.0.1:PORT), CEPH_POOL, CEPH_IMAGE, CEPH_IMAGE_SIZE,
# CEPH_START_SECONDS (wall time of ceph_up), CEPH_PIDS (the monitor's
# process first, then the OSDs').
#
# Why memstore: on this 2-core machine under load a bluestore OSD on a
# file started in 17.6 s against memstore's 12.1 s (3.9-5 s at a lower
# load), and wrote 4 KiB at QD16 at 1.3k IOPS against 3.3k; memstore has
# no mkfs of RocksDB and no file to allocate. Its price is memory: the
# OSD holds what was written (4 KiB pages, `memstore page set`; without
# it each small write pinned its whole receive buffer: 465 MB after 32 MB
# of 4 KiB writes) and loses it when it stops, which a test wants anyway.
#
# Everything lives in DIR (configuration, keyring, monitor store, OSD
# data, logs, admin sockets, pid files, crash dumps): nothing is written
# under /etc/ceph, /var/lib/ceph, /var/log/ceph or /run/ceph. The daemons
# run in the foreground as children of the test's shell, are stopped by
# ceph_down and, through on_exit, when the test exits. Start-up waits on
# events only (the monitor answering `ceph osd new`, `rbd create` returning
# once the pool's placement groups are active), each under the hang guard.
# A test that runs ceph_up in a network namespace of its own needs its
# loopback up first (`ip link set lo up`).

if [ -z "${IDM_COMMON_SOURCED:-}" ]; then
	# shellcheck source-path=SCRIPTDIR source=common.sh
	. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fi

CEPH_PIDS=""
CEPH_DIR=""
CEPH_POOL_JOB=""
CEPH_WATCHDOG=""

# ceph_need: exit 77, naming the Debian package, when a tool is missing.
ceph_need() {
	need ceph-mon ceph-mon
	need ceph-osd ceph-osd
	need ceph ceph-common
	need rbd ceph-common
	need ceph-authtool ceph-common
	need monmaptool ceph-common
}

# ceph_fail WHY: the cluster did not come up: say why, with the tail of
# the daemons' logs, stop what runs and fail the test.
ceph_fail() {
	local f
	echo "ceph: $*"
	for f in "$CEPH_DIR"/log/*.out "$CEPH_DIR"/log/mon.a.log "$CEPH_DIR"/log/osd.*.log; do
		[ -s "$f" ] || continue
		echo "--- tail of $f"
		tail -15 "$f"
	done
	# the pool's job, if still waiting for the monitor (timeout passes
	# the TERM on to its command)
	if [ -n "${CEPH_POOL_JOB:-}" ]; then
		pkill -TERM -P "$CEPH_POOL_JOB" 2>/dev/null
		wait "$CEPH_POOL_JOB" 2>/dev/null
		CEPH_POOL_JOB=
	fi
	ceph_down
	die "one-node Ceph did not start: $*"
}

# ceph_alive PID NAME: fail at once when a daemon has exited.
ceph_alive() { kill -0 "$1" 2>/dev/null || ceph_fail "$2 exited"; }

# ceph_up DIR: start the cluster in DIR (made, must be empty or absent);
# returns once the image answers. Fails the test (die) when it cannot.
ceph_up() {
	local dir=$1 t0 port fsid i uuid id pid guard store nosd
	ceph_need
	[ -z "$CEPH_PIDS" ] || die "ceph_up: a cluster is already running"
	# in a subshell (a pipeline, $(...)) the daemons would outlive it:
	# nothing would stop them on exit
	[ "$BASHPID" = "$$" ] ||
		die "ceph_up: call it in the test's own shell, not in a pipeline or \$(...)"
	t0=$(date +%s.%N)
	mkdir -p "$dir" || die "ceph_up: cannot make $dir"
	dir=$(cd "$dir" && pwd) || die "ceph_up: cannot enter $dir"
	[ -z "$(ls -A "$dir")" ] || die "ceph_up: $dir is not empty"
	CEPH_DIR=$dir
	on_exit ceph_down
	guard=$(scaled "${CEPH_START_GUARD:-120}")
	store=${CEPH_OBJECTSTORE:-memstore}
	case $store in memstore|bluestore) ;; *) die "ceph_up: CEPH_OBJECTSTORE=$store (memstore or bluestore)" ;; esac
	CEPH_POOL=${CEPH_POOL:-rbd}
	CEPH_IMAGE=${CEPH_IMAGE:-img}
	CEPH_IMAGE_SIZE=${CEPH_IMAGE_SIZE:-256M}
	CEPH_USER="admin"
	nosd=${CEPH_OSDS:-1}
	[[ $nosd =~ ^[1-9]$ ]] || die "ceph_up: CEPH_OSDS=$nosd (1 to 9)"
	mkdir -p "$dir"/{mon,run,log,crash} || die "ceph_up: mkdir"
	port=$(free_port) || die "ceph_up: no free port"
	fsid=$(cat /proc/sys/kernel/random/uuid)
	CEPH_MON_ADDR=v2:${CEPH_ADDR:-127.0.0.1}:$port
	CEPH_CONF=$dir/ceph.conf
	CEPH_KEYRING=$dir/keyring
	# $name and $id are Ceph's metavariables, expanded by each daemon
	cat >"$CEPH_CONF" <<-EOF
	[global]
	fsid = $fsid
	mon host = $CEPH_MON_ADDR
	public addr = ${CEPH_ADDR:-127.0.0.1}
	ms bind msgr1 = false
	ms bind ipv6 = false
	auth cluster required = cephx
	auth service required = cephx
	auth client required = cephx
	auth allow insecure global id reclaim = false
	keyring = $CEPH_KEYRING
	run dir = $dir/run
	pid file = $dir/run/\$name.pid
	log file = $dir/log/\$name.log
	mon cluster log file = $dir/log/cluster.log
	crash dir = $dir/crash
	osd pool default size = 1
	osd pool default min size = 1
	osd pool default pg num = 8
	osd pool default pgp num = 8
	osd crush chooseleaf type = 0
	mon allow pool size one = true
	mon allow pool delete = true
	mon warn on pool no redundancy = false
	${CEPH_CONF_EXTRA:-}
	[client]
	# one per client handle: a test runs several clients at once
	admin socket = $dir/run/\$name.\$pid.\$cctid.asok
	[mon]
	admin socket = $dir/run/\$name.asok
	mon data = $dir/mon
	# commit map changes (OSD up, pool made) at once, not once a second
	paxos propose interval = 0.05
	paxos min wait = 0.01
	[osd]
	admin socket = $dir/run/\$name.asok
	osd data = $dir/osd\$id
	osd objectstore = $store
	memstore device bytes = $(numfmt --from=iec "${CEPH_MEMSTORE_BYTES:-2G}")
	memstore page set = true
	memstore page size = 4096
	bluestore block path = $dir/osd\$id.block
	bluestore block size = 4294967296
	bluestore block create = true
	bluestore cache autotune = false
	bluestore cache size = 134217728
	osd memory target = 939524096
	EOF
	export CEPH_CONF CEPH_KEYRING CEPH_USER CEPH_MON_ADDR CEPH_POOL CEPH_IMAGE \
		CEPH_IMAGE_SIZE CEPH_DIR
	# one keyring for the whole cluster, readable by its owner only: the
	# monitor imports every key in it at mkfs, the OSDs' too
	(
		set -e
		umask 077
		ceph-authtool --create-keyring "$CEPH_KEYRING" --gen-key -n mon. \
			--cap mon 'allow *'
		ceph-authtool "$CEPH_KEYRING" --gen-key -n client.admin \
			--cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *'
		for ((i = 0; i < nosd; i++)); do
			ceph-authtool "$CEPH_KEYRING" --gen-key -n "osd.$i" \
				--cap mon 'allow profile osd' --cap osd 'allow *' \
				--cap mgr 'allow profile osd'
		done
		monmaptool --create --fsid "$fsid" --addv a "[$CEPH_MON_ADDR]" "$dir/monmap"
		ceph-mon --mkfs -i a --monmap "$dir/monmap" --keyring "$CEPH_KEYRING"
	) >"$dir/log/setup.out" 2>&1 || ceph_fail "keyring or monitor mkfs"
	chmod 600 "$CEPH_KEYRING"
	ceph-mon -f -i a >"$dir/log/mon.out" 2>&1 &
	CEPH_PIDS=$!
	# the pool is made while the OSDs start (each `ceph` call waits for
	# the monitor to answer, retrying the connection by itself)
	{
		timeout -k 5 "$guard" ceph osd pool create "$CEPH_POOL" &&
		timeout -k 5 "$guard" ceph osd pool application enable "$CEPH_POOL" rbd
	} >"$dir/log/pool.out" 2>&1 &
	CEPH_POOL_JOB=$!
	for ((i = 0; i < nosd; i++)); do
		uuid=$(cat /proc/sys/kernel/random/uuid)
		id=$(timeout -k 5 "$guard" ceph osd new "$uuid" "$i" 2>>"$dir/log/setup.out") || {
			ceph_alive "${CEPH_PIDS%% *}" ceph-mon
			ceph_fail "'ceph osd new' got no answer from the monitor within $guard s"
		}
		[ "$id" = "$i" ] || ceph_fail "'ceph osd new' gave id '$id', wanted $i"
		mkdir -p "$dir/osd$i"
		timeout -k 5 "$guard" ceph-osd -i "$i" --mkfs --osd-uuid "$uuid" \
			>>"$dir/log/setup.out" 2>&1 || ceph_fail "osd.$i mkfs"
		ceph-osd -f -i "$i" >"$dir/log/osd.$i.out" 2>&1 &
		CEPH_PIDS="$CEPH_PIDS $!"
	done
	wait "$CEPH_POOL_JOB" || ceph_fail "pool $CEPH_POOL: $(tail -3 "$dir/log/pool.out")"
	CEPH_POOL_JOB=
	# should the test's shell be killed (SIGKILL: no trap runs), the
	# daemons go too: a watcher that waits for the shell to go
	# shellcheck disable=SC2086 # one PID per word
	ceph_watchdog $$ $CEPH_PIDS &
	CEPH_WATCHDOG=$!
	# returns once the pool's placement groups are active on the OSDs
	timeout -k 5 "$guard" rbd create --size "$CEPH_IMAGE_SIZE" \
		${CEPH_IMAGE_FEATURES:+--image-feature "$CEPH_IMAGE_FEATURES"} \
		"$CEPH_POOL/$CEPH_IMAGE" >>"$dir/log/setup.out" 2>&1 ||
		ceph_fail "rbd create $CEPH_POOL/$CEPH_IMAGE did not finish within $guard s"
	for pid in $CEPH_PIDS; do ceph_alive "$pid" "a daemon ($pid)"; done
	CEPH_START_SECONDS=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	export CEPH_PIDS CEPH_START_SECONDS
	echo "ceph: one-node cluster up in $CEPH_START_SECONDS s ($CEPH_MON_ADDR, $nosd $store OSD(s), image $CEPH_POOL/$CEPH_IMAGE of $CEPH_IMAGE_SIZE)"
}

# ceph_user NAME: a cephx user client.NAME with RBD's caps on CEPH_POOL
# only (mon 'profile rbd', osd 'profile rbd pool=POOL'); writes its own
# keyring, mode 0600, and prints its path.
ceph_user() {
	local kr=$CEPH_DIR/client.$1.keyring
	(umask 077 && timeout -k 5 "$(scaled 60)" ceph auth get-or-create "client.$1" \
		mon 'profile rbd' osd "profile rbd pool=$CEPH_POOL" -o "$kr") \
		>>"$CEPH_DIR/log/setup.out" 2>&1 || die "ceph_user $1: ceph auth get-or-create failed"
	chmod 600 "$kr"
	echo "$kr"
}

# ceph_watchdog SHELL_PID PID...: once SHELL_PID has gone, KILL the PIDs
# (the daemons; ceph_down ends this watcher first). Polls once a second:
# a fallback for a test killed without its trap, not a test's wait.
ceph_watchdog() {
	local shell=$1 p
	shift
	trap - EXIT
	while kill -0 "$shell" 2>/dev/null; do sleep 1; done
	for p in "$@"; do kill -KILL "$p" 2>/dev/null; done
}

# ceph_rss: the daemons' resident memory now, in KiB, one word each
# (mon=N osd.0=N ... total=N).
ceph_rss() {
	local pid name kib total=0 out="" i=0
	for pid in $CEPH_PIDS; do
		if [ $i = 0 ]; then name=mon; else name=osd.$((i - 1)); fi
		i=$((i + 1))
		kib=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
		out="$out$name=${kib:-0} "
		total=$((total + ${kib:-0}))
	done
	echo "${out}total=$total"
}

# ceph_down: stop the OSDs, then the monitor (TERM, KILL after 10 s), and
# reap them. Leaves CEPH_DIR for the caller's temp dir to remove (its logs
# may explain a failure). Safe to call twice.
ceph_down() {
	local pid osds mon
	[ -n "$CEPH_PIDS" ] || return 0
	if [ -n "${CEPH_WATCHDOG:-}" ]; then
		kill "$CEPH_WATCHDOG" 2>/dev/null
		wait "$CEPH_WATCHDOG" 2>/dev/null
		CEPH_WATCHDOG=
	fi
	mon=${CEPH_PIDS%% *}
	osds=${CEPH_PIDS#"$mon"}
	for pid in $osds; do kill -TERM "$pid" 2>/dev/null; done
	for pid in $osds $mon; do stop_pid "$pid" 10; done
	CEPH_PIDS=""
}
