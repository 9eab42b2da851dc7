/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A program built outside the source tree against the installed libidm,
 * with nothing but `pkg-config --cflags --libs libidm` (tests/abi/
 * check_install.py). It prints the version and the providers libidm found,
 * one "provider NAME PATH" line each, for the script to compare.
 */
#include <libidm/idm.h>
#include <libidm/iscsi.h>

#include <stdio.h>

int main(void)
{
	struct idm_ctx_attr attr = {
		.size = sizeof(attr),
		.log_level = -1,
	};
	const struct idm_provider_info *list;
	size_t n, i;
	idm_ctx *ctx;
	int rc;

	printf("version %s\n", idm_version());
	rc = idm_ctx_create(&attr, &ctx);
	if (rc < 0) {
		fprintf(stderr, "idm_ctx_create: %s\n", idm_strerror(rc));
		return 1;
	}
	rc = idm_get_providers(ctx, &list, &n);
	if (rc < 0) {
		fprintf(stderr, "idm_get_providers: %s\n", idm_strerror(rc));
		idm_ctx_destroy(ctx);
		return 1;
	}
	for (i = 0; i < n; i++)
		printf("provider %s %s abi=%u caps=0x%llx\n", list[i].name, list[i].path,
		       (unsigned)list[i].abi_version, (unsigned long long)list[i].caps);
	idm_ctx_destroy(ctx);
	return IDM_ISCSI_BHS_LEN == IDM_BHS_LEN ? 0 : 1;
}
