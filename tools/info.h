/* SPDX-License-Identifier: BSD-2-Clause */
/* idm_info's parts. */
#ifndef IDM_INFO_H
#define IDM_INFO_H

#include "info_out.h"

/* info_rdma.c (built with libibverbs only): the RDMA devices and ports
 * libibverbs shows this process, as the iSER provider would see them.
 * Returns the number of devices, or -1 if they cannot be listed. */
#ifdef IDM_INFO_RDMA
int info_rdma(struct out *o);
#else
static inline int info_rdma(struct out *o)
{
	out_obj_begin(o, "rdma", "RDMA devices");
	out_bool(o, "supported", "built with libibverbs", 0);
	out_obj_end(o);
	return -1;
}
#endif

#endif
