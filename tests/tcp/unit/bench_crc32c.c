/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * CRC32C throughput, not a test: GB/s of every implementation this CPU
 * runs, of the single crc32q stream the provider used before them
 * ("1stream"), and of ISA-L's crc32_iscsi when built with it, over
 * 4 KiB, 64 KiB and 1 MiB buffers (the same buffer again and again, so
 * from cache, as a digest over data just received is). Each figure is the
 * median of -r rounds (default 5) of about -t milliseconds (default 200)
 * of this thread's CPU time, so that time the scheduler gives other
 * processes on a shared machine does not count.
 * Usage: bench_crc32c [-r ROUNDS] [-t MS] [SIZE...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "crc32c.h"

#ifdef HAVE_ISAL
#include <isa-l/crc.h>

static uint32_t isal(uint32_t crc, const void *buf, size_t len)
{
	return crc32_iscsi((unsigned char *)buf, (int)len, crc);
}
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <nmmintrin.h>

/* the code this replaces: one crc32q stream, latency bound */
__attribute__((target("sse4.2"))) static uint32_t
one_stream(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t c = crc;

	while (len && ((uintptr_t)p & 7)) {
		c = _mm_crc32_u8((uint32_t)c, *p++);
		len--;
	}
	while (len >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = _mm_crc32_u64(c, v);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = _mm_crc32_u8((uint32_t)c, *p++);
	return (uint32_t)c;
}

static int one_stream_usable(void)
{
	unsigned a, b, c, d;

	return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2);
}
#endif

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static volatile uint32_t sink;

/* median GB/s of rounds runs of about ms milliseconds each */
static double measure(tcp_crc32c_fn f, const uint8_t *buf, size_t len,
		      int rounds, int ms)
{
	double gbs[64];
	uint32_t crc = TCP_CRC32C_INIT;
	size_t iters = 1;
	double t;

	/* size the loop so a round takes about ms */
	do {
		iters *= 2;
		t = now();
		for (size_t i = 0; i < iters; i++)
			crc = f(crc, buf, len);
		t = now() - t;
	} while (t < (double)ms * 1e-3 / 8);
	iters = (size_t)((double)iters * ((double)ms * 1e-3) / t) + 1;
	for (int r = 0; r < rounds; r++) {
		t = now();
		for (size_t i = 0; i < iters; i++)
			crc = f(crc, buf, len);
		t = now() - t;
		gbs[r] = (double)len * (double)iters / t * 1e-9;
	}
	sink = crc;
	qsort(gbs, (size_t)rounds, sizeof(gbs[0]), cmp_double);
	return gbs[rounds / 2];
}

struct column {
	const char *name;
	tcp_crc32c_fn fn;
};

int main(int argc, char **argv)
{
	static const size_t dflt[] = { 4096, 65536, 1 << 20 };
	struct column col[16];
	size_t sizes[16], nsizes = 0, nimpl, ncol = 0, maxlen = 0;
	const struct tcp_crc32c_impl *impls = tcp_crc32c_impls(&nimpl);
	int rounds = 5, ms = 200, i;
	uint8_t *buf;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-r") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-t") && i + 1 < argc)
			ms = atoi(argv[++i]);
		else if (argv[i][0] != '-' && nsizes < 16)
			sizes[nsizes++] = strtoul(argv[i], NULL, 0);
		else {
			fprintf(stderr,
				"usage: %s [-r ROUNDS] [-t MS] [SIZE...]\n",
				argv[0]);
			return 2;
		}
	}
	if (rounds < 1 || rounds > 64 || ms < 1) {
		fprintf(stderr, "-r 1..64, -t at least 1\n");
		return 2;
	}
	if (!nsizes)
		for (; nsizes < 3; nsizes++)
			sizes[nsizes] = dflt[nsizes];
	for (size_t s = 0; s < nsizes; s++)
		if (sizes[s] > maxlen)
			maxlen = sizes[s];
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	if (one_stream_usable())
		col[ncol++] = (struct column){ "1stream", one_stream };
#endif
	for (size_t k = 0; k < nimpl; k++)
		if (impls[k].usable())
			col[ncol++] =
				(struct column){ impls[k].name, impls[k].fn };
#ifdef HAVE_ISAL
	col[ncol++] = (struct column){ "isa-l", isal };
#endif
	buf = malloc(maxlen ? maxlen : 1);
	if (!buf)
		return 1;
	for (size_t k = 0; k < maxlen; k++)
		buf[k] = (uint8_t)(k * 2654435761u >> 13);
	printf("CRC32C GB/s of CPU time, median of %d rounds; tcp_crc32c "
	       "uses %s\n",
	       rounds, tcp_crc32c_name());
	printf("%10s", "bytes");
	for (size_t c = 0; c < ncol; c++)
		printf(" %9s", col[c].name);
	printf("\n");
	for (size_t s = 0; s < nsizes; s++) {
		printf("%10zu", sizes[s]);
		fflush(stdout);
		for (size_t c = 0; c < ncol; c++) {
			printf(" %9.2f",
			       measure(col[c].fn, buf, sizes[s], rounds, ms));
			fflush(stdout);
		}
		printf("\n");
	}
	free(buf);
	return 0;
}
