/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The RDMA devices and ports, straight from libibverbs: what the iSER
 * provider would find, and the limits and features it depends on (memory
 * windows of type 2 for per-I/O STags, SGEs, MRs). Read-only queries; no
 * protection domain or queue pair is created.
 */
#include "info.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#define MAX_GIDS 256 /* entries shown per device; rxe has 32 per port */

static const char *gid_type_name(uint32_t t)
{
	switch (t) {
	case IBV_GID_TYPE_IB:
		return "IB";
	case IBV_GID_TYPE_ROCE_V1:
		return "RoCE v1";
	case IBV_GID_TYPE_ROCE_V2:
		return "RoCE v2";
	default:
		return "unknown";
	}
}

static const char *link_layer_name(uint8_t l)
{
	switch (l) {
	case IBV_LINK_LAYER_INFINIBAND:
		return "InfiniBand";
	case IBV_LINK_LAYER_ETHERNET:
		return "Ethernet";
	default:
		return "unspecified";
	}
}

static void port_gids(struct out *o, const struct ibv_gid_entry *e, ssize_t n,
		      uint8_t port)
{
	out_arr_begin(o, "gids", "GIDs");
	for (ssize_t i = 0; i < n; i++) {
		char addr[INET6_ADDRSTRLEN] = "?", ifname[IF_NAMESIZE] = "";

		if (e[i].port_num != port)
			continue;
		inet_ntop(AF_INET6, e[i].gid.raw, addr, sizeof(addr));
		if (e[i].ndev_ifindex)
			if_indextoname(e[i].ndev_ifindex, ifname);
		out_obj_begin(o, NULL, NULL);
		out_int(o, "index", "index", e[i].gid_index);
		out_str(o, "gid", "GID", "%s", addr);
		out_str(o, "type", "type", "%s", gid_type_name(e[i].gid_type));
		out_str(o, "netdev", "netdev", "%s", ifname);
		out_obj_end(o);
	}
	out_arr_end(o);
}

static void device(struct out *o, struct ibv_device *dev)
{
	static struct ibv_gid_entry gids[MAX_GIDS];
	struct ibv_device_attr a;
	struct ibv_context *ctx;
	ssize_t ngids;

	out_obj_begin(o, NULL, NULL);
	out_str(o, "name", "name", "%s", ibv_get_device_name(dev));
	out_str(o, "node_guid", "node GUID", "%016llx",
		(unsigned long long)be64toh(ibv_get_device_guid(dev)));
	ctx = ibv_open_device(dev);
	if (!ctx) {
		out_str(o, "error", "error", "cannot open: %s", strerror(errno));
		out_obj_end(o);
		return;
	}
	if (ibv_query_device(ctx, &a)) {
		out_str(o, "error", "error", "cannot query: %s", strerror(errno));
		ibv_close_device(ctx);
		out_obj_end(o);
		return;
	}
	out_str(o, "fw_ver", "firmware", "%s", a.fw_ver);
	out_int(o, "max_mr", "max MRs", a.max_mr);
	out_uint(o, "max_mr_size", "max MR size", a.max_mr_size);
	out_int(o, "max_mw", "max MWs", a.max_mw);
	/* the iSER provider binds a type-2 window per I/O for its STags
	 * (IDM_ISER_STAG=mw) and falls back to MR rkeys without them */
	out_bool(o, "mw_type2", "type-2 memory windows",
		 a.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B);
	out_int(o, "max_sge", "max SGEs", a.max_sge);
	out_int(o, "max_qp", "max QPs", a.max_qp);
	out_int(o, "max_qp_wr", "max WRs per QP", a.max_qp_wr);
	out_int(o, "max_qp_rd_atom", "max RDMA Reads in flight",
		a.max_qp_rd_atom);
	ngids = ibv_query_gid_table(ctx, gids, MAX_GIDS, 0);
	if (ngids < 0)
		ngids = 0;
	out_arr_begin(o, "ports", "ports");
	for (uint8_t p = 1; p <= a.phys_port_cnt; p++) {
		struct ibv_port_attr pa;

		out_obj_begin(o, NULL, NULL);
		out_int(o, "port", "port", p);
		if (ibv_query_port(ctx, p, &pa)) {
			out_str(o, "error", "error", "cannot query: %s",
				strerror(errno));
			out_obj_end(o);
			continue;
		}
		out_str(o, "state", "state", "%s", ibv_port_state_str(pa.state));
		out_str(o, "link_layer", "link layer", "%s",
			link_layer_name(pa.link_layer));
		out_int(o, "active_mtu", "active MTU", 128 << pa.active_mtu);
		out_uint(o, "max_msg_sz", "max message", pa.max_msg_sz);
		port_gids(o, gids, ngids, p);
		out_obj_end(o);
	}
	out_arr_end(o);
	ibv_close_device(ctx);
	out_obj_end(o);
}

int info_rdma(struct out *o)
{
	struct ibv_device **list;
	int n = 0, err;

	out_obj_begin(o, "rdma", "RDMA devices");
	out_bool(o, "supported", "built with libibverbs", 1);
	errno = 0;
	list = ibv_get_device_list(&n);
	err = errno;
	if (!list) {
		/* ENOSYS: no verbs support in the kernel at all */
		out_str(o, "error", "error", "%s",
			err == ENOSYS || !err ? "no RDMA support in the kernel"
					      : strerror(err));
		n = 0;
	}
	out_arr_begin(o, "devices", "devices");
	for (int i = 0; i < n; i++)
		device(o, list[i]);
	out_arr_end(o);
	if (list)
		ibv_free_device_list(list);
	out_obj_end(o);
	return list ? n : -1;
}
