/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Benchmark statistics: a log-linear latency histogram (fixed size, so
 * recording a sample never allocates) and the result printed as a
 * perftest-style table or as JSON.
 */
#include "initiator.h"

#include "ex_stats.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define MIB 1048576.0 /* perftest's MB */

void ini_hist_init(struct ini_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min_ns = UINT64_MAX;
}

/* Values below INI_HIST_SUB are exact; above, each power of two is split
 * into INI_HIST_SUB equal buckets. */
static unsigned bucket_of(uint64_t v)
{
	unsigned msb, shift;

	if (v < INI_HIST_SUB)
		return (unsigned)v;
	msb = 63u - (unsigned)__builtin_clzll(v);
	shift = msb - 5; /* log2(INI_HIST_SUB) == 5 */
	return (shift + 1) * INI_HIST_SUB +
	       (unsigned)((v >> shift) & (INI_HIST_SUB - 1));
}

/* The middle of a bucket's range, as the value reported for it. */
static uint64_t bucket_value(unsigned b)
{
	unsigned shift;
	uint64_t lo;

	if (b < INI_HIST_SUB)
		return b;
	shift = b / INI_HIST_SUB - 1;
	lo = ((uint64_t)INI_HIST_SUB + b % INI_HIST_SUB) << shift;
	return lo + ((1ull << shift) >> 1);
}

void ini_hist_add(struct ini_hist *h, uint64_t ns)
{
	unsigned b = bucket_of(ns);

	if (b >= INI_HIST_BUCKETS)
		b = INI_HIST_BUCKETS - 1;
	h->b[b]++;
	h->count++;
	h->sum_ns += ns;
	if (ns < h->min_ns)
		h->min_ns = ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

uint64_t ini_hist_pct(const struct ini_hist *h, double pct)
{
	uint64_t want, seen = 0;

	if (!h->count)
		return 0;
	if (pct >= 100)
		return h->max_ns;
	want = (uint64_t)((double)h->count * pct / 100.0 + 0.5);
	if (want == 0)
		want = 1;
	for (unsigned b = 0; b < INI_HIST_BUCKETS; b++) {
		seen += h->b[b];
		if (seen >= want) {
			uint64_t v = bucket_value(b);
			/* never report outside the observed range */
			if (v < h->min_ns)
				v = h->min_ns;
			if (v > h->max_ns)
				v = h->max_ns;
			return v;
		}
	}
	return h->max_ns;
}

static double us(uint64_t ns)
{
	return (double)ns / 1000.0;
}

#define RULE                                                                   \
	"--------------------------------------------------------------------" \
	"-------------------------------------"

static void lat_row(const char *what, uint32_t bs, const struct ini_hist *h)
{
	double avg = h->count ? (double)h->sum_ns / (double)h->count : 0;

	printf(" %-6s %-10u %-14" PRIu64
	       " %-12.2f %-12.2f %-12.2f %-12.2f %-14.2f %-12.2f\n",
	       what, bs, h->count, us(h->count ? h->min_ns : 0),
	       us(ini_hist_pct(h, 50)), avg / 1000.0, us(ini_hist_pct(h, 99)),
	       us(ini_hist_pct(h, 99.9)), us(h->max_ns));
}

void ini_report_table(const struct ini_bench_result *r)
{
	double secs = r->seconds > 0 ? r->seconds : 1;
	bool mixed = r->reads && r->writes;

	printf("%s\n", RULE);
	printf("                    iSCSI %s benchmark (idm-initiator on "
	       "libidm %s)\n",
	       r->read_pct == 100 ? "READ"
	       : r->read_pct == 0 ? "WRITE"
				  : "READ/WRITE",
	       idm_version());
	printf(" Provider: %s | Target: %s LUN %d\n", r->provider, r->target,
	       r->lun);
	printf(" Sessions: %d | Queue depth: %u | Reads: %d%% | Access: %s | "
	       "Duration: %.2f s\n",
	       r->sessions, r->qd, r->read_pct,
	       r->seq ? "sequential" : "random", r->seconds);
	printf("%s\n", RULE);
	printf(" %-10s %-14s %-18s %-20s %-15s %-12s\n", "#bytes",
	       "#iterations", "BW peak[MB/sec]", "BW average[MB/sec]",
	       "MsgRate[Mpps]", "IOPS");
	printf(" %-10u %-14" PRIu64 " %-18.2f %-20.2f %-15.6f %-12.0f\n", r->bs,
	       r->ios, r->bw_peak / MIB, (double)r->bytes / secs / MIB,
	       (double)r->ios / secs / 1e6, (double)r->ios / secs);
	printf("%s\n", RULE);
	printf(" %-6s %-10s %-14s %-12s %-12s %-12s %-12s %-14s %-12s\n", "op",
	       "#bytes", "#iterations", "t_min[usec]", "t_p50[usec]",
	       "t_avg[usec]", "t_p99[usec]", "t_p99.9[usec]", "t_max[usec]");
	lat_row("all", r->bs, &r->lat);
	if (mixed) {
		lat_row("read", r->bs, &r->lat_rd);
		lat_row("write", r->bs, &r->lat_wr);
	}
	printf("%s\n", RULE);
	if (r->errors)
		printf(" errors: %" PRIu64 "\n", r->errors);
}

/* Target names are iSCSI names (no quotes or backslashes allowed), but
 * escape anyway rather than trust the peer's SendTargets answer. */
static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static void json_lat(const char *name, const struct ini_hist *h)
{
	printf("\"%s\": {\"count\": %" PRIu64 ", \"min\": %.2f, \"p50\": %.2f, "
	       "\"avg\": %.2f, \"p99\": %.2f, \"p99_9\": %.2f, \"max\": %.2f}",
	       name, h->count, us(h->count ? h->min_ns : 0),
	       us(ini_hist_pct(h, 50)),
	       h->count ? (double)h->sum_ns / (double)h->count / 1000.0 : 0.0,
	       us(ini_hist_pct(h, 99)), us(ini_hist_pct(h, 99.9)),
	       us(h->max_ns));
}

void ini_report_json(const struct ini_bench_result *r)
{
	double secs = r->seconds > 0 ? r->seconds : 1;

	printf("{\"provider\": ");
	json_str(r->provider);
	printf(", \"target\": ");
	json_str(r->target);
	printf(", \"lun\": %d, \"sessions\": %d, \"queue_depth\": %u, "
	       "\"block_size\": %u, \"read_pct\": %d, \"access\": \"%s\", "
	       "\"duration_s\": %.3f,\n",
	       r->lun, r->sessions, r->qd, r->bs, r->read_pct,
	       r->seq ? "sequential" : "random", r->seconds);
	printf(" \"ios\": %" PRIu64 ", \"reads\": %" PRIu64
	       ", \"writes\": %" PRIu64 ", \"bytes\": %" PRIu64
	       ", \"errors\": %" PRIu64 ",\n",
	       r->ios, r->reads, r->writes, r->bytes, r->errors);
	printf(" \"iops\": %.1f, \"bw_avg_mib_s\": %.3f, \"bw_peak_mib_s\": "
	       "%.3f, "
	       "\"msg_rate_mpps\": %.6f,\n ",
	       (double)r->ios / secs, (double)r->bytes / secs / MIB,
	       r->bw_peak / MIB, (double)r->ios / secs / 1e6);
	json_lat("latency_us", &r->lat);
	printf(",\n ");
	json_lat("read_latency_us", &r->lat_rd);
	printf(",\n ");
	json_lat("write_latency_us", &r->lat_wr);
	/* the library's counters of each session's connection */
	printf(",\n \"connections\": [");
	for (int i = 0; i < r->n_conn_stats; i++) {
		printf("%s", i ? ",\n  " : "\n  ");
		ex_stats_json(stdout, &r->conn_stats[i]);
	}
	printf("]}\n");
}
