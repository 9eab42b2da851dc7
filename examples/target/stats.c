/* SPDX-License-Identifier: BSD-2-Clause */
/* SIGUSR1: every connection's idm_conn_get_stats() counters on stderr;
 * with several loops, each loop's own, on its thread, labelled "loop N". */
#include "target.h"

#include <ex_stats.h>
#include <stdio.h>

static const char *state_name(enum conn_state s)
{
	switch (s) {
	case CS_LOGIN:
		return "login";
	case CS_FFP:
		return "full-feature";
	case CS_CLOSING:
		return "closing";
	default:
		return "dead";
	}
}

void stats_print_all(void)
{
	int n = 0;

	for (struct tconn *c = g_loop->conns; c; c = c->next) {
		struct idm_conn_stats st = { .size = sizeof(st) };
		char who[160];

		if (idm_conn_get_stats(c->ic, &st) < 0)
			continue;
		if (g_nloops > 1)
			snprintf(who, sizeof(who), "stats loop %d %s %s %s", g_loop->index,
				 idm_conn_peer_name(c->ic), idm_conn_provider(c->ic),
				 state_name(c->state));
		else
			snprintf(who, sizeof(who), "stats %s %s %s",
				 idm_conn_peer_name(c->ic), idm_conn_provider(c->ic),
				 state_name(c->state));
		ex_stats_text(stderr, who, &st);
		n++;
	}
	/* LUN calls handed to a backend that completes on its own threads
	 * (RBD) and not completed yet: a cluster that does not answer shows
	 * here */
	if (g_nloops > 1)
		fprintf(stderr, "stats: loop %d: %d connection%s, %d LUN calls in flight\n",
			g_loop->index, n, n == 1 ? "" : "s", g_loop->cq.inflight);
	else
		fprintf(stderr, "stats: %d connection%s, %d LUN calls in flight\n", n,
			n == 1 ? "" : "s", g_loop->cq.inflight);
	fflush(stderr);
}
