# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# Shared by the host tests of libiscsi on libidm (sourced): libiscsi 1.20.0
# with its libidm transport (contrib/libiscsi, LGPL-2.1-or-later, built
# outside this tree by contrib/build-ports.sh into
# BUILDDIR/libiscsi-idm-work), the tgtd-on-libidm of suite 'tgt' and
# idm-target as its targets. The scripts only run those programs.
: "${IDM_TEST_NAME:=libiscsi-idm}"
# shellcheck source-path=SCRIPTDIR source=../tgt-idm-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tgt-idm-lib.sh"
# shellcheck source-path=SCRIPTDIR source=../../lib/target.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../lib/target.sh"

# find_libiscsi_idm WORKDIR: sets LIBISCSI_IDM_LIBDIR, LIBISCSI_IDM_TEST_CU
# and LIBISCSI_IDM_PROVDIR (the providers of the libidm it links) from the
# work dir's env.sh (build-libiscsi-idm.sh), or skips.
find_libiscsi_idm() {
	local work=$1
	if [ ! -f "$work/env.sh" ]; then
		skip "libiscsi on libidm not built: run contrib/build-ports.sh BUILDDIR (as quickstart.sh does), or contrib/libiscsi/build-libiscsi-idm.sh --work $work --libidm-build BUILDDIR"
	fi
	# a subshell: tgt's env.sh names its own IDM_PROVDIR
	eval "$(
		# shellcheck disable=SC1091
		. "$work/env.sh"
		printf 'LIBISCSI_IDM_LIBDIR=%q LIBISCSI_IDM_TEST_CU=%q LIBISCSI_IDM_PROVDIR=%q\n' \
			"$LIBISCSI_IDM_LIBDIR" "$LIBISCSI_IDM_TEST_CU" "$IDM_PROVDIR"
	)"
	[ -e "$LIBISCSI_IDM_LIBDIR/libiscsi.so.7" ] || fail "no $LIBISCSI_IDM_LIBDIR/libiscsi.so.7 (a failed build?)"
	ldd "$LIBISCSI_IDM_LIBDIR/libiscsi.so.7" | grep -q 'libidm\.so' ||
		fail "$LIBISCSI_IDM_LIBDIR/libiscsi.so.7 is not linked with libidm"
	# on_idm: what "${ON_IDM[@]}" CMD runs CMD with: Debian's programs
	# (which link libiscsi.so.7) on the patched library and its libidm
	# transport; "${ON_OWN[@]}" CMD: the patched library on libiscsi's
	# own TCP transport
	# shellcheck disable=SC2034 # for the scripts that source this
	ON_IDM=(env LD_LIBRARY_PATH="$LIBISCSI_IDM_LIBDIR" LIBISCSI_TRANSPORT=idm
		IDM_PROVIDER_PATH="$LIBISCSI_IDM_PROVDIR")
	# shellcheck disable=SC2034 # for the scripts that source this
	ON_OWN=(env -u LIBISCSI_TRANSPORT LD_LIBRARY_PATH="$LIBISCSI_IDM_LIBDIR")
}

# start_idm_target NAME SIZE: idm-target ($IDM_TARGET) on 127.0.0.1, a free
# port, RAM LUN 1 of SIZE; sets URL_<NAME> and PID_<NAME> as start_tgtd does.
start_idm_target() {
	local name=$1 size=$2 iqn=iqn.2026-11.org.libidm:libiscsi-idm
	IDM_TARGET_STDOUT=/dev/null idm_target_start "$TMP/target-$name.log" 10 \
		--portal 127.0.0.1:0 --target-name "$iqn" --lun "ram:$size"
	printf -v "URL_$name" '%s' "iscsi://127.0.0.1:$PORT/$iqn/1"
	printf -v "PID_$name" '%s' "$TGT_PID"
	echo "idm-target ($name) on 127.0.0.1:$PORT"
}
