/* SPDX-License-Identifier: BSD-2-Clause */
/* Printing a connection's idm_conn_get_stats() counters, as text (the
 * target's SIGUSR1 dump) and as a JSON object (the initiator's --json). */
#ifndef EX_STATS_H
#define EX_STATS_H

#include <libidm/idm.h>
#include <stdio.h>

/* One connection, a few lines, each prefixed with `who`. */
void ex_stats_text(FILE *f, const char *who, const struct idm_conn_stats *s);
/* One JSON object, no newline. */
void ex_stats_json(FILE *f, const struct idm_conn_stats *s);

#endif
