/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Connected cm_ids whose disconnect must wait for their port.
 *
 * Destroying or disconnecting a connected cm_id makes the kernel CM send
 * a DREQ on the GSI QP (QP1). When the port's netdev was set
 * administratively down, soft-RoCE (rxe, Linux 6.1) finds no route for
 * that MAD, fails the send with a local QP operation error and moves QP1
 * to the error state for good: from then on it drops every incoming MAD
 * (CM REQs included) and the node takes no RDMA connection again, even
 * once the link is back (doc/iser.md, "A link cut under I/O, then a new
 * connection"). So a connection that fails while its port is not ACTIVE
 * sends nothing: its resources are released as usual, only its cm_id
 * (and event channel) is kept here, and destroyed (which sends the DREQ)
 * once the port is ACTIVE again, polled every ISER_PARK_POLL_MS while
 * anything is parked. The provider's fini destroys what is left.
 */
#include "iser_park.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define ISER_PARK_POLL_MS 200
/* A bound on what failed connections can keep: past it an id is
 * destroyed at once, DREQ or not. */
#define ISER_PARK_MAX 256

struct iser_parked {
	struct rdma_cm_id *id;
	struct rdma_event_channel *ech;
	struct iser_parked *next;
};

bool iser_port_active(struct rdma_cm_id *id)
{
	struct ibv_port_attr pa;

	/* no device or port yet: nothing to send on, nothing to protect */
	if (!id || !id->verbs || !id->port_num)
		return true;
	memset(&pa, 0, sizeof(pa));
	if (ibv_query_port(id->verbs, id->port_num, &pa))
		return true;
	return pa.state == IBV_PORT_ACTIVE;
}

static void destroy(struct iser_parked *p)
{
	rdma_destroy_id(p->id);
	if (p->ech)
		rdma_destroy_event_channel(p->ech);
	free(p);
}

static void timer_stop(struct iser_prov *ip)
{
	if (ip->park_w.added)
		idm_prov_watch_del(idm_prov_ctx(ip->prov), &ip->park_w);
	if (ip->park_fd >= 0)
		close(ip->park_fd);
	ip->park_fd = -1;
}

static void park_watch(struct idm_prov_watch *w, uint32_t revents)
{
	struct iser_prov *ip = IDM_PROV_CONTAINER_OF(w, struct iser_prov, park_w);
	struct iser_parked **pp = &ip->parked, *p;
	uint64_t ticks;

	(void)revents;
	if (read(ip->park_fd, &ticks, sizeof(ticks)) < 0 && errno == EAGAIN)
		return;
	while ((p = *pp)) {
		if (!iser_port_active(p->id)) {
			pp = &p->next;
			continue;
		}
		*pp = p->next;
		ip->n_parked--;
		idm_prov_dbg(idm_prov_ctx(ip->prov), "iser: port active again: "
			 "a deferred disconnect goes out");
		destroy(p);
	}
	if (!ip->parked)
		timer_stop(ip);
}

static int timer_start(struct iser_prov *ip)
{
	struct itimerspec its = {
		.it_interval = { 0, ISER_PARK_POLL_MS * 1000000L },
		.it_value = { 0, ISER_PARK_POLL_MS * 1000000L },
	};

	if (ip->park_w.added)
		return 0;
	ip->park_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (ip->park_fd < 0)
		return -errno;
	if (timerfd_settime(ip->park_fd, 0, &its, NULL) < 0 ||
	    idm_prov_watch_add(idm_prov_ctx(ip->prov), &ip->park_w, ip->park_fd, EPOLLIN,
			   park_watch) < 0) {
		timer_stop(ip);
		return -EIO;
	}
	return 0;
}

void iser_park_id(struct iser_prov *ip, struct rdma_cm_id *id,
		  struct rdma_event_channel *ech)
{
	struct iser_parked *p = NULL;

	if (ip->n_parked < ISER_PARK_MAX)
		p = calloc(1, sizeof(*p));
	if (!p || timer_start(ip) < 0) {
		free(p);
		rdma_destroy_id(id);
		if (ech)
			rdma_destroy_event_channel(ech);
		return;
	}
	/* the id's context pointed at the freed connection */
	id->context = NULL;
	p->id = id;
	p->ech = ech;
	p->next = ip->parked;
	ip->parked = p;
	ip->n_parked++;
	idm_prov_dbg(idm_prov_ctx(ip->prov), "iser: port not active: disconnect deferred "
		 "(%u waiting)", ip->n_parked);
}

void iser_park_fini(struct iser_prov *ip)
{
	struct iser_parked *p;

	timer_stop(ip);
	while ((p = ip->parked)) {
		ip->parked = p->next;
		destroy(p);
	}
	ip->n_parked = 0;
}
