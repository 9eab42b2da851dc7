/* SPDX-License-Identifier: BSD-2-Clause */
/* idm_conn_get_stats() counters as text and as JSON; one list of fields
 * for both, so that the two outputs cannot drift apart. */
#include "ex_stats.h"

#include <inttypes.h>
#include <stddef.h>

#define U32(f) { #f, offsetof(struct idm_conn_stats, f), 4 }
#define U64(f) { #f, offsetof(struct idm_conn_stats, f), 8 }

static const struct field {
	const char *name;
	size_t off;
	int width;
} fields[] = {
	U32(tasks_active), U32(xfers_in_flight), U32(sendq_entries),
	U64(sendq_bytes), U64(pdus_tx), U64(pdus_rx), U64(bytes_tx),
	U64(bytes_rx), U64(data_in_pdus), U64(data_out_pdus), U64(r2t_pdus),
	U64(control_tx), U64(control_rx), U64(header_digest_errors),
	U64(data_digest_errors), U64(rdma_writes), U64(rdma_reads),
	U64(send_invalidates), U64(recv_queue_empty), U64(payload_copies),
	U64(payload_copy_bytes), U64(late_pdus_dropped),
};

static uint64_t value(const struct idm_conn_stats *s, const struct field *f)
{
	const char *p = (const char *)s + f->off;

	if (f->off + (size_t)f->width > s->size)
		return 0; /* a shorter struct from an older libidm */
	return f->width == 4 ? *(const uint32_t *)(const void *)p
			     : *(const uint64_t *)(const void *)p;
}

void ex_stats_text(FILE *f, const char *who, const struct idm_conn_stats *s)
{
	size_t n = sizeof(fields) / sizeof(fields[0]);

	for (size_t i = 0; i < n; i += 4) {
		fprintf(f, "%s:", who);
		for (size_t j = i; j < i + 4 && j < n; j++)
			fprintf(f, " %s=%" PRIu64, fields[j].name,
				value(s, &fields[j]));
		fputc('\n', f);
	}
}

void ex_stats_json(FILE *f, const struct idm_conn_stats *s)
{
	size_t n = sizeof(fields) / sizeof(fields[0]);

	fputc('{', f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s\"%s\": %" PRIu64, i ? ", " : "", fields[i].name,
			value(s, &fields[i]));
	fputc('}', f);
}
