#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Every bad input of idm-target and idm-initiator is refused at start-up
# with a message naming it and exit status 2; --version and IDM_LOG_LEVEL.
# usage: bad_input.sh IDM_TARGET IDM_INITIATOR
IDM_TARGET=$(realpath "$1")
IDM_INITIATOR=$(realpath "$2")
. "$(dirname "$0")/lib.sh"

T=("$IDM_TARGET" --portal 127.0.0.1:0 --log-target stderr)

# --version
expect_run "idm-target --version" 0 "^idm-target [0-9]+\.[0-9]+\.[0-9]+ \(libidm [0-9]+\.[0-9]+\.[0-9]+\)$" "$IDM_TARGET" --version
expect_run "idm-target -V" 0 "^idm-target .*libidm" "$IDM_TARGET" -V
expect_run "idm-initiator --version" 0 "^idm-initiator [0-9]+\.[0-9]+\.[0-9]+ \(libidm [0-9]+\.[0-9]+\.[0-9]+\)$" "$IDM_INITIATOR" --version

# -k: value type, range, unknown keys; X- keys are allowed
expect_run "-k MaxBurstLength=abc" 2 "option --key: MaxBurstLength='abc': must be a number from 512 to 16777215" "${T[@]}" --lun ram:1M -k MaxBurstLength=abc
expect_run "-k MaxBurstLength=1" 2 "MaxBurstLength='1': must be a number from 512 to 16777215" "${T[@]}" --lun ram:1M -k MaxBurstLength=1
expect_run "-k MaxBurstLength=16777216" 2 "MaxBurstLength='16777216': must be a number from 512 to 16777215" "${T[@]}" --lun ram:1M -k MaxBurstLength=16777216
expect_run "-k ImmediateData=maybe" 2 "ImmediateData='maybe': must be Yes or No" "${T[@]}" --lun ram:1M -k ImmediateData=maybe
expect_run "-k Bogus=1" 2 "unknown key 'Bogus'" "${T[@]}" --lun ram:1M -k Bogus=1
expect_run "-k HeaderDigest=MD5" 2 "HeaderDigest='MD5': must be a comma list of CRC32C,None" "${T[@]}" --lun ram:1M -k HeaderDigest=MD5
expect_run "-k MaxOutstandingR2T=0" 2 "MaxOutstandingR2T='0': must be a number from 1 to 65535" "${T[@]}" --lun ram:1M -k MaxOutstandingR2T=0
expect_run "-k ErrorRecoveryLevel=3" 2 "ErrorRecoveryLevel='3': must be a number from 0 to 2" "${T[@]}" --lun ram:1M -k ErrorRecoveryLevel=3
expect_run "-k ErrorRecoveryLevel=1" 2 "ErrorRecoveryLevel=1: this target implements ErrorRecoveryLevel 0 only" "${T[@]}" --lun ram:1M -k ErrorRecoveryLevel=1
expect_run "-k MaxConnections=2" 2 "MaxConnections=2: this target has one connection per session" "${T[@]}" --lun ram:1M -k MaxConnections=2
expect_run "-k AuthMethod=CHAP" 2 "AuthMethod follows --chap" "${T[@]}" --lun ram:1M -k AuthMethod=CHAP
expect_run "-k TargetName=x" 2 "TargetName is declared by the program" "${T[@]}" --lun ram:1M -k TargetName=x
expect_run "-k OFMarkInt=1" 2 "OFMarkInt is obsolete" "${T[@]}" --lun ram:1M -k OFMarkInt=1
expect_run "-k NoValue" 2 "expected NAME=VALUE" "${T[@]}" --lun ram:1M -k NoValue
expect_run "-k FirstBurstLength > MaxBurstLength" 2 "FirstBurstLength \(1048576\) must not exceed MaxBurstLength \(65536\)" "${T[@]}" --lun ram:1M -k FirstBurstLength=1048576 -k MaxBurstLength=65536
expect_run "-k X-org.example.test=1 accepted" 0 "^idm-target " "${T[@]}" --lun ram:1M -k X-org.example.test=1 -k MaxBurstLength=65536 -k FirstBurstLength=0x2000 --version
# login budgets: whole numbers in range, from the command line or a file
expect_run "--login-timeout 0" 2 "option --login-timeout: login-timeout='0': must be a number from 1 to 3600" "${T[@]}" --lun ram:1M --login-timeout 0
expect_run "--max-logins abc" 2 "option --max-logins: max-logins='abc': must be a number from 1 to 65536" "${T[@]}" --lun ram:1M --max-logins abc
expect_run "--max-logins-per-address -1" 2 "option --max-logins-per-address: max-logins-per-address='-1': must be a number from 1 to 65536" "${T[@]}" --lun ram:1M --max-logins-per-address -1
expect_run "--max-connections 5x" 2 "option --max-connections: max-connections='5x': must be a number from 1 to 1000000" "${T[@]}" --lun ram:1M --max-connections 5x
printf 'lun = ram:1M\nmax-logins = 70000\n' >"$TMP/budget.conf"
expect_run "max-logins in a config file" 2 "budget.conf:2: max-logins='70000': must be a number from 1 to 65536" "${T[@]}" -c "$TMP/budget.conf"
expect_run "budgets accepted" 0 "^idm-target " "${T[@]}" --lun ram:1M --login-timeout 3600 --max-connections 10 --max-logins 1 --max-logins-per-address 1 --version

# LUN specs
truncate -s 0 "$TMP/empty"
head -c 1000 /dev/zero >"$TMP/k1000"
mkfifo "$TMP/fifo"
expect_run "--lun ram:abc" 2 "LUN 1: bad size 'abc' in 'ram:abc': a number of bytes with an optional K, M, G or T suffix" "${T[@]}" --lun ram:abc
expect_run "--lun ram:1000" 2 "LUN 1: 'ram:1000': 1000 bytes is not a multiple of the block size 512" "${T[@]}" --lun ram:1000
expect_run "--lun ram:1000 -b 4096" 2 "'ram:6K': 6144 bytes is not a multiple of the block size 4096" "${T[@]}" -b 4096 --lun ram:6K
expect_run "--lun ram:0" 2 "LUN 1: 'ram:0': the size must not be 0" "${T[@]}" --lun ram:0
expect_run "--lun disk:/x" 2 "LUN 1: unknown LUN type 'disk' in 'disk:/x': use ram:SIZE, file:PATH or rbd:POOL/IMAGE" "${T[@]}" --lun disk:/x
# RBD LUNs: the Ceph user, the timeout; a spec, and a cluster that does
# not answer (a monitor address nobody listens on), refused in bounded time
expect_run "--rbd-user with a blank" 2 "rbd-user 'a b': a Ceph user id such as admin" "${T[@]}" --rbd-user "a b" --lun ram:1M
expect_run "--rbd-timeout 4000" 2 "rbd-timeout='4000': must be a number from 0 to 3600" "${T[@]}" --rbd-timeout 4000 --lun ram:1M
if ! timeout 60 "$IDM_TARGET" --portal 127.0.0.1:0 --rbd-conf /dev/null --rbd-timeout 1 \
	--lun rbd:p/i 2>&1 | grep -q "built without librbd"; then
	expect_run "--lun rbd:pool" 2 "LUN 1: 'rbd:pool': rbd: takes POOL/IMAGE" "${T[@]}" --lun rbd:pool
	printf '[global]\nmon host = v2:127.0.0.1:1\nauth client required = none\n' >"$TMP/ceph.conf"
	expect_run "--lun rbd: no cluster" 2 "LUN 1: 'rbd:rbd/x': cannot connect to the Ceph cluster as client.admin" "${T[@]}" --rbd-conf "$TMP/ceph.conf" --rbd-timeout 2 --lun rbd:rbd/x
fi
expect_run "--lun file:missing" 2 "LUN 1: cannot open $TMP/missing: No such file or directory" "${T[@]}" --lun "file:$TMP/missing"
expect_run "--lun file:directory" 2 "LUN 1: $TMP is not a regular file or a block device" "${T[@]}" --lun "file:$TMP"
expect_run "--lun file:fifo" 2 "LUN 1: $TMP/fifo is not a regular file or a block device" "${T[@]}" --lun "file:$TMP/fifo"
expect_run "--lun file:empty" 2 "LUN 1: $TMP/empty is empty \(0 bytes\)" "${T[@]}" --lun "file:$TMP/empty"
expect_run "--lun file:1000 bytes" 2 "LUN 1: $TMP/k1000 is 1000 bytes, not a multiple of the block size 512" "${T[@]}" --lun "file:$TMP/k1000"
expect_run "--lun bad number" 2 "bad LUN number in 'x=ram:1M'" "${T[@]}" --lun x=ram:1M
expect_run "--lun twice" 2 "LUN 3 given twice" "${T[@]}" --lun 3=ram:1M --lun 3=ram:1M
expect_run "no LUN" 2 "no LUN given" "${T[@]}"
expect_run "-b 1024" 2 "block size '1024': must be 512 or 4096" "${T[@]}" -b 1024 --lun ram:1M
expect_run "--log-level loud" 2 "log level 'loud'" "${T[@]}" --log-level loud --lun ram:1M
expect_run "--log-target nowhere" 2 "log target 'nowhere'" "${T[@]}" --log-target nowhere --lun ram:1M
expect_run "--portal 127.0.0.1:abc" 2 "option --portal: bad portal '127.0.0.1:abc': use HOST:PORT, HOST or \[IPv6\]:PORT" "${T[@]}" --lun ram:1M -p 127.0.0.1:abc
expect_run "--portal [::1" 2 "bad portal '\[::1'" "${T[@]}" --lun ram:1M -p "[::1"
expect_run "unknown option" 2 "unrecognized option '--bogus'" "${T[@]}" --bogus
expect_run "extra argument" 2 "unexpected argument 'extra'" "${T[@]}" --lun ram:1M extra
expect_run "initiator unknown option" 2 "unrecognized option '--bogus'" "$IDM_INITIATOR" --bogus

# initiator ACL rules refused at start-up, with the file and line
H1=iqn.1994-05.com.example:host1
printf 'lun = ram:1M\n\nacl = %s 10.0.0.1/8\n' "$H1" >"$TMP/acl.conf"
expect_run "acl: host bits set, in a config file" 2 \
	"error: $TMP/acl.conf:3: '10.0.0.1/8': host bits set; the network is 10.0.0.0/8" \
	"${T[@]}" -c "$TMP/acl.conf"
printf 'lun = ram:1M\nacl = %s [fd00::]/129\n' "$H1" >"$TMP/acl.conf"
expect_run "acl: IPv6 prefix too long" 2 \
	"acl.conf:2: '\[fd00::\]/129': the prefix length of an IPv6 address is 0 to 128" \
	"${T[@]}" -c "$TMP/acl.conf"
expect_run "acl: not an iSCSI name" 2 "error: option --acl: 'host1' is not an iSCSI name" \
	"${T[@]}" --lun ram:1M --acl "host1 *"
expect_run "acl: one field" 2 "error: option --acl: acl rule '\*': use NAME ADDRESS \[luns=LIST\]" \
	"${T[@]}" --lun ram:1M --acl "*"
expect_run "acl: bad luns=" 2 "'luns=1,,2': use luns=N,N-M,... with LUN numbers 0 to 16383" \
	"${T[@]}" --lun ram:1M --acl "* * luns=1,,2"
expect_run "acl: with --allow-all" 2 "acl rules and allow-all exclude each other" \
	"${T[@]}" --lun ram:1M --allow-all --acl "* *"
printf 'allow-all = yes\n' >"$TMP/allow.conf"
expect_run "acl: with allow-all = yes in a config file" 2 "acl rules and allow-all exclude each other" \
	"${T[@]}" --lun ram:1M -c "$TMP/allow.conf" --acl "* *"
for _ in $(seq 257); do echo "acl = * *"; done >"$TMP/many.conf"
expect_run "acl: 257 rules" 2 "many.conf:257: too many acl rules \(max 256\)" \
	"${T[@]}" --lun ram:1M -c "$TMP/many.conf"

# IDM_LOG_LEVEL: the starting level of both programs, a bad value named
truncate -s 1M "$TMP/disk.img"
start_target "$TMP/t.log" --portal 127.0.0.1:0 --lun "file:$TMP/disk.img" -q -q
URL="iscsi://127.0.0.1:$PORT/iqn.2026-11.org.libidm:target/1"
expect_run "IDM_LOG_LEVEL=debug idm-initiator" 0 "idm-initiator debug: " env IDM_LOG_LEVEL=debug "$IDM_INITIATOR" -q "$URL"
expect_run "IDM_LOG_LEVEL=3 idm-initiator" 0 "idm-initiator debug: " env IDM_LOG_LEVEL=3 "$IDM_INITIATOR" -q "$URL"
expect_run "IDM_LOG_LEVEL=bogus idm-initiator" 0 "idm-initiator warn: ignoring IDM_LOG_LEVEL='bogus': use error, warn, info, debug or 0-3" env IDM_LOG_LEVEL=bogus "$IDM_INITIATOR" -q "$URL"
timeout 10 env IDM_LOG_LEVEL=error "$IDM_INITIATOR" -q "$URL" >"$TMP/out" 2>&1 || fail "IDM_LOG_LEVEL=error idm-initiator failed"
[ -s "$TMP/out" ] && { fail "IDM_LOG_LEVEL=error idm-initiator printed something"; cat "$TMP/out"; }
expect_run "--log-level beats IDM_LOG_LEVEL" 0 "idm-initiator info: " env IDM_LOG_LEVEL=error "$IDM_INITIATOR" --log-level info -q "$URL"
stop_target
expect_run "IDM_LOG_LEVEL=debug idm-target" 0 "idm-target debug: libidm: provider tcp loaded" env IDM_LOG_LEVEL=debug timeout --preserve-status -s INT 1 "$IDM_TARGET" --portal 127.0.0.1:0 --log-target stderr --lun ram:1M
expect_run "IDM_LOG_LEVEL=bogus idm-target" 0 "idm-target warn: ignoring IDM_LOG_LEVEL='bogus'" env IDM_LOG_LEVEL=bogus timeout --preserve-status -s INT 1 "$IDM_TARGET" --portal 127.0.0.1:0 --log-target stderr --lun ram:1M
env IDM_LOG_LEVEL=warn timeout --preserve-status -s INT 1 "$IDM_TARGET" --portal 127.0.0.1:0 --log-target stderr --lun ram:1M >"$TMP/out" 2>&1
grep -q " info: " "$TMP/out" && fail "IDM_LOG_LEVEL=warn idm-target still logs info"
finish
