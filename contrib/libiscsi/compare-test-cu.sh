#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Run the iscsi-test-cu built by build-libiscsi-idm.sh against one target
# twice, on libiscsi's own TCP transport and on the libidm transport
# (LIBISCSI_TRANSPORT=idm), and list every test whose outcome differs.
#
# Usage: compare-test-cu.sh --work WORK (--url URL | --idm-target BIN) [options]
#   --work DIR         build-libiscsi-idm.sh's work directory (its env.sh)
#   --url URL          the target's LUN, iscsi://HOST:PORT/IQN/LUN
#   --idm-target BIN   instead: start this idm-target on 127.0.0.1 (a free
#                      port) with a 100 MiB RAM LUN, stopped at the end
#   --test SPEC[,SPEC...]  iscsi-test-cu's --test, one run per SPEC, their
#                      outputs joined (default ALL); e.g. to leave out
#                      iSCSI.iSCSISendTargets.Invalid, which hangs against
#                      idm-target on either transport:
#                      SCSI,iSCSI.iSCSIcmdsn,iSCSI.iSCSIdatasn,...
#   --timeout SEC      per iscsi-test-cu run (default 600)
#   --out DIR          keep the two outputs there (default: a temp dir)
# Exit status: 0 when no test that passes on libiscsi's own transport
# fails on libidm's, 1 otherwise, 77 when something needed is missing.
set -euo pipefail

WORK=
URL=
IDM_TARGET=
SPEC=ALL
TMO=600
OUT=
IQN=iqn.2026-11.org.libidm:libiscsi-port

die() { echo "compare-test-cu: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
	case $1 in
	--work) WORK=$2; shift ;;
	--url) URL=$2; shift ;;
	--idm-target) IDM_TARGET=$2; shift ;;
	--test) SPEC=$2; shift ;;
	--timeout) TMO=$2; shift ;;
	--out) OUT=$2; shift ;;
	-h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d;s/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown option $1 (see --help)" ;;
	esac
	shift
done
[ -n "$WORK" ] && [ -f "$WORK/env.sh" ] || { echo "compare-test-cu: no WORK/env.sh: run build-libiscsi-idm.sh first" >&2; exit 77; }
# shellcheck disable=SC1091
. "$WORK/env.sh"
[ -x "$LIBISCSI_IDM_TEST_CU" ] || { echo "compare-test-cu: no $LIBISCSI_IDM_TEST_CU" >&2; exit 77; }
TPID=
TMPOUT=
stop_target() {
	[ -z "$TPID" ] || { kill "$TPID" 2>/dev/null; wait "$TPID" 2>/dev/null || true; }
	TPID=
}
cleanup() { stop_target; [ -z "$TMPOUT" ] || rm -rf "$TMPOUT"; }
trap cleanup EXIT
if [ -z "$OUT" ]; then
	OUT=$(mktemp -d)
	TMPOUT=$OUT
fi
mkdir -p "$OUT"
export IDM_PROVIDER_PATH=${IDM_PROVIDER_PATH:-$IDM_PROVDIR}
if [ -n "$IDM_TARGET" ]; then
	[ -x "$IDM_TARGET" ] || die "no idm-target at $IDM_TARGET"
	rm -f "$OUT/port"
	"$IDM_TARGET" --portal 127.0.0.1:0 --port-file "$OUT/port" \
		--target-name "$IQN" --lun ram:100M >"$OUT/target.log" 2>&1 &
	TPID=$!
	for _ in $(seq 100); do
		[ -s "$OUT/port" ] && break
		kill -0 "$TPID" 2>/dev/null || die "idm-target exited: $(tail -5 "$OUT/target.log")"
		sleep 0.1
	done
	[ -s "$OUT/port" ] || die "idm-target wrote no port in 10 s"
	URL="iscsi://127.0.0.1:$(cat "$OUT/port")/$IQN/1"
fi
[ -n "$URL" ] || die "give --url or --idm-target"

# outcomes FILE: "Suite.Test passed|FAILED", one line per test
outcomes() {
	awk '/^Suite: /{suite=$2}
	     /^  Test: /{name=suite "." $2; if (!(name in res)) {order[++n]=name; res[name]="?"}}
	     /(^passed|passed$)/ && name != "" && res[name] == "?" {res[name]="passed"}
	     /FAILED$/ && name != "" {res[name]="FAILED"}
	     END {for (i=1; i<=n; i++) print order[i], res[order[i]]}' "$1"
}

# summary FILE: "passed/total" over every run in FILE
summary() { awk '/^ *tests /{p+=$4; t+=$2} END {print p "/" t}' "$1"; }

run() { # NAME [env...]
	local name=$1 spec t0=$SECONDS
	shift
	: >"$OUT/$name.out"
	for spec in ${SPEC//,/ }; do
		echo "compare-test-cu: iscsi-test-cu --dataloss --test=$spec on $name"
		env "$@" timeout -k 5 "$TMO" "$LIBISCSI_IDM_TEST_CU" --dataloss \
			--test="$spec" "$URL" >>"$OUT/$name.out" 2>&1 ||
			[ $? -ne 124 ] || echo "compare-test-cu:   --test=$spec timed out after $TMO s"
	done
	outcomes "$OUT/$name.out" >"$OUT/$name.res"
	echo "compare-test-cu:   passed $(summary "$OUT/$name.out") in $((SECONDS - t0)) s"
}
run libiscsi-tcp -u LIBISCSI_TRANSPORT
run libidm-tcp LIBISCSI_TRANSPORT=idm

printf '%-12s %10s\n' transport passed/total
printf '%-12s %10s\n' libiscsi "$(summary "$OUT/libiscsi-tcp.out")" libidm "$(summary "$OUT/libidm-tcp.out")"
echo "tests whose outcome differs (libiscsi's own / libidm's):"
join -a1 -a2 -e missing -o 0,1.2,2.2 <(sort "$OUT/libiscsi-tcp.res") <(sort "$OUT/libidm-tcp.res") |
	awk '$2 != $3 {print "  " $1 ": " $2 " / " $3; if ($2 == "passed") worse++}
	     END {exit worse > 0}' && rc=0 || rc=1
exit $rc
