#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Check that a libiscsi built by build-libiscsi-idm.sh keeps the ABI of
# bookworm's libiscsi7 (1.19.0): same SONAME, no exported symbol removed
# or changed, and every public struct laid out as 1.19.0's headers lay it
# out.
#
# Usage: check-abi.sh WORK
#   WORK   the work directory of build-libiscsi-idm.sh
# Needs: libiscsi7 and libiscsi-dev (bookworm's library and headers, the
# reference), abigail-tools (abidiff, abidw), gcc.
#
# Debian's libiscsi7 carries no debug information, so abidiff compares
# its exported functions and variables only. The types are compared with
# two probe libraries built with -g from the two sets of headers: each
# exports one function per public struct of iscsi.h and scsi-lowlevel.h,
# taking a pointer to it, so abidiff sees every member's type and offset.
# Exit status: 0 compatible, 1 an incompatible change, 77 a tool missing.
set -euo pipefail

WORK=${1:?usage: check-abi.sh WORK}
WORK=$(cd "$WORK" && pwd)
NEW=$WORK/libiscsi-idm
REF_LIB=$(ls /usr/lib/*/libiscsi.so.7 2>/dev/null | head -1 || true)
REF_INC=/usr/include/iscsi

skip() { echo "check-abi: SKIP: $*" >&2; exit 77; }
command -v abidiff >/dev/null || skip "abidiff missing (apt-get install abigail-tools)"
[ -n "$REF_LIB" ] || skip "bookworm's libiscsi.so.7 missing (apt-get install libiscsi7)"
[ -f "$REF_INC/scsi-lowlevel.h" ] || skip "$REF_INC missing (apt-get install libiscsi-dev)"
[ -e "$NEW/lib/.libs/libiscsi.so.7" ] || { echo "check-abi: no $NEW/lib/.libs/libiscsi.so.7: run build-libiscsi-idm.sh first" >&2; exit 1; }

OUT=$WORK/abi
rm -rf "$OUT"
mkdir -p "$OUT/ref/iscsi" "$OUT/new/iscsi"
cp "$REF_INC/iscsi.h" "$REF_INC/scsi-lowlevel.h" "$OUT/ref/iscsi/"
cp "$NEW/include/iscsi.h" "$NEW/include/scsi-lowlevel.h" "$OUT/new/iscsi/"
fail=0

# 1. SONAME
soname=$(readelf -d "$NEW/lib/.libs/libiscsi.so.7" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ "$soname" = libiscsi.so.7 ]; then
	echo "check-abi: SONAME libiscsi.so.7: ok"
else
	echo "check-abi: SONAME is $soname, not libiscsi.so.7"; fail=1
fi

# 2. exported symbols (abidiff: 4 = compatible change, such as additions;
# 8 or 12 = incompatible)
rc=0
abidiff "$REF_LIB" "$NEW/lib/.libs/libiscsi.so.7" >"$OUT/symbols.txt" 2>&1 || rc=$?
sed 's/^/  /' "$OUT/symbols.txt"
if [ $((rc & 8)) -ne 0 ] || [ $((rc & 3)) -ne 0 ]; then
	echo "check-abi: exported symbols: INCOMPATIBLE (abidiff status $rc)"; fail=1
else
	echo "check-abi: exported symbols: compatible (abidiff status $rc)"
fi

# 3. the public structs, through probe libraries
structs=$(cat "$OUT/ref/iscsi/iscsi.h" "$OUT/ref/iscsi/scsi-lowlevel.h" |
	sed -n 's/^struct \([a-z_0-9]*\) {.*/\1/p' | sort -u)
{
	echo '#include <stdint.h>'
	echo '#include <stddef.h>'
	echo '#include <iscsi/iscsi.h>'
	echo '#include <iscsi/scsi-lowlevel.h>'
	for s in $structs; do
		echo "void abi_probe_$s(struct $s *p);"
		echo "void abi_probe_$s(struct $s *p) { (void)p; }"
	done
} >"$OUT/probe.c"
for side in ref new; do
	gcc -g -O0 -shared -fPIC -I"$OUT/$side" -o "$OUT/probe-$side.so" "$OUT/probe.c"
done
rc=0
abidiff "$OUT/probe-ref.so" "$OUT/probe-new.so" >"$OUT/types.txt" 2>&1 || rc=$?
sed 's/^/  /' "$OUT/types.txt"
n=$(echo "$structs" | wc -w)
# abidiff calls a struct that grew an "ABI change" (4) as it calls a
# member put into padding; what breaks callers is a size or an offset
if [ $((rc & 8)) -ne 0 ] || [ $((rc & 3)) -ne 0 ] ||
   grep -qE 'size changed|offset changed|member deletion|type changed from' "$OUT/types.txt"; then
	echo "check-abi: public structs ($n): INCOMPATIBLE with 1.19.0 (abidiff status $rc)"; fail=1
elif [ "$rc" -ne 0 ]; then
	echo "check-abi: public structs ($n): compatible with 1.19.0 (abidiff status $rc: sizes and offsets kept, changes shown above)"
else
	echo "check-abi: public structs ($n): identical to 1.19.0"
fi
exit $fail
