/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libidm internals shared by the core and the providers built with it.
 * Functions named idmp_* are exported in the IDM_PRIVATE_1 version node for
 * the providers only; applications must not use them.
 */
#ifndef LIBIDM_INTERNAL_H
#define LIBIDM_INTERNAL_H

#include <libidm/idm.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "idm_uthash.h"

#define IDMP_API __attribute__((visibility("default")))
#define IDMP_PRINTF(a, b) __attribute__((format(printf, a, b)))

#define IDMP_MAX_PROVIDERS 8
/* provider files described by idm_get_provider_status(); more are loaded
 * or skipped as usual, just not described */
#define IDMP_MAX_PROVIDER_STATUS 32

struct idmp_prov_status;

/* ------------------------------------------------------------------ */
/* Event loop                                                          */
/* ------------------------------------------------------------------ */

struct idm_prov_watch;
typedef void (*idm_prov_watch_fn)(struct idm_prov_watch *w, uint32_t revents);

/* An fd in the context's epoll set. Embed it in your own struct. */
struct idm_prov_watch {
	int fd;
	uint32_t events; /* EPOLLIN | EPOLLOUT ... */
	idm_prov_watch_fn fn;
	bool added;
};

IDMP_API int idm_prov_watch_add(struct idm_ctx *ctx, struct idm_prov_watch *w, int fd,
			    uint32_t events, idm_prov_watch_fn fn);
IDMP_API int idm_prov_watch_mod(struct idm_ctx *ctx, struct idm_prov_watch *w,
			    uint32_t events);
IDMP_API void idm_prov_watch_del(struct idm_ctx *ctx, struct idm_prov_watch *w);

/* Work to run from the next progress pass (never inside the API call that
 * queued it). Embed it; queueing an already queued item is a no-op. */
struct idm_prov_defer;
typedef void (*idm_prov_defer_fn)(struct idm_prov_defer *d);
struct idm_prov_defer {
	idm_prov_defer_fn fn;
	struct idm_prov_defer *next;
	bool queued;
};
IDMP_API void idm_prov_defer(struct idm_ctx *ctx, struct idm_prov_defer *d,
			 idm_prov_defer_fn fn);
IDMP_API void idm_prov_defer_cancel(struct idm_ctx *ctx, struct idm_prov_defer *d);

/* ------------------------------------------------------------------ */
/* Logging                                                             */
/* ------------------------------------------------------------------ */

IDMP_API void idm_prov_log(struct idm_ctx *ctx, enum idm_log_level level,
		       const char *fmt, ...) IDMP_PRINTF(3, 4);
#define idm_prov_err(ctx, ...) idm_prov_log((ctx), IDM_LOG_ERROR, __VA_ARGS__)
#define idm_prov_warn(ctx, ...) idm_prov_log((ctx), IDM_LOG_WARN, __VA_ARGS__)
#define idm_prov_info(ctx, ...) idm_prov_log((ctx), IDM_LOG_INFO, __VA_ARGS__)
#define idm_prov_dbg(ctx, ...) idm_prov_log((ctx), IDM_LOG_DEBUG, __VA_ARGS__)

/* ------------------------------------------------------------------ */
/* Negotiated parameters (Notice_Key_Values)                           */
/* ------------------------------------------------------------------ */

struct idm_conn_params {
	bool header_digest;   /* CRC32C */
	bool data_digest;     /* CRC32C */
	bool immediate_data;
	bool initial_r2t;
	bool data_pdu_in_order;
	bool data_seq_in_order;
	uint32_t max_burst_length;
	uint32_t first_burst_length;
	uint32_t max_outstanding_r2t;
	uint32_t error_recovery_level;
	/* MaxRecvDataSegmentLength declared by each side: the initiator's
	 * limits what the target sends, and the other way round. */
	uint32_t initiator_recv_dsl;
	uint32_t target_recv_dsl;
	/* iSER (RFC 7145 section 6) */
	bool rdma_extensions;
	bool iser_hello_required;
	bool tagged_buffer_solicited_only;
	uint32_t max_outstanding_unexpected_pdus; /* 0: no limit */
	uint32_t max_ahs_length;
};

/* RFC 7143 defaults. */
IDMP_API void idm_prov_params_default(struct idm_conn_params *p);
/* Parse iSCSI text into p; returns -EINVAL (p unchanged) on a bad value.
 * `role` resolves MaxRecvDataSegmentLength (the peer's declaration);
 * 0 ignores that key. */
IDMP_API int idm_prov_params_parse(struct idm_conn_params *p, enum idm_role role,
			       const char *kv, size_t len, char *err,
			       size_t errlen);

/* ------------------------------------------------------------------ */
/* Objects                                                             */
/* ------------------------------------------------------------------ */

struct idm_prov {
	const struct idm_prov_ops *ops;
	struct idm_ctx *ctx;
	void *dl;        /* dlopen handle (NULL for built-in test providers) */
	int index;       /* slot in ctx->providers and idm_buf.reg */
	void *priv;      /* provider's global state */
	struct idm_provider_info info;
	char path[512];
	/* init() may say here why it failed ("no RDMA device"): shown by
	 * idm_get_provider_status() and idm_last_error() */
	char why[128];
};

enum idm_conn_phase {
	IDM_CONN_PHASE_CONNECTING = 0, /* initiator before connected() */
	IDM_CONN_PHASE_LOGIN,          /* connected, login phase */
	IDM_CONN_PHASE_FFP,            /* Enable_Datamover done */
	IDM_CONN_PHASE_FAILED,         /* failed; terminate_notify raised/queued */
	IDM_CONN_PHASE_TERMINATED,     /* Connection_Terminate by the caller */
};

struct idm_buf {
	struct idm_ctx *ctx;
	void *addr;
	size_t len;
	bool owned;      /* memory allocated by idm_buf_alloc */
	void *reg[IDMP_MAX_PROVIDERS]; /* provider registrations */
};

struct idm_task {
	struct idm_conn *conn;
	uint32_t itt;
	bool active;
	void *arg;
	/* initiator: buffers from idm_task_set_data() */
	struct idm_buf *in_buf;
	size_t in_off;
	uint32_t in_len;
	struct idm_buf *out_buf;
	size_t out_off;
	uint32_t out_len;
	uint32_t received; /* bytes placed, see idm_task_data_received() */
	UT_hash_handle hh;  /* conn->tasks by itt */
	struct idm_task *next_free;
	/* provider-private area of ops->task_priv_size bytes follows */
	_Alignas(16) unsigned char priv[];
};

static inline void *idm_prov_task_priv(struct idm_task *t)
{
	return t->priv;
}

struct idm_pdu {
	const uint8_t *bhs;
	const uint8_t *ahs;
	size_t ahs_len;
	const uint8_t *data;
	size_t data_len;
	struct idm_task *task;
};

struct idm_conn {
	struct idm_ctx *ctx;
	struct idm_prov *prov;
	const struct idm_prov_ops *ops;
	void *priv;              /* provider's connection state */
	enum idm_role role;
	enum idm_conn_phase state;
	struct idm_conn_cbs cbs;
	void *arg;
	struct idm_conn_params params;
	bool rsrc_allocated;
	int fail_reason;
	struct idm_prov_defer notify_defer; /* queues terminate_notify */
	struct idm_prov_defer connect_defer;
	int connect_status;
	char error[256];
	char peer_name[64];
	char local_name[64];
	/* tasks */
	struct idm_task *tasks;     /* uthash by itt, active ones */
	struct idm_task *task_free; /* pool free list */
	void **task_chunks;
	size_t n_task_chunks;
	size_t task_size;
	/* ctx list */
	struct idm_conn *next, *prev;
	/* auto provider selection: remaining candidates */
	int fallback_index;
	struct sockaddr_storage sa;
	socklen_t salen;
	int connect_timeout_ms;
	/* idm_conn_set_cmd_window(): commands admitted at once, 0 unknown */
	uint32_t cmd_window;
};

/* One provider listening for one portal, with its private state. */
struct idm_prov_listener {
	struct idm_portal *portal;
	struct idm_prov *prov;
	void *priv;
};

struct idm_portal {
	struct idm_ctx *ctx;
	idm_accept_fn accept;
	void *arg;
	int port;
	size_t n_listeners;
	struct idm_prov_listener listeners[IDMP_MAX_PROVIDERS];
	struct idm_portal *next, *prev;
};

struct idm_ctx {
	pthread_mutex_t lock; /* recursive; see idm_ctx_start_progress_thread */
	int epfd;
	int evfd;             /* wakes epfd for deferred work */
	struct idm_prov_watch ev_watch;
	struct idm_prov_defer *defer_head, *defer_tail;
	idm_log_fn log_fn;
	void *log_arg;
	int log_level;
	/* providers, loaded lazily */
	bool providers_loaded;
	size_t n_providers;
	struct idm_prov providers[IDMP_MAX_PROVIDERS];
	struct idm_provider_info provider_info[IDMP_MAX_PROVIDERS];
	/* every provider file found, loaded or not (idm_get_provider_status) */
	struct idmp_prov_status *status;
	size_t n_status;
	/* objects */
	struct idm_conn *conns;
	struct idm_portal *portals;
	/* progress thread */
	pthread_t thread;
	bool thread_running;
	_Atomic bool thread_stop;
};

/* lock helpers for the public entry points */
void idmp_ctx_lock(struct idm_ctx *ctx);
void idmp_ctx_unlock(struct idm_ctx *ctx);

/* ------------------------------------------------------------------ */
/* Calls from providers into the core                                  */
/* ------------------------------------------------------------------ */

/* Target: a listener accepted a transport connection. The core creates the
 * idm_conn with conn->priv = priv and the names from the addresses, asks
 * the portal's accept callback, and returns 0 with *out set or a negative
 * errno (the connection was refused: the provider frees priv and closes its
 * transport). Call from progress context (a watch callback). */
IDMP_API int idm_prov_conn_accepted(struct idm_prov_listener *l, void *priv,
				const struct sockaddr *local,
				const struct sockaddr *peer, struct idm_conn **out);
/* Set the "ip:port" names (initiator: once connected). */
IDMP_API void idm_prov_conn_set_names(struct idm_conn *conn, const struct sockaddr *local,
				  const struct sockaddr *peer);

/* Initiator: connect finished (0) or failed (<0). May be called from
 * anywhere; the callback runs deferred. */
IDMP_API void idm_prov_conn_connected(struct idm_conn *conn, int status);

/* The notifications. Call only from progress context (a watch or defer
 * callback), never from inside a provider op invoked by the caller. */
IDMP_API void idm_prov_control_notify(struct idm_conn *conn, struct idm_pdu *pdu);
IDMP_API void idm_prov_data_completion(struct idm_task *task, enum idm_data_dir dir,
				   uint32_t offset, uint32_t length,
				   uint32_t sn, int status);
IDMP_API void idm_prov_data_ack(struct idm_task *task, uint32_t datasn);

/* Record why the connection is failing (first message wins). */
IDMP_API void idm_prov_conn_set_error(struct idm_conn *conn, const char *fmt, ...)
	IDMP_PRINTF(2, 3);
/* The provider has released every task and buffer of the connection after a
 * failure: mark it failed and queue Connection_Terminate_Notify (raised
 * once, from the next progress pass). Safe to call from anywhere. */
IDMP_API void idm_prov_conn_failed(struct idm_conn *conn, int reason);

/* Target providers: create the task of a received SCSI Command. -EEXIST if
 * the ITT is active. */
IDMP_API int idm_prov_task_new(struct idm_conn *conn, uint32_t itt,
			   struct idm_task **out);
IDMP_API struct idm_task *idm_prov_task_find(struct idm_conn *conn, uint32_t itt);

/* The limit on data segments this side may send / must accept. */
static inline uint32_t idm_prov_send_dsl(const struct idm_conn *c)
{
	return c->role == IDM_ROLE_TARGET ? c->params.initiator_recv_dsl
					  : c->params.target_recv_dsl;
}
static inline uint32_t idm_prov_recv_dsl(const struct idm_conn *c)
{
	return c->role == IDM_ROLE_TARGET ? c->params.target_recv_dsl
					  : c->params.initiator_recv_dsl;
}

#endif
