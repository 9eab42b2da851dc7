# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# LIO (the Linux kernel's iSCSI target) with an iSER portal, configured by
# writing configfs directly, as targetcli would: targetcli needs a D-Bus
# system bus the guest does not have, and costs seconds per call under TCG.
# Sourced after lib.sh; every object made is queued for removal in
# CLEANUP_CMDS, in reverse order of creation.
#
# lio_start IQN SIZE_MIB PORT: a rd_mcp RAM disk of SIZE_MIB as LUN 0 of
# IQN, TPG 1 with a network portal on $IP:PORT with iser=1, demo mode
# (generate_node_acls: any initiator, no ACLs) and no authentication.

LIO_CFS=/sys/kernel/config/target

lio_start() {
	local iqn=$1 mib=$2 port=$3 tpg np rd
	need_module target_core_mod
	need_module iscsi_target_mod
	need_module ib_isert
	mountpoint -q /sys/kernel/config ||
		mount -t configfs configfs /sys/kernel/config || fail "cannot mount configfs"
	[ -d "$LIO_CFS" ] || fail "$LIO_CFS missing after loading target_core_mod"
	mkdir -p /etc/target # LIO's db_root; it complains without one

	rd=$LIO_CFS/core/rd_mcp_77/idmrd
	mkdir -p "$rd" || fail "cannot create the rd_mcp backstore"
	CLEANUP_CMDS+=("rmdir $LIO_CFS/core/rd_mcp_77")
	CLEANUP_CMDS+=("rmdir $rd")
	echo "rd_pages=$((mib * 256))" >"$rd/control" || fail "rd_mcp control"
	echo 1 >"$rd/enable" || fail "rd_mcp enable"

	tpg=$LIO_CFS/iscsi/$iqn/tpgt_1
	mkdir -p "$tpg/lun/lun_0" || fail "cannot create the target $iqn"
	CLEANUP_CMDS+=("rmdir $LIO_CFS/iscsi/$iqn")
	CLEANUP_CMDS+=("rmdir $tpg")
	CLEANUP_CMDS+=("rmdir $tpg/lun/lun_0")
	# configfs resolves a relative link target from the cwd: absolute path
	ln -s "$rd" "$tpg/lun/lun_0/idmrd" || fail "cannot map the backstore to LUN 0"
	CLEANUP_CMDS+=("rm -f $tpg/lun/lun_0/idmrd")

	np=$tpg/np/$IP:$port
	mkdir "$np" || fail "cannot create the portal $IP:$port"
	CLEANUP_CMDS+=("rmdir $np")
	echo 1 >"$np/iser" || fail "cannot enable iSER on the portal (ib_isert)"
	echo 0 >"$tpg/attrib/authentication"
	echo 1 >"$tpg/attrib/generate_node_acls"
	echo 1 >"$tpg/attrib/cache_dynamic_acls"
	echo 0 >"$tpg/attrib/demo_mode_write_protect"
	echo 1 >"$tpg/enable" || fail "cannot enable the TPG"
	# Disabling the TPG first ends its sessions, so the rmdirs succeed.
	CLEANUP_CMDS+=("echo 0 > $tpg/enable")
	log "LIO target $iqn: ${mib} MiB rd_mcp LUN 0, iSER portal $IP:$port"
}
