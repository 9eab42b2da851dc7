/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The block pattern of the soak: every block a WRITE carries says which
 * run, LBA, generation and session it belongs to, and the rest of the
 * block is pseudo-random from those, so that a READ finds a block that
 * is stale (older generation), misplaced (another LBA), torn (header
 * right, body not) or foreign (another session's or run's).
 */
#include "soak.h"

#include <stdint.h>
#include <string.h>

#define SOAK_MAGIC 0x534f414b424c4b31ull /* "SOAKBLK1" */

/* splitmix64: fast, and each word differs from its neighbours */
static uint64_t mix(uint64_t *st)
{
	uint64_t z = (*st += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t body_seed(uint64_t run_id, uint64_t lba, uint32_t gen)
{
	return run_id ^ (lba * 0xd6e8feb86659fd93ull) ^
	       ((uint64_t)gen * 0xa0761d6478bd642full);
}

static uint64_t header_word2(uint32_t gen, int sess)
{
	return (uint64_t)gen | ((uint64_t)(uint32_t)sess << 32);
}

void soak_stamp(void *block, uint32_t block_size, uint64_t run_id,
		uint64_t lba, uint32_t gen, int sess)
{
	uint64_t *w = block;
	uint64_t st = body_seed(run_id, lba, gen);
	uint32_t n = block_size / 8;

	w[0] = SOAK_MAGIC ^ run_id;
	w[1] = lba;
	w[2] = header_word2(gen, sess);
	for (uint32_t i = 3; i < n; i++)
		w[i] = mix(&st);
}

int soak_check(const void *block, uint32_t block_size, uint64_t run_id,
	       uint64_t lba, uint32_t gen, int sess, uint64_t *found_lba,
	       uint32_t *found_gen, uint32_t *first_bad)
{
	const uint64_t *w = block;
	uint64_t st = body_seed(run_id, lba, gen);
	uint32_t n = block_size / 8;
	uint32_t bad = UINT32_MAX;

	if (w[0] != (SOAK_MAGIC ^ run_id))
		bad = 0;
	else if (w[1] != lba)
		bad = 8;
	else if (w[2] != header_word2(gen, sess))
		bad = 16;
	for (uint32_t i = 3; i < n && bad == UINT32_MAX; i++)
		if (w[i] != mix(&st))
			bad = i * 8;
	if (bad == UINT32_MAX)
		return 0;
	if (w[0] == (SOAK_MAGIC ^ run_id)) {
		*found_lba = w[1];
		*found_gen = (uint32_t)w[2];
	} else {
		*found_lba = UINT64_MAX;
		*found_gen = 0;
	}
	*first_bad = bad;
	return -1;
}
