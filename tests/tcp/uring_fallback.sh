#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# IDM_TCP_ENGINE=uring where io_uring_setup is refused (no_uring: a
# seccomp filter, as container runtimes apply): the TCP provider must fall
# back to epoll, log why once per context, and still move data (the
# scatter-gather loopback test, which logs in and writes and reads back).
# Usage: uring_fallback.sh PATH/TO/no_uring PATH/TO/test_sg
NO_URING=${1:?usage: $0 no_uring test_program}
PROG=${2:?usage: $0 no_uring test_program}
WANT='io_uring engine unavailable, using epoll: io_uring is not permitted here'

out=$(IDM_TCP_ENGINE=uring CK_FORK=no "$NO_URING" "$PROG" 2>&1)
rc=$?
printf '%s\n' "$out"
case $rc in
0) ;;
77) echo "SKIP: cannot install a seccomp filter here"; exit 77 ;;
*) echo "FAIL: $PROG exited $rc with io_uring refused"; exit 1 ;;
esac
n=$(printf '%s\n' "$out" | grep -c "$WANT")
if [ "$n" -lt 1 ]; then
	echo "FAIL: no log line saying io_uring was refused and epoll used"
	exit 1
fi
echo "PASS: io_uring refused, epoll used ($n context(s) said so), data moved"
