/* SPDX-License-Identifier: BSD-2-Clause */
/* iser_park.c: cm_ids whose disconnect waits for their port. */
#ifndef IDM_ISER_PARK_H
#define IDM_ISER_PARK_H

#include "iser.h"

/* Is the port of id's device ACTIVE (true when unknown)? */
bool iser_port_active(struct rdma_cm_id *id);
/* Keep a connected id (and its event channel) until its port is ACTIVE,
 * then destroy it: the DREQ goes out only then. */
void iser_park_id(struct iser_prov *ip, struct rdma_cm_id *id,
		  struct rdma_event_channel *ech);
void iser_park_fini(struct iser_prov *ip);

#endif
