/* SPDX-License-Identifier: BSD-2-Clause */
/* lib/domain.c: the domain's references and provider instances. */
#ifndef LIBIDM_DOMAIN_H
#define LIBIDM_DOMAIN_H

#include "core.h"

/* References (a context's, a buffer's); a context's provider instance
 * joins the domain's entry for its module (src_ops: what the module's
 * entry returned), made on first use with ops->dom_open; a dying
 * buffer's registrations released through the domain's instances. */
void idmp_domain_ref(struct idm_domain *dom);
void idmp_domain_unref(struct idm_domain *dom);
int idmp_domain_bind(struct idm_domain *dom, struct idm_prov *prov,
		     const struct idm_prov_ops *src_ops);
void idmp_domain_buf_release(struct idm_buf *b);

#endif
