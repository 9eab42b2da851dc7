# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# QEMU's block layer (its iscsi driver, built on libiscsi) as the
# initiator of a shell test (sourced after common.sh): qemu-img info,
# qemu-io pattern writes read back with -P, and a qemu-img convert onto
# the LUN and back. Used against idm-target (suite interop) and against
# tgtd on libidm (suite tgt), so that both meet the same checks.

# need_qemu_iscsi: skip unless qemu-img and qemu-io are installed and
# QEMU's iscsi block driver loads (Debian: a module in qemu-block-extra).
# The driver is probed against a port nobody listens on: with it the
# error is libiscsi's ("iSCSI: ..."), without it "Unknown protocol".
need_qemu_iscsi() {
	local port out
	need qemu-img qemu-utils
	need qemu-io qemu-utils
	port=$(free_port) || die "no free port"
	out=$(timeout -k 5 20 qemu-img info -f raw \
		"iscsi://127.0.0.1:$port/iqn.2026-11.org.libidm:probe/1" 2>&1)
	if ! printf '%s\n' "$out" | grep -q 'iSCSI'; then
		printf '%s\n' "$out" | sed 's/^/   | /'
		skip "QEMU's iscsi block driver is missing (Debian package qemu-block-extra)"
	fi
}

# QEMU_IO: "OFFSET LENGTH PATTERN" of each qemu-io write, 512 B to
# 4 MiB, aligned to 4 KiB and not (offsets and lengths in 512-byte
# sectors, the LUN's block size), none overlapping, all below 32 MiB.
QEMU_IO=(
	"0 512 0x11"
	"4096 4096 0x22"
	"9728 7680 0x33"
	"65536 65536 0x44"
	"1049088 132608 0x55"
	"2097152 1048576 0x66"
	"3670528 1048064 0x77"
	"8388608 4194304 0xab"
	"13110784 4193792 0xcd"
	"20971520 3584 0xef"
)

# qemu_checks URL SIZE ALIVE: the checks against the LUN at URL, of SIZE
# bytes; ALIVE is a command that fails once the target died (run after
# every step). Dies at the first failure, prints a line per check passed.
qemu_checks() {
	local url=$1 size=$2 alive=$3 io cmds=() rcmds=() off len pat n=0
	log "qemu-img info $url"
	run_bounded 30 "$TMP/qemu-info.out" qemu-img info -f raw "$url" ||
		die "qemu-img info failed"
	grep -q "virtual size: .*($size bytes)" "$TMP/qemu-info.out" ||
		die "qemu-img info: not $size bytes"
	$alive
	for io in "${QEMU_IO[@]}"; do
		read -r off len pat <<<"$io"
		cmds+=(-c "write -P $pat $off $len" -c "read -P $pat $off $len")
		rcmds+=(-c "read -P $pat $off $len")
		n=$((n + 1))
	done
	# each write read back at once, in one session
	log "qemu-io: $n pattern writes (512 B to 4 MiB), each read back with -P"
	run_bounded 120 "$TMP/qemu-io.out" qemu-io -f raw "${cmds[@]}" "$url" ||
		die "qemu-io write/read failed"
	qemu_io_ok "$TMP/qemu-io.out" $((2 * n)) || die "qemu-io write/read"
	$alive
	# all of them again in a new session: nothing overwritten by a later
	# write, nothing lost with the first session's logout
	log "qemu-io: the $n patterns read again in a new session"
	run_bounded 120 "$TMP/qemu-io2.out" qemu-io -f raw -r "${rcmds[@]}" "$url" ||
		die "qemu-io read-back failed"
	qemu_io_ok "$TMP/qemu-io2.out" "$n" || die "qemu-io read-back"
	$alive
	echo "ok   qemu-io: $n writes and $((2 * n)) pattern-verified reads"

	# 16 MiB + 4.5 KiB: the last request not a multiple of 4 KiB
	log "qemu-img convert: a random file onto the LUN and back"
	head -c $((16 * 1048576 + 4608)) /dev/urandom >"$TMP/qemu-rand.img" ||
		die "random file"
	run_bounded 120 "$TMP/qemu-conv1.out" qemu-img convert -p -n -f raw -O raw \
		"$TMP/qemu-rand.img" "$url" || die "qemu-img convert onto the LUN failed"
	$alive
	run_bounded 120 "$TMP/qemu-conv2.out" qemu-img convert -p -f raw -O raw \
		"$url" "$TMP/qemu-back.img" || die "qemu-img convert from the LUN failed"
	$alive
	[ "$(stat -c %s "$TMP/qemu-back.img")" = "$size" ] ||
		die "the copy of the LUN is not $size bytes"
	cmp -n "$(stat -c %s "$TMP/qemu-rand.img")" "$TMP/qemu-rand.img" \
		"$TMP/qemu-back.img" || die "the LUN's copy differs from the file written"
	echo "ok   qemu-img convert: 16 MiB + 4.5 KiB onto the LUN and back, cmp equal"
	rm -f "$TMP/qemu-rand.img" "$TMP/qemu-back.img"
}

# qemu_io_ok OUT N: OUT (qemu-io's output) has N completed requests and
# no failure (qemu-io prints a failed -P check and carries on).
qemu_io_ok() {
	local got
	if grep -Eiq 'fail|error|mismatch' "$1"; then
		echo "qemu-io reported a failure"
		return 1
	fi
	got=$(grep -Ec '^(wrote|read) [0-9]+/[0-9]+ bytes' "$1")
	[ "$got" = "$2" ] || { echo "qemu-io: $got of $2 requests completed"; return 1; }
}
