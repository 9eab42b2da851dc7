/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The one place libidm includes uthash. By default uthash calls exit() when
 * malloc fails; a library must not, so allocation failure is reported to the
 * caller instead (HASH_NONFATAL_OOM): after HASH_ADD, check
 * idmp_hash_oom and undo.
 */
#ifndef LIBIDM_UTHASH_H
#define LIBIDM_UTHASH_H

#define HASH_NONFATAL_OOM 1
static __thread int idmp_hash_oom __attribute__((unused));
#define uthash_nonfatal_oom(obj) (idmp_hash_oom = 1)

#include <uthash.h>

#endif
