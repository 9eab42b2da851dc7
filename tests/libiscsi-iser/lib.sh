# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# Shared by the libiscsi-iser tests (sourced): libiscsi 1.20.0 with the
# libidm transport (contrib/libiscsi, LGPL-2.1-or-later, built outside
# this tree by contrib/libiscsi/build-libiscsi-idm.sh on the host) serving
# iser:// through libidm's iser provider inside the soft-RoCE guest. The
# guest's root is the host's, so the host's build is run as it is.
# Skipped (77) outside the guest or without that build.
: "${IDM_TEST_NAME:=libiscsi-iser}"
# shellcheck source-path=SCRIPTDIR source=../iser-interop/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../iser-interop/lib.sh"

# find_libiscsi_idm WORKDIR: sets LIBISCSI_IDM_LIBDIR, LIBISCSI_IDM_TEST_CU,
# IDM_PROVDIR from the work dir's env.sh (build-libiscsi-idm.sh), or skips.
find_libiscsi_idm() {
	local work=${1:-${LIBISCSI_IDM_WORK:-}}
	if [ -z "$work" ] || [ ! -f "$work/env.sh" ]; then
		skip "libiscsi on libidm not built: contrib/libiscsi/build-libiscsi-idm.sh --work ${work:-DIR} --libidm-build BUILDDIR on the host (or set LIBISCSI_IDM_WORK)"
	fi
	# shellcheck disable=SC1091
	. "$work/env.sh"
	[ -e "$LIBISCSI_IDM_LIBDIR/libiscsi.so.7" ] || skip "no $LIBISCSI_IDM_LIBDIR/libiscsi.so.7"
	ldd "$LIBISCSI_IDM_LIBDIR/libiscsi.so.7" | grep -q 'libidm\.so' ||
		skip "$LIBISCSI_IDM_LIBDIR/libiscsi.so.7 is not linked with libidm"
}

# "${ON_IDM[@]}" CMD...: CMD (Debian's, linking libiscsi.so.7) on the
# patched library and its libidm transport; iser:// goes to libidm's iser
# provider, iscsi:// to its tcp provider. LIBISCSI_DEBUG=2 prints the
# transport's "through libidm iser" and its counters at the end of each
# connection. Without MALLOC_PERTURB_ like "${PEER[@]}".
on_idm() {
	# shellcheck disable=SC2034 # used by the scripts that source this
	ON_IDM=(env -u MALLOC_PERTURB_ LD_LIBRARY_PATH="$LIBISCSI_IDM_LIBDIR"
		LIBISCSI_TRANSPORT=idm IDM_PROVIDER_PATH="$IDM_PROVDIR")
}

# idm_counters FILE: the transport's counters of every connection it
# closed (LIBISCSI_DEBUG=2), one line each:
# "PROVIDER bytes_in bytes_out payload_copies copy_bytes transport_copies bytes"
idm_counters() {
	sed -n 's/.*libidm \([a-z]*\) connection: [0-9]* PDUs in, [0-9]* out, \([0-9]*\) bytes in, \([0-9]*\) out, payload copies \([0-9]*\) (\([0-9]*\) bytes), transport copies \([0-9]*\) (\([0-9]*\) bytes).*/\1 \2 \3 \4 \5 \6 \7/p' "$1"
}

# no_initiator_copies DEBUGLOG: at least 5 connections logged their
# counters (LIBISCSI_DEBUG=2), every one over iSER with no payload copied
# by libidm or the transport; prints them and sets ISER_CONNS.
no_initiator_copies() {
	idm_counters "$1" >"$TMP/counters"
	sed 's/^/   initiator: provider, bytes in, bytes out, payload copies, bytes, transport copies, bytes: /' \
		"$TMP/counters"
	ISER_CONNS=$(grep -c '^iser ' "$TMP/counters")
	[ "$ISER_CONNS" -ge 5 ] ||
		fail "only $ISER_CONNS iSER connections logged their counters (LIBISCSI_DEBUG=2)"
	awk '$1 != "iser" || $4 != 0 || $6 != 0 { bad = 1 } END { exit bad }' "$TMP/counters" ||
		fail "the initiator copied payload (or a connection was not iSER)"
}
