/* SPDX-License-Identifier: BSD-2-Clause */
/* iser_pd.c: the domain's devices and their protection domains. Calls
 * nothing of the provider. */
#ifndef IDM_ISER_PD_H
#define IDM_ISER_PD_H

#include "iser.h"

/* The device of verbs, with its PD: found, or opened on first use. */
struct iser_dev *iser_dev_get(struct iser_prov *ip, struct ibv_context *verbs);
/* ops->dom_open / dom_close: the devices the domain's contexts share */
int iser_dom_open(struct idm_prov *prov, void **priv);
void iser_dom_close(void *priv);
/* dev's index among the domain's devices (iser_prov.srq[]) */
int iser_dev_index(const struct iser_prov *ip, const struct iser_dev *dev);

#endif
