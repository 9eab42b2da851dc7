/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rxe-dreq-down: does a CM DREQ sent while the port is down leave the
 * RDMA device deaf after the port comes back?
 *
 *   rxe-dreq-down NETDEV IPV4 [CASE...]     (default: every case)
 *
 * No libidm here, only verbs and rdma_cm, in one process: a listener and a
 * client connected over the RDMA device that owns IPV4 (on NETDEV; rxe:
 * not 127.0.0.1). Must run as root: it sets NETDEV down and up with ip(8).
 *
 * Each case, on a fresh connection:
 *   1. connect a client to a listener (RC, both in this process);
 *   2. `ip link set NETDEV down`, wait until the port leaves ACTIVE;
 *   3. dreq-down only: rdma_disconnect() the client, so the kernel CM
 *      sends its DREQ while the port is down;
 *   4. `ip link set NETDEV up`, wait until the port is ACTIVE again and
 *      the address resolves; control only: rdma_disconnect() now;
 *   5. destroy the old ids and listener, then connect a new client to a
 *      new listener, bounded by 10 s.
 * Cases: control (steps 1, 2, 4, 5: must pass), dreq-down (1 to 5). Run
 * control first: an affected kernel stays deaf for the rest of the boot.
 * A case passes when the new connection is established; "DEAF" is no
 * connection within the bound. The device's hw counters (sent_pkts,
 * rcvd_pkts) and NETDEV's rx_packets are printed at each step.
 *
 * Exit status: 0 all cases passed, 1 some failed (an affected kernel),
 * 77 no RDMA device at IPV4 or not root, 2 usage.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <net/if.h>
#include <rdma/rdma_cma.h>

#define BOUND_S 10.0

struct side {
	struct rdma_event_channel *ech;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
};

struct listener {
	struct rdma_event_channel *ech;
	struct rdma_cm_id *id;
};

static const char *netdev, *ipv4;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static long read_num(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* The device's own packet counters next to the netdev's: the symptom was
 * rcvd_pkts frozen while the netdev kept receiving. */
static void counters(const char *dev, const char *when)
{
	char p[256];
	long sent, rcvd, rx;

	snprintf(p, sizeof(p), "/sys/class/infiniband/%s/ports/1/hw_counters/sent_pkts", dev);
	sent = read_num(p);
	snprintf(p, sizeof(p), "/sys/class/infiniband/%s/ports/1/hw_counters/rcvd_pkts", dev);
	rcvd = read_num(p);
	snprintf(p, sizeof(p), "/sys/class/net/%s/statistics/rx_packets", netdev);
	rx = read_num(p);
	printf("    %-28s %s sent_pkts %ld rcvd_pkts %ld, %s rx_packets %ld\n",
	       when, dev, sent, rcvd, netdev, rx);
	fflush(stdout);
}

/* Wait for one event; DISCONNECTED and TIMEWAIT_EXIT of old ids are
 * reported and skipped. Returns the event's type, or -1 on timeout. */
static int next_event(struct rdma_event_channel *ech, double timeout_s,
		      struct rdma_cm_id **id_out, int *status)
{
	struct rdma_cm_event *ev;
	struct pollfd p = {.fd = ech->fd, .events = POLLIN};
	int type;

	if (poll(&p, 1, (int)(timeout_s * 1000)) != 1)
		return -1;
	if (rdma_get_cm_event(ech, &ev))
		return -1;
	type = ev->event;
	if (id_out)
		*id_out = ev->id;
	if (status)
		*status = ev->status;
	rdma_ack_cm_event(ev);
	return type;
}

static int get_event(struct rdma_event_channel *ech, enum rdma_cm_event_type want,
		     double timeout_s, struct rdma_cm_id **id_out)
{
	double end = now_s() + timeout_s;
	int type, status = 0;

	for (;;) {
		double left = end - now_s();

		type = left > 0 ? next_event(ech, left, id_out, &status) : -1;
		if (type < 0) {
			printf("    no %s within %.0f s\n", rdma_event_str(want),
			       timeout_s);
			return -1;
		}
		if (type == (int)want)
			return 0;
		printf("    event %s (status %d) while waiting for %s\n",
		       rdma_event_str((enum rdma_cm_event_type)type), status,
		       rdma_event_str(want));
		if (type != RDMA_CM_EVENT_DISCONNECTED &&
		    type != RDMA_CM_EVENT_TIMEWAIT_EXIT)
			return -1;
	}
}

/* Report and acknowledge whatever the CM delivered meanwhile, so that the
 * ids can be destroyed (rdma_destroy_id waits for unacknowledged events). */
static void drain(struct rdma_event_channel *ech, const char *who)
{
	int type, status = 0;

	while (ech && (type = next_event(ech, 0, NULL, &status)) >= 0)
		printf("    %s: event %s (status %d)\n", who,
		       rdma_event_str((enum rdma_cm_event_type)type), status);
}

static int side_qp(struct side *s, struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qa;

	s->id = id;
	s->pd = ibv_alloc_pd(id->verbs);
	s->cq = s->pd ? ibv_create_cq(id->verbs, 16, NULL, NULL, 0) : NULL;
	if (!s->cq)
		return -1;
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = qa.recv_cq = s->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	return rdma_create_qp(id, s->pd, &qa);
}

static void side_free(struct side *s)
{
	if (s->id && s->id->qp)
		rdma_destroy_qp(s->id);
	if (s->cq)
		ibv_destroy_cq(s->cq);
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	if (s->id)
		rdma_destroy_id(s->id);
	if (s->ech)
		rdma_destroy_event_channel(s->ech);
	memset(s, 0, sizeof(*s));
}

static int listen_on(struct listener *l)
{
	struct sockaddr_in sa;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	inet_pton(AF_INET, ipv4, &sa.sin_addr);
	l->ech = rdma_create_event_channel();
	if (!l->ech || rdma_create_id(l->ech, &l->id, NULL, RDMA_PS_TCP))
		return -1;
	if (rdma_bind_addr(l->id, (struct sockaddr *)&sa) ||
	    rdma_listen(l->id, 4))
		return -1;
	return 0;
}

static void listener_free(struct listener *l)
{
	drain(l->ech, "listener");
	if (l->id)
		rdma_destroy_id(l->id);
	if (l->ech)
		rdma_destroy_event_channel(l->ech);
	memset(l, 0, sizeof(*l));
}

/* Address and route resolution of a new client id; retried until bound_s
 * passes, because right after the link's return the route may still be
 * missing. */
static int resolve(struct side *c, struct listener *l, double bound_s)
{
	struct sockaddr_in sa;
	double end = now_s() + bound_s;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	inet_pton(AF_INET, ipv4, &sa.sin_addr);
	sa.sin_port = rdma_get_src_port(l->id);
	for (;;) {
		c->ech = rdma_create_event_channel();
		if (!c->ech || rdma_create_id(c->ech, &c->id, NULL, RDMA_PS_TCP))
			return -1;
		if (!rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&sa, 2000) &&
		    !get_event(c->ech, RDMA_CM_EVENT_ADDR_RESOLVED, 3, NULL) &&
		    !rdma_resolve_route(c->id, 2000) &&
		    !get_event(c->ech, RDMA_CM_EVENT_ROUTE_RESOLVED, 3, NULL))
			return 0;
		side_free(c);
		if (now_s() > end)
			return -1;
		usleep(200000);
	}
}

/* Connect a client to listener l; the accepted id goes to srv. Returns 0
 * when both sides saw ESTABLISHED within bound_s. */
static int connect_pair(struct listener *l, struct side *srv, struct side *cli,
			double bound_s)
{
	struct rdma_conn_param cp;
	struct rdma_cm_id *cid;
	double t0 = now_s();

	if (resolve(cli, l, bound_s)) {
		printf("    address/route of %s not resolved within %.0f s\n",
		       ipv4, bound_s);
		return -1;
	}
	if (side_qp(cli, cli->id))
		return -1;
	memset(&cp, 0, sizeof(cp));
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	cp.responder_resources = cp.initiator_depth = 1;
	if (rdma_connect(cli->id, &cp))
		return -1;
	if (get_event(l->ech, RDMA_CM_EVENT_CONNECT_REQUEST,
		      bound_s - (now_s() - t0), &cid))
		return -1;
	if (side_qp(srv, cid) || rdma_accept(cid, &cp))
		return -1;
	if (get_event(cli->ech, RDMA_CM_EVENT_ESTABLISHED,
		      bound_s - (now_s() - t0), NULL) ||
	    get_event(l->ech, RDMA_CM_EVENT_ESTABLISHED,
		      bound_s - (now_s() - t0), NULL))
		return -1;
	return 0;
}

static enum ibv_port_state port_state(struct rdma_cm_id *id)
{
	struct ibv_port_attr pa;

	if (ibv_query_port(id->verbs, id->port_num ? id->port_num : 1, &pa))
		return IBV_PORT_NOP;
	return pa.state;
}

/* Wait until the port is (active) or is not (!active) ACTIVE. */
static int wait_port(struct rdma_cm_id *id, bool active, double bound_s)
{
	double t0 = now_s();

	while (now_s() - t0 < bound_s) {
		enum ibv_port_state s = port_state(id);

		if ((s == IBV_PORT_ACTIVE) == active) {
			printf("    port %s after %.2f s\n",
			       ibv_port_state_str(s), now_s() - t0);
			return 0;
		}
		usleep(50000);
	}
	printf("    port still %s after %.0f s\n",
	       ibv_port_state_str(port_state(id)), bound_s);
	return -1;
}

static int link_set(const char *how)
{
	char cmd[128];
	int r;

	snprintf(cmd, sizeof(cmd), "ip link set dev %s %s", netdev, how);
	r = system(cmd);
	printf("    %s: %s\n", cmd, r == 0 ? "ok" : "FAILED");
	fflush(stdout);
	return r == 0 ? 0 : -1;
}

static int run_case(const char *name, bool dreq_while_down)
{
	struct listener l = {0};
	struct side srv = {0}, cli = {0};
	char dev[IBV_SYSFS_NAME_MAX];
	int ok;
	double t;

	printf("%s:\n", name);
	if (listen_on(&l) || connect_pair(&l, &srv, &cli, BOUND_S)) {
		/* errno is not meaningful here: a missing event is no error */
		printf("%-10s SETUP FAILED: no first connection within %.0f s "
		       "(deaf from an earlier run in this boot?)\n", name, BOUND_S);
		side_free(&cli);
		side_free(&srv);
		listener_free(&l);
		return 1;
	}
	snprintf(dev, sizeof(dev), "%s", ibv_get_device_name(cli.id->verbs->device));
	counters(dev, "connected:");

	if (link_set("down") || wait_port(cli.id, false, BOUND_S))
		goto broken;
	counters(dev, "port down:");
	if (dreq_while_down) {
		printf("    rdma_disconnect(client) while down: %s\n",
		       rdma_disconnect(cli.id) ? strerror(errno) : "ok");
		sleep(1); /* let the CM try to send its DREQ */
		counters(dev, "after the DREQ:");
	}
	if (link_set("up") || wait_port(cli.id, true, 2 * BOUND_S))
		goto broken;
	counters(dev, "port active:");
	if (!dreq_while_down)
		printf("    rdma_disconnect(client) after the up: %s\n",
		       rdma_disconnect(cli.id) ? strerror(errno) : "ok");
	sleep(1);
	drain(cli.ech, "old client");
	drain(l.ech, "old listener");
	side_free(&cli);
	srv.ech = NULL;	/* the accepted id's events came on l.ech */
	side_free(&srv);
	listener_free(&l);

	t = now_s();
	ok = !listen_on(&l) && !connect_pair(&l, &srv, &cli, BOUND_S);
	t = now_s() - t;
	counters(dev, "after the new connection:");
	if (ok)
		printf("%-10s PASS: new connection established in %.2f s\n",
		       name, t);
	else
		printf("%-10s DEAF: no new connection within %.0f s\n", name,
		       BOUND_S);
	fflush(stdout);
	if (ok)
		rdma_disconnect(cli.id);
	drain(cli.ech, "new client");
	side_free(&cli);
	side_free(&srv);
	listener_free(&l);
	return ok ? 0 : 1;

broken:
	printf("%-10s BROKEN: the link or port did not change state\n", name);
	link_set("up");
	side_free(&cli);
	side_free(&srv);
	listener_free(&l);
	return 1;
}

static const struct {
	const char *name;
	bool dreq_while_down;
} cases[] = {
	{"control", false},
	{"dreq-down", true},
};

int main(int argc, char **argv)
{
	struct ibv_context **devs;
	struct sockaddr_in sa;
	int n = 0, i, j, fails = 0, ran = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: %s NETDEV IPV4 [CASE...]\n", argv[0]);
		return 2;
	}
	netdev = argv[1];
	ipv4 = argv[2];
	for (j = 3; j < argc; j++) {
		bool known = false;

		for (i = 0; i < (int)(sizeof(cases) / sizeof(cases[0])); i++)
			known |= !strcmp(argv[j], cases[i].name);
		if (!known) {
			fprintf(stderr, "no such case: %s\n", argv[j]);
			return 2;
		}
	}
	if (geteuid() != 0) {
		printf("SKIP: must run as root (it sets %s down and up)\n", netdev);
		return 77;
	}
	if (!if_nametoindex(netdev)) {
		printf("SKIP: no network device %s\n", netdev);
		return 77;
	}
	devs = rdma_get_devices(&n);
	if (devs)
		rdma_free_devices(devs);
	memset(&sa, 0, sizeof(sa));
	if (n <= 0 || inet_pton(AF_INET, ipv4, &sa.sin_addr) != 1) {
		printf("SKIP: no RDMA device, or %s is not an IPv4 address\n", ipv4);
		return 77;
	}
	{
		struct listener l = {0};
		bool ok = !listen_on(&l);

		if (!ok)
			printf("SKIP: cannot listen on %s over RDMA: %s\n", ipv4,
			       strerror(errno));
		listener_free(&l);
		if (!ok)
			return 77;
	}
	for (i = 0; i < (int)(sizeof(cases) / sizeof(cases[0])); i++) {
		bool pick = argc == 3;

		for (j = 3; j < argc; j++)
			pick |= !strcmp(argv[j], cases[i].name);
		if (!pick)
			continue;
		ran++;
		fails += run_case(cases[i].name, cases[i].dreq_while_down);
	}
	return fails ? 1 : 0;
}
