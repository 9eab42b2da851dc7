/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * CRC32C: which implementation runs. The best one this CPU has is chosen
 * on the first digest (or the one IDM_TCP_CRC32C names, so a whole run
 * can be held to the fallback), then every call costs one load and an
 * indirect call. Digests run over every byte of payload, so this is on
 * the hot path of any connection with DataDigest.
 */
#include "crc32c.h"
#include "crc32c_impl.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static int always(void)
{
	return 1;
}

static const struct tcp_crc32c_impl impls[] = {
#ifdef CRC32C_HAVE_X86
	{ "avx512", crc32c_avx512, crc32c_avx512_usable },
	/* three crc32q streams beat four PCLMULQDQ accumulators where
	 * measured (AMD Zen 4: 20-27 against 11-13 GB/s) */
	{ "sse42", crc32c_sse42, crc32c_sse42_usable },
	{ "clmul", crc32c_clmul, crc32c_clmul_usable },
#endif
#ifdef CRC32C_HAVE_ARM64
	{ "armv8", crc32c_armv8, crc32c_armv8_usable },
#endif
	{ "sw", crc32c_sw, always },
};
#define N_IMPLS (sizeof(impls) / sizeof(impls[0]))

static _Atomic(const struct tcp_crc32c_impl *) active;

static const struct tcp_crc32c_impl *find(const char *name)
{
	for (size_t i = 0; i < N_IMPLS; i++)
		if (!strcmp(impls[i].name, name))
			return &impls[i];
	return NULL;
}

static const struct tcp_crc32c_impl *best(void)
{
	for (size_t i = 0; i < N_IMPLS; i++)
		if (impls[i].usable())
			return &impls[i];
	return &impls[N_IMPLS - 1];
}

/* First use: the environment's choice if this CPU runs it, else the best.
 * A tcp_crc32c_force that came first is kept. */
static void choose(void)
{
	const char *e = getenv("IDM_TCP_CRC32C");
	const struct tcp_crc32c_impl *want = e && *e ? find(e) : NULL;
	const struct tcp_crc32c_impl *none = NULL;

	crc32c_init();
	if (!want || !want->usable())
		want = best();
	atomic_compare_exchange_strong(&active, &none, want);
}

static const struct tcp_crc32c_impl *current(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, choose);
	return atomic_load_explicit(&active, memory_order_acquire);
}

uint32_t tcp_crc32c(uint32_t crc, const void *buf, size_t len)
{
	const struct tcp_crc32c_impl *i =
		atomic_load_explicit(&active, memory_order_acquire);

	if (__builtin_expect(!i, 0))
		i = current();
	return i->fn(crc, buf, len);
}

uint32_t tcp_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	crc32c_init();
	return crc32c_sw(crc, buf, len);
}

uint32_t tcp_crc32c_shift(uint32_t crc, uint64_t len)
{
	crc32c_init();
	return crc32c_multmodp(crc32c_xnmodp(8 * len), crc);
}

const struct tcp_crc32c_impl *tcp_crc32c_impls(size_t *n)
{
	crc32c_init();
	*n = N_IMPLS;
	return impls;
}

int tcp_crc32c_force(const char *name)
{
	const struct tcp_crc32c_impl *i;

	current();
	if (!name) {
		i = best();
	} else {
		i = find(name);
		if (!i)
			return -ENOENT;
		if (!i->usable())
			return -ENOTSUP;
	}
	atomic_store_explicit(&active, i, memory_order_release);
	return 0;
}

const char *tcp_crc32c_name(void)
{
	return current()->name;
}
