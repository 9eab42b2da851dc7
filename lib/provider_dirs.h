/* SPDX-License-Identifier: BSD-2-Clause */
/* lib/provider_dirs.c: where providers are looked for. */
#ifndef LIBIDM_PROVIDER_DIRS_H
#define LIBIDM_PROVIDER_DIRS_H

#include "core.h"

/* `path` (colon-separated) is searched first: IDM_PROVIDER_PATH, or, when
 * that is unset and this libidm is the copy in its build tree, the build's
 * provider directories; NULL when neither. Then `install_dir`. */
struct idmp_provider_search {
	const char *path;
	const char *from; /* "IDM_PROVIDER_PATH" or "build tree" */
	const char *install_dir;
};
void idmp_provider_search(struct idmp_provider_search *s);
/* "DIRS (FROM), then DIR (install directory)", for messages */
void idmp_provider_search_describe(const struct idmp_provider_search *s, char *buf,
				   size_t len);
/* the build tree's provider directories if this is its libidm, else NULL */
const char *idmp_build_provider_path(void);

#endif
