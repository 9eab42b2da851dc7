/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The provider ABI: what a transport module (libidm-<name>.so) exports and
 * what libidm offers it. Private to libidm and the providers built with it,
 * like rdma-core's driver.h: a provider must be rebuilt when
 * IDM_PROV_ABI changes. See doc/providers.md.
 *
 * A provider exports exactly one symbol, IDM_PROV_ENTRY (its name
 * carries the ABI major so a mismatched module fails to resolve), which
 * returns its ops table. libidm refuses a table whose abi_version differs
 * or whose size is smaller than the mandatory part, or that lacks a
 * mandatory op.
 */
#ifndef LIBIDM_PROVIDER_H
#define LIBIDM_PROVIDER_H

#include "idm_internal.h"

#define IDM_PROV_ABI 1
#define IDM_PROV_ENTRY idm_provider_entry_v1
#define IDM_PROV_ENTRY_NAME "idm_provider_entry_v1"


struct idm_prov_ops {
	uint32_t abi_version; /* IDM_PROV_ABI */
	uint32_t size;        /* sizeof(struct idm_prov_ops) */
	const char *name;     /* short, [a-z0-9_]: "tcp" */
	const char *description;
	uint64_t caps;        /* IDM_CAP_* */
	size_t task_priv_size; /* bytes libidm reserves in each task, see
				  idm_prov_task_priv() */

	/* optional: once after loading / before unloading */
	int (*init)(struct idm_prov *prov);
	void (*fini)(struct idm_prov *prov);

	/* Target: listen for connections on sa; call idm_prov_conn_accepted() for
	 * each. Store private state in l->priv. */
	int (*listen)(struct idm_prov_listener *l, const struct sockaddr *sa,
		      socklen_t salen, int backlog);
	void (*unlisten)(struct idm_prov_listener *l);
	/* bound port of a listener (for port "0") */
	int (*listener_port)(struct idm_prov_listener *l);

	/* Initiator: start connecting; report with idm_prov_conn_connected().
	 * Store private state in conn->priv. */
	int (*connect)(struct idm_conn *conn, const struct sockaddr *sa,
		       socklen_t salen, int timeout_ms);

	/* The primitives. Arguments are validated by libidm beforehand as far
	 * as it can (states, lengths, task/connection match). */
	int (*send_control)(struct idm_conn *conn, const uint8_t *bhs,
			    const void *ahs, size_t ahs_len, const void *data,
			    size_t data_len, struct idm_task *task);
	int (*put_data)(struct idm_task *task, const uint8_t *tmpl,
			struct idm_buf *buf, size_t buf_off, uint32_t offset,
			uint32_t length, uint32_t flags);
	int (*get_data)(struct idm_task *task, const uint8_t *tmpl,
			struct idm_buf *buf, size_t buf_off, uint32_t offset,
			uint32_t length, uint32_t flags);
	int (*enable_datamover)(struct idm_conn *conn, const uint8_t *rsp,
				const void *data, size_t data_len);
	/* Synchronous: when it returns the provider holds nothing of the
	 * connection's tasks and buffers, has closed its transport, and will
	 * call nothing for it again. conn->priv may stay allocated until
	 * conn_free. */
	void (*conn_terminate)(struct idm_conn *conn);
	/* Synchronous: forget everything about the task (cancel its data
	 * transfers without notification). */
	void (*task_free)(struct idm_task *task);

	/* optional */
	int (*alloc_conn_rsrc)(struct idm_conn *conn);
	void (*free_conn_rsrc)(struct idm_conn *conn);
	/* conn->params already holds the new values */
	int (*notice_key_values)(struct idm_conn *conn);
	/* free conn->priv; called after conn_terminate */
	void (*conn_free)(struct idm_conn *conn);
	/* a buffer the provider registered (buf->reg[prov->index]) is being
	 * destroyed */
	void (*buf_release)(struct idm_prov *prov, struct idm_buf *buf);
	/* "auto" selection: can this provider reach sa? 0 yes, <0 no */
	int (*conn_is_capable)(struct idm_prov *prov,
			       const struct sockaddr *sa, socklen_t salen);
};

/* The one symbol a provider exports. */
typedef const struct idm_prov_ops *(*idm_prov_entry_fn)(void);

#define IDM_PROV_EXPORT __attribute__((visibility("default")))

#endif
