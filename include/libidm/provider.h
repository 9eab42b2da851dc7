/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libidm provider SDK: what a transport module (libidm-<name>.so) exports
 * and what libidm offers it, like rdma-core's <infiniband/driver.h>.
 *
 * Installed with libidm; an out-of-tree provider builds with
 *     cc -shared -fPIC -fvisibility=hidden \
 *        $(pkg-config --cflags --libs libidm-provider) ...
 * and is installed into $(pkg-config --variable=providerdir libidm-provider).
 *
 * A provider exports exactly one symbol, IDM_PROV_ENTRY (its name carries
 * IDM_PROV_ABI, so a module built for another ABI fails to resolve), which
 * returns its ops table. libidm refuses a table whose abi_version differs,
 * whose size is smaller than the mandatory part, or that lacks a mandatory
 * op. The core services below are exported by libidm.so.1 in the version
 * node IDM_PROV_<n>, n being IDM_PROV_ABI: compatible within one
 * IDM_PROV_ABI, replaced as a whole when it is bumped. A provider must be
 * rebuilt when IDM_PROV_ABI changes.
 *
 * The core's objects (struct idm_conn, idm_task, idm_buf, idm_prov,
 * idm_prov_listener, idm_ctx) are opaque here: a provider reaches what it
 * needs through the accessors below, never through their layout.
 *
 * Threading: libidm calls every op with the context lock held, from the
 * caller's thread (a primitive) or from the progress pass (a watch or
 * defer callback). Unless a declaration says otherwise, a core service may
 * be called only from those same places, i.e. with the lock held. Those
 * marked "any thread" take the lock themselves, so a thread of the
 * provider's own may call them.
 */
#ifndef LIBIDM_PROVIDER_H
#define LIBIDM_PROVIDER_H

#include <libidm/idm.h>
#include <libidm/iscsi.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* ABI number: written here only. Everything else derives from it: the  */
/* entry symbol, its name for dlsym(), the version node of the core     */
/* services (the build reads this line to generate the linker maps).    */
/*                                                                      */
/* It goes up by one with every change of this header or of             */
/* provider_util.h that a built provider could notice: a struct's       */
/* layout (the ops table, idm_prov_xfer, idm_prov_unsol, idm_prov_stats */
/* and the others), a callback type, a core service added, removed or   */
/* changed. Test abi-provider-sdk compares the SDK with its baseline    */
/* for this number and fails on any difference (doc/providers.md,       */
/* "The SDK's ABI"). Comments and new macros need no bump.              */
/* ------------------------------------------------------------------ */

#define IDM_PROV_ABI 5

#define IDM_PROV_PASTE_(a, b) a##b
#define IDM_PROV_PASTE(a, b) IDM_PROV_PASTE_(a, b)
#define IDM_PROV_STR_(x) #x
#define IDM_PROV_STR(x) IDM_PROV_STR_(x)

/* The one symbol a provider defines, e.g. idm_provider_entry_v5. */
#define IDM_PROV_ENTRY IDM_PROV_PASTE(idm_provider_entry_v, IDM_PROV_ABI)
/* Its name as a string, for dlsym() and version scripts. */
#define IDM_PROV_ENTRY_NAME IDM_PROV_STR(IDM_PROV_ENTRY)

#if defined(__GNUC__)
/* Marks the core services libidm exports for providers (IDM_PROV_<n>). */
#define IDM_PROV_API __attribute__((visibility("default")))
/* Marks the entry point a provider exports (build it -fvisibility=hidden). */
#define IDM_PROV_EXPORT __attribute__((visibility("default")))
#define IDM_PROV_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define IDM_PROV_API
#define IDM_PROV_EXPORT
#define IDM_PROV_PRINTF(a, b)
#endif

/* The struct of type `type` whose member `member` is at `ptr`. */
#define IDM_PROV_CONTAINER_OF(ptr, type, member)                               \
	((type *)(void *)((char *)(ptr)-offsetof(type, member)))

struct idm_prov;          /* a loaded provider */
struct idm_prov_listener; /* one provider listening for one portal */
struct idm_prov_ops;
struct idm_prov_stats;     /* a connection's counters (idm_prov_conn_stats) */

/* ------------------------------------------------------------------ */
/* Event loop                                                          */
/* ------------------------------------------------------------------ */

struct idm_prov_watch;
typedef void (*idm_prov_watch_fn)(struct idm_prov_watch *w, uint32_t revents);

/* An fd in the context's epoll set. Embed it in your own struct and find
 * that struct again with IDM_PROV_CONTAINER_OF in the callback, which runs
 * in the progress pass with the lock held. */
struct idm_prov_watch {
	int fd;
	uint32_t events; /* EPOLLIN | EPOLLOUT ... */
	idm_prov_watch_fn fn;
	bool added;
};

IDM_PROV_API int idm_prov_watch_add(struct idm_ctx *ctx, struct idm_prov_watch *w,
				    int fd, uint32_t events, idm_prov_watch_fn fn);
IDM_PROV_API int idm_prov_watch_mod(struct idm_ctx *ctx, struct idm_prov_watch *w,
				    uint32_t events);
/* Safe on a watch never added. */
IDM_PROV_API void idm_prov_watch_del(struct idm_ctx *ctx, struct idm_prov_watch *w);

/* Work to run from the next progress pass (never inside the API call that
 * queued it). Embed it; queueing an already queued item is a no-op.
 * Both may be called from any thread (they take the context lock); the
 * item's memory must outlive the queueing, and its callback runs in the
 * progress pass with the lock held. */
struct idm_prov_defer;
typedef void (*idm_prov_defer_fn)(struct idm_prov_defer *d);
struct idm_prov_defer {
	idm_prov_defer_fn fn;
	struct idm_prov_defer *next;
	bool queued;
};
IDM_PROV_API void idm_prov_defer(struct idm_ctx *ctx, struct idm_prov_defer *d,
				 idm_prov_defer_fn fn);
/* Safe on an item not queued. */
IDM_PROV_API void idm_prov_defer_cancel(struct idm_ctx *ctx, struct idm_prov_defer *d);
/* ops->conn_move: an item queued on src runs on dst instead, once; one not
 * queued is left as it is. Both contexts' locks are held by the caller. */
IDM_PROV_API void idm_prov_defer_move(struct idm_ctx *src, struct idm_ctx *dst,
				      struct idm_prov_defer *d);

/* ------------------------------------------------------------------ */
/* Logging (through the context's log callback)                       */
/* ------------------------------------------------------------------ */

IDM_PROV_API void idm_prov_log(struct idm_ctx *ctx, enum idm_log_level level,
			       const char *fmt, ...) IDM_PROV_PRINTF(3, 4);
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

/* RFC 7143 / RFC 7145 defaults. Any context. */
IDM_PROV_API void idm_prov_params_default(struct idm_conn_params *p);
/* Parse iSCSI text into p; returns -EINVAL (p unchanged) on a bad value.
 * `role` resolves MaxRecvDataSegmentLength (the peer's declaration);
 * 0 ignores that key. Any context. */
IDM_PROV_API int idm_prov_params_parse(struct idm_conn_params *p, enum idm_role role,
				       const char *kv, size_t len, char *err,
				       size_t errlen);

/* ------------------------------------------------------------------ */
/* Received PDUs                                                       */
/* ------------------------------------------------------------------ */

/* A control-type PDU handed to idm_prov_control_notify(): built by the
 * provider (usually on its stack), valid only during that call; the
 * caller reads it with idm_pdu_bhs() and friends. */
struct idm_pdu {
	const uint8_t *bhs;
	const uint8_t *ahs;
	size_t ahs_len;
	const uint8_t *data;
	size_t data_len;
	struct idm_task *task; /* the task of a SCSI Command / Response, or NULL */
};

/* ------------------------------------------------------------------ */
/* The ops table                                                       */
/* ------------------------------------------------------------------ */

/* Where a connection is. Read with idm_prov_conn_phase(). */
enum idm_conn_phase {
	IDM_CONN_PHASE_CONNECTING = 0, /* initiator before connected() */
	IDM_CONN_PHASE_LOGIN,          /* connected, login phase */
	IDM_CONN_PHASE_FFP,            /* Enable_Datamover done */
	IDM_CONN_PHASE_FAILED,         /* failed; terminate_notify raised/queued */
	IDM_CONN_PHASE_TERMINATED,     /* Connection_Terminate by the caller */
};

struct idm_prov_ops {
	uint32_t abi_version; /* IDM_PROV_ABI */
	uint32_t size;        /* sizeof(struct idm_prov_ops) */
	const char *name;     /* short, [a-z0-9_]: "tcp" */
	const char *description;
	uint64_t caps;        /* IDM_CAP_*; IDM_CAP_RDMA also says the provider
				 needs an RDMA device (tests skip without one) */
	size_t task_priv_size; /* bytes libidm reserves in each task, see
				  idm_prov_task_priv() */

	/* optional: once after loading / before unloading. init() may say
	 * why it fails with idm_prov_set_why(). */
	int (*init)(struct idm_prov *prov);
	void (*fini)(struct idm_prov *prov);

	/* Target: listen for connections on sa; call idm_prov_conn_accepted()
	 * for each. Keep private state with idm_prov_listener_set_priv(). */
	int (*listen)(struct idm_prov_listener *l, const struct sockaddr *sa,
		      socklen_t salen, int backlog);
	void (*unlisten)(struct idm_prov_listener *l);
	/* The port the listener is bound to (how the caller learns the one
	 * picked for port "0"): 1..65535, or a negative errno, -EINVAL when
	 * the listener has no bound endpoint (no private state); never -1.
	 * libidm calls it after a successful listen() or listen_fd(), and
	 * idm_portal_port() returns what it answered. */
	int (*listener_port)(struct idm_prov_listener *l);

	/* Initiator: start connecting; report with idm_prov_conn_connected().
	 * Keep private state with idm_prov_conn_set_priv(). */
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
	 * call nothing for it again. Its connection state may stay allocated
	 * until conn_free. */
	void (*conn_terminate)(struct idm_conn *conn);
	/* Synchronous: forget everything about the task (cancel its data
	 * transfers without notification). */
	void (*task_free)(struct idm_task *task);

	/* optional */
	int (*alloc_conn_rsrc)(struct idm_conn *conn);
	void (*free_conn_rsrc)(struct idm_conn *conn);
	/* idm_prov_conn_params() already holds the new values */
	int (*notice_key_values)(struct idm_conn *conn);
	/* free the connection's private state; called after conn_terminate */
	void (*conn_free)(struct idm_conn *conn);
	/* a buffer the provider registered (idm_prov_buf_set_reg) is being
	 * destroyed. Since ABI 4 `prov` is the domain's own instance of the
	 * provider, which has no context (idm_prov_ctx() and idm_prov_priv()
	 * are NULL): use idm_prov_buf_reg() and idm_prov_dom_priv() only.
	 * Setting it also says the provider's registrations are valid in
	 * the buffer's domain only (the core refuses a buffer of another
	 * domain on its connections). */
	void (*buf_release)(struct idm_prov *prov, struct idm_buf *buf);
	/* "auto" selection: can this provider reach sa? 0 yes, <0 no */
	int (*conn_is_capable)(struct idm_prov *prov,
			       const struct sockaddr *sa, socklen_t salen);

	/* ---- since libidm 1.2: optional, and read only when `size`
	 * reaches them (a provider built against 1.1 headers has a shorter
	 * table and still loads; see IDM_PROV_OPS_HAS). ---- */

	/* idm_conn_adopt_fd(): take over a connected stream socket the
	 * caller set up (the core checked it is one) for conn, which is in
	 * the login phase with its role set; set the private state with
	 * idm_prov_conn_set_priv() and the names, start receiving. On
	 * success the provider owns fd (closes it at conn_terminate); on
	 * failure fd is left open and unchanged. Absent: -EOPNOTSUPP (an
	 * RDMA CM id cannot be built from a socket). */
	int (*adopt)(struct idm_conn *conn, int fd);
	/* idm_portal_create_fd(): serve a listening stream socket the caller
	 * bound (checked by the core) as listen() would; ownership as for
	 * adopt. */
	int (*listen_fd)(struct idm_prov_listener *l, int fd);
	/* idm_conn_get_stats(), under the context's lock: set the gauges of
	 * st (sendq_entries, sendq_bytes) from the provider's queues, so
	 * that the send path need not keep them. Optional, since 1.2. */
	void (*conn_stats)(struct idm_conn *conn, struct idm_prov_stats *st);
	/* idm_conn_move(): the connection now belongs to
	 * idm_prov_conn_ctx(conn) (its provider is that context's instance
	 * of this provider); move every watch and queued deferred item of it
	 * (the connection's and its tasks') from `src` there: add the new
	 * ones first, so that a failure leaves everything on src. Both
	 * contexts' locks are held and no callback of conn runs. Setting it
	 * also says buffers of any context may be used on the connection,
	 * unless the provider registers memory (has buf_release): then only
	 * buffers of the connection's domain, and the core moves it only to
	 * a context of the same domain (-EXDEV). A refusal returns a
	 * negative errno with nothing moved, and is logged by the provider.
	 * Optional, since 1.2; absent: idm_conn_move() answers -EOPNOTSUPP. */
	int (*conn_move)(struct idm_conn *conn, struct idm_ctx *src);

	/* ---- since libidm 1.2: what the provider says about itself, so
	 * that the core, the programs and the tests need no list of
	 * providers. Read only when `size` reaches them (0 / NULL below
	 * that). ---- */

	/* The URL schemes it serves, NULL-terminated: {"iscsi", NULL} for
	 * TCP, {"iser", NULL} for iSER. idm_provider_for_scheme() answers
	 * with the loaded provider that lists a scheme (a scheme should be
	 * served by one provider; the first found in the search wins).
	 * NULL: none. */
	const char *const *url_schemes;
	/* Its place in the "auto" order of idm_conn_connect(): the loaded
	 * providers with IDM_CAP_INITIATOR and a nonzero auto_order are
	 * tried from the highest down (equal ones by name), the next one
	 * when conn_is_capable says no or the connection fails. 0: never
	 * tried by "auto", only when named. The in-tree providers use
	 * IDM_PROV_AUTO_RDMA and IDM_PROV_AUTO_TCP (RDMA first, TCP the
	 * fallback). */
	uint32_t auto_order;

	/* ---- since ABI 4 (libidm 1.3): domains (idm_domain_create).
	 * Optional, read only when `size` reaches them. ---- */

	/* The state this provider's instances on every context of one
	 * domain share: what memory registration depends on (iSER: devices
	 * and their protection domains). dom_open runs once per domain, for
	 * the first context of it that loads the provider (after init, with
	 * that context's instance); *priv is what idm_prov_dom_priv()
	 * returns on every instance in the domain. dom_close runs when the
	 * domain goes, after all its contexts and buffers: every connection
	 * and registration is gone by then. Threads of several contexts may
	 * use the state at once: guard it with idm_prov_dom_lock(). */
	int (*dom_open)(struct idm_prov *prov, void **priv);
	void (*dom_close)(void *priv);
};

/* auto_order of the in-tree providers, for a new one to place itself */
#define IDM_PROV_AUTO_RDMA 200u /* iSER: zero copy where a device reaches */
#define IDM_PROV_AUTO_TCP 100u  /* TCP: reaches any IP address */

/* The part of the table every provider of this IDM_PROV_ABI has (the
 * libidm 1.1 table); the core refuses a smaller one. */
#define IDM_PROV_OPS_MIN_SIZE offsetof(struct idm_prov_ops, adopt)
/* Does the table reach op (an optional op added after 1.1) and set it? */
#define IDM_PROV_OPS_HAS(ops, op)                                              \
	((ops)->size >= offsetof(struct idm_prov_ops, op) + sizeof((ops)->op) && \
	 (ops)->op != NULL)

/* The one symbol a provider exports:
 *     IDM_PROV_EXPORT const struct idm_prov_ops *IDM_PROV_ENTRY(void);
 */
typedef const struct idm_prov_ops *(*idm_prov_entry_fn)(void);

/* ------------------------------------------------------------------ */
/* Provider                                                            */
/* ------------------------------------------------------------------ */

/* The provider's global state, set by init() and freed by fini(). */
IDM_PROV_API void *idm_prov_priv(const struct idm_prov *prov);
IDM_PROV_API void idm_prov_set_priv(struct idm_prov *prov, void *priv);
IDM_PROV_API struct idm_ctx *idm_prov_ctx(const struct idm_prov *prov);
/* The flags the context was created with (idm_ctx_attr.flags: IDM_CTX_*),
 * such as IDM_CTX_SHARED_RECV; fixed for the context's life. */
IDM_PROV_API uint32_t idm_prov_ctx_flags(const struct idm_ctx *ctx);
/* The domain's shared state (ops->dom_open), NULL without one; and the
 * domain's lock, to take around changes to it. The lock nests inside
 * the context's (it may be taken from an op or a progress callback) and
 * is held by the core while it calls buf_release. */
IDM_PROV_API void *idm_prov_dom_priv(const struct idm_prov *prov);
IDM_PROV_API void idm_prov_dom_lock(const struct idm_prov *prov);
IDM_PROV_API void idm_prov_dom_unlock(const struct idm_prov *prov);
/* From init(): why the provider is unusable ("no RDMA device"), shown by
 * idm_get_provider_status() and idm_last_error(). */
IDM_PROV_API void idm_prov_set_why(struct idm_prov *prov, const char *fmt, ...)
	IDM_PROV_PRINTF(2, 3);

/* ------------------------------------------------------------------ */
/* Listener                                                            */
/* ------------------------------------------------------------------ */

IDM_PROV_API void *idm_prov_listener_priv(const struct idm_prov_listener *l);
IDM_PROV_API void idm_prov_listener_set_priv(struct idm_prov_listener *l, void *priv);
IDM_PROV_API struct idm_ctx *idm_prov_listener_ctx(const struct idm_prov_listener *l);
IDM_PROV_API struct idm_prov *idm_prov_listener_provider(const struct idm_prov_listener *l);

/* ------------------------------------------------------------------ */
/* Connection                                                          */
/* ------------------------------------------------------------------ */

/* The provider's connection state (set in connect() or passed to
 * idm_prov_conn_accepted(); freed in conn_free). */
IDM_PROV_API void *idm_prov_conn_priv(const struct idm_conn *conn);
IDM_PROV_API void idm_prov_conn_set_priv(struct idm_conn *conn, void *priv);
IDM_PROV_API struct idm_ctx *idm_prov_conn_ctx(const struct idm_conn *conn);
IDM_PROV_API struct idm_prov *idm_prov_conn_provider(const struct idm_conn *conn);
IDM_PROV_API enum idm_conn_phase idm_prov_conn_phase(const struct idm_conn *conn);
/* The negotiated values; stable for the connection's life (the pointer,
 * not the values: notice_key_values changes them), so a provider may
 * cache the pointer. Role and peer name: idm_conn_role(),
 * idm_conn_peer_name(). */
IDM_PROV_API const struct idm_conn_params *idm_prov_conn_params(const struct idm_conn *conn);
/* idm_conn_set_cmd_window(): commands the caller admits at once, 0 unknown. */
IDM_PROV_API uint32_t idm_prov_conn_cmd_window(const struct idm_conn *conn);
/* idm_conn_set_send_limits(): the bound of the connection's send queue,
 * defaults filled in. Like idm_prov_conn_params(), the pointer is stable
 * for the connection's life and may be cached; the values change when
 * the caller sets new ones (any time), so read them at each check. */
struct idm_prov_send_limits {
	uint32_t max_entries; /* queued units */
	uint32_t max_bytes;   /* bytes copied and held for them */
};
IDM_PROV_API const struct idm_prov_send_limits *
idm_prov_conn_send_limits(const struct idm_conn *conn);

/* The marks every provider applies to its send queue (`entries` units
 * holding `bytes` copied bytes), so both transports behave alike:
 * input stops above half of either limit and resumes at a quarter of
 * both (the gap keeps a queue near the mark from toggling the input on
 * every PDU). */
static inline bool idm_prov_sq_stop_input(const struct idm_prov_send_limits *l,
					  uint32_t entries, uint64_t bytes)
{
	return entries > l->max_entries / 2 || bytes > l->max_bytes / 2;
}

static inline bool idm_prov_sq_resume_input(const struct idm_prov_send_limits *l,
					    uint32_t entries, uint64_t bytes)
{
	return entries <= l->max_entries / 4 && bytes <= l->max_bytes / 4;
}

/* May Send_Control queue a PDU with this opcode, adding `need` bytes?
 * No (-EAGAIN for the caller) only when the queue is full and not empty
 * (one PDU larger than the byte limit still goes, alone), and never for
 * a SCSI Command, SCSI Response or Task Management Function Response:
 * those belong to tasks, whose number the command window bounds, and
 * refusing them would fail a task midway. While input is stopped (above
 * half) no new request arrives, so with the default limits the other
 * half is room for the answers to what already arrived. */
static inline bool idm_prov_sq_admit(const struct idm_prov_send_limits *l,
				     uint32_t entries, uint64_t bytes,
				     uint8_t opcode, uint64_t need)
{
	if (opcode == IDM_ISCSI_OP_SCSI_CMD || opcode == IDM_ISCSI_OP_SCSI_RSP ||
	    opcode == IDM_ISCSI_OP_TASK_MGMT_RSP || entries == 0)
		return true;
	return entries < l->max_entries && bytes + need <= l->max_bytes;
}

/* The limit on data segments this side may send / must accept. */
IDM_PROV_API uint32_t idm_prov_send_dsl(const struct idm_conn *conn);
IDM_PROV_API uint32_t idm_prov_recv_dsl(const struct idm_conn *conn);

/* The connection's counters a provider keeps (idm_conn_get_stats()).
 * The core owns them; fetch the pointer once, at connect or accept, and
 * update the fields from progress context. The core adds what it counts
 * itself (tasks, transfers, Send_Control, Control_Notify). */
struct idm_prov_stats {
	uint64_t pdus_tx, pdus_rx, bytes_tx, bytes_rx;
	uint64_t data_in_pdus, data_out_pdus, r2t_pdus;
	uint64_t header_digest_errors, data_digest_errors;
	uint64_t rdma_writes, rdma_reads, send_invalidates, recv_queue_empty;
	uint32_t sendq_entries;  /* gauges: what is queued, not yet sent */
	uint64_t sendq_bytes;
	/* Since 1.2 (grows at its end: the core owns the block, a provider
	 * built before fills less of it): payload bytes the provider copied
	 * in user space, and how many copies (idm_prov_stats_copy). */
	uint64_t payload_copies, payload_copy_bytes;
	/* Since 1.3: PDUs for a task this side released, dropped without
	 * failing the connection (idm_conn_stats.late_pdus_dropped). */
	uint64_t late_pdus_dropped;
	/* Since 1.3: a registration cache of caller memory (iSER: the
	 * device's, shared by its connections; see idm_conn_stats) */
	uint64_t mr_cache_hits, mr_cache_misses, mr_cache_evictions;
	uint64_t mr_cache_invalidations, mr_cache_uncached;
	uint64_t mr_cache_pinned_bytes;
};
IDM_PROV_API struct idm_prov_stats *idm_prov_conn_stats(struct idm_conn *conn);

/* Count one user-space copy of `bytes` bytes of SCSI payload (data of a
 * Data-In/Data-Out or immediate data; not headers, not control PDU
 * text): every memcpy of payload is counted, so zero copies can be
 * checked rather than assumed. A copy of 0 bytes is none. */
static inline void idm_prov_stats_copy(struct idm_prov_stats *st, uint64_t bytes)
{
	if (bytes) {
		st->payload_copies++;
		st->payload_copy_bytes += bytes;
	}
}

/* Count one PDU of `bytes` bytes on the wire, sent (tx) or received. */
static inline void idm_prov_stats_pdu(struct idm_prov_stats *st, int tx,
				      const uint8_t *bhs, uint64_t bytes)
{
	switch (idm_iscsi_bhs_opcode(bhs)) {
	case IDM_ISCSI_OP_DATA_IN:
		st->data_in_pdus++;
		break;
	case IDM_ISCSI_OP_DATA_OUT:
		st->data_out_pdus++;
		break;
	case IDM_ISCSI_OP_R2T:
		st->r2t_pdus++;
		break;
	default:
		break;
	}
	if (tx) {
		st->pdus_tx++;
		st->bytes_tx += bytes;
	} else {
		st->pdus_rx++;
		st->bytes_rx += bytes;
	}
}

/* Call fn for every active task of the connection, in no particular
 * order. fn may free the task it is given (not another one). A non-zero
 * return from fn stops the walk and is returned. */
typedef int (*idm_prov_task_fn)(struct idm_task *task, void *arg);
IDM_PROV_API int idm_prov_conn_foreach_task(struct idm_conn *conn,
					    idm_prov_task_fn fn, void *arg);

/* Target: a listener accepted a transport connection. The core creates the
 * idm_conn with priv as its connection state and the names from the
 * addresses, asks the portal's accept callback, and returns 0 with *out set
 * or a negative errno (the connection was refused: the provider frees priv
 * and closes its transport). Call from progress context (a watch
 * callback). */
IDM_PROV_API int idm_prov_conn_accepted(struct idm_prov_listener *l, void *priv,
					const struct sockaddr *local,
					const struct sockaddr *peer,
					struct idm_conn **out);
/* Set the "ip:port" names (initiator: once connected). */
IDM_PROV_API void idm_prov_conn_set_names(struct idm_conn *conn,
					  const struct sockaddr *local,
					  const struct sockaddr *peer);

/* Initiator: connect finished (0) or failed (<0), at most once per
 * connect() that returned 0. Any thread (takes the context lock); the
 * callback runs deferred. A connect() that fails at once returns the
 * errno instead: the core cancels a report made before such a return. */
IDM_PROV_API void idm_prov_conn_connected(struct idm_conn *conn, int status);

/* The notifications. Call only from progress context (a watch or defer
 * callback), never from inside a provider op invoked by the caller. */
IDM_PROV_API void idm_prov_control_notify(struct idm_conn *conn, struct idm_pdu *pdu);
IDM_PROV_API void idm_prov_data_completion(struct idm_task *task,
					   enum idm_data_dir dir, uint32_t offset,
					   uint32_t length, uint32_t sn, int status);
IDM_PROV_API void idm_prov_data_ack(struct idm_task *task, uint32_t datasn);

/* Record why the connection is failing (first message wins). */
IDM_PROV_API void idm_prov_conn_set_error(struct idm_conn *conn, const char *fmt, ...)
	IDM_PROV_PRINTF(2, 3);
/* The provider has released every task and buffer of the connection after a
 * failure: mark it failed and queue Connection_Terminate_Notify (raised
 * once, from the next progress pass). */
IDM_PROV_API void idm_prov_conn_failed(struct idm_conn *conn, int reason);

/* ------------------------------------------------------------------ */
/* Task                                                                */
/* ------------------------------------------------------------------ */

/* Target providers: create the task of a received SCSI Command. -EEXIST if
 * the ITT is active, -EINVAL for the reserved ITT 0xffffffff. */
IDM_PROV_API int idm_prov_task_new(struct idm_conn *conn, uint32_t itt,
				   struct idm_task **out);
/* The active task of that ITT, or NULL. */
IDM_PROV_API struct idm_task *idm_prov_task_find(struct idm_conn *conn, uint32_t itt);

/* The provider's area of ops->task_priv_size bytes (16-byte aligned,
 * zeroed when the task is created), and back from it to the task. */
IDM_PROV_API void *idm_prov_task_priv(struct idm_task *task);
IDM_PROV_API struct idm_task *idm_prov_task_from_priv(void *priv);
/* False once the caller freed the task (its handle may still be around). */
IDM_PROV_API bool idm_prov_task_active(const struct idm_task *task);

/* A byte range of a buffer: `length` bytes at `addr`, which is byte
 * `buf_off` of `buf`. addr is NULL when the range spans segments of a
 * scatter-gather buffer (idm_prov_buf_iov() then). */
struct idm_prov_range {
	struct idm_buf *buf;
	size_t buf_off;
	uint32_t length;
	uint8_t *addr;
};
/* Initiator: the task's range set by idm_task_set_data() for dir
 * (IDM_DATA_IN: where Data-In goes, IDM_DATA_OUT: what Data-Out sends).
 * Returns 0, or -ENOENT (r zeroed) when the caller set none. */
IDM_PROV_API int idm_prov_task_data(const struct idm_task *task, enum idm_data_dir dir,
				    struct idm_prov_range *r);
/* Bytes placed into the caller's memory for the task (Data-In on the
 * initiator, Data-Out and immediate data on the target); the caller reads
 * the sum with idm_task_data_received(). */
IDM_PROV_API void idm_prov_task_add_received(struct idm_task *task, uint32_t bytes);

/* ------------------------------------------------------------------ */
/* Buffer                                                              */
/* ------------------------------------------------------------------ */

/* The provider's registration of a buffer (e.g. an ibv_mr), NULL if none;
 * ops->buf_release is called when a buffer with one is destroyed. Address
 * and length: idm_buf_addr(), idm_buf_len(). One slot per provider and
 * domain: this provider's instances on every context of the buffer's
 * domain see the same registration, so threads of two contexts may meet
 * there; set it under idm_prov_dom_lock() (reading needs no lock). */
IDM_PROV_API void *idm_prov_buf_reg(const struct idm_buf *buf, const struct idm_prov *prov);
IDM_PROV_API void idm_prov_buf_set_reg(struct idm_buf *buf, const struct idm_prov *prov,
				       void *reg);
/* Scatter-gather (IDM_CAP_SCATTER_GATHER): the memory of bytes [off,
 * off+len) of buf as up to max iovecs. Returns how many it filled (0 for
 * len 0) and sets *covered (may be NULL) to the bytes they hold: less
 * than len when max ran out, then call again from off + *covered.
 * -EINVAL when the range is outside the buffer. O(log segments), no
 * allocation; one iovec for a buffer of one segment. */
IDM_PROV_API int idm_prov_buf_iov(const struct idm_buf *buf, size_t off, size_t len,
				  struct iovec *iov, int max, size_t *covered);
/* Copy len bytes from src into bytes [off, off+len) of buf, or out of
 * them into dst, whatever its segments: for the few copies a provider
 * makes itself (staged unsolicited data, a bounce buffer). The range must
 * lie inside the buffer. */
IDM_PROV_API void idm_prov_buf_copy_in(struct idm_buf *buf, size_t off, const void *src,
				       size_t len);
IDM_PROV_API void idm_prov_buf_copy_out(void *dst, const struct idm_buf *buf, size_t off,
					size_t len);

/* ------------------------------------------------------------------ */
/* The shared datamover layer: what every transport needs              */
/* ------------------------------------------------------------------ */

/* The opcode table (RFC 7143 section 11). May a PDU with this opcode be
 * sent by `sender` while the connection is in `phase`? The core checks
 * what the caller sends with it; a provider checks what it receives with
 * sender = the peer's role, IDM_PROV_OP_DATA and the phase as its
 * transport sees it (an initiator is in full feature phase from the final
 * Login Response on). Returns 0; -EINVAL when `sender` never sends that
 * opcode (or it is a data-movement PDU - Data-In, Data-Out, R2T - and
 * flags lack IDM_PROV_OP_DATA); -EPROTO for a Login PDU outside the login
 * phase; -ENOTCONN for a full-feature PDU before full feature phase or in
 * any other phase. A target's Reject is valid in both phases. Any
 * context. */
#define IDM_PROV_OP_DATA (1u << 0)
IDM_PROV_API int idm_prov_opcode_check(enum idm_role sender, uint8_t opcode,
				       enum idm_conn_phase phase, unsigned flags);

/* The in-flight record of a task's data transfers (like illumos
 * idm_buf_bind_in/out): the core records each Put_Data (IDM_DATA_IN) and
 * Get_Data (IDM_DATA_OUT) the caller issues before calling the provider's
 * op, and forgets it when the provider completes it with
 * idm_prov_data_completion() (same dir, offset and length), when the op
 * fails, or when the task is freed. A provider reads it instead of
 * keeping its own list: where bytes of the command's data go or come
 * from, and what is outstanding. */
#define IDM_PROV_XFER_PRIV 96 /* bytes of struct idm_prov_xfer's priv */
struct idm_prov_xfer {
	enum idm_data_dir dir;
	uint32_t offset;  /* command data offset of the first byte */
	uint32_t length;
	struct idm_buf *buf;
	size_t buf_off;   /* byte `offset` is byte buf_off of buf */
	uint8_t *addr;    /* ... at this address; NULL when the range spans
			   * segments (idm_prov_buf_iov) */
	struct idm_task *task;
	/* The provider's own state of this transfer (bytes placed, R2TSN,
	 * a deferred completion, ...), zeroed when recorded and gone with
	 * the record: a provider keeps no range table of its own. Only
	 * these bytes are the provider's to write. */
	uint64_t priv[IDM_PROV_XFER_PRIV / sizeof(uint64_t)];
};
/* The provider's area of a record, and back from it to the record
 * (e.g. from a struct idm_prov_defer kept there). Inline: the hot path
 * reaches it without a call into libidm. */
static inline void *idm_prov_xfer_priv(const struct idm_prov_xfer *x)
{
	return (void *)x->priv;
}
static inline struct idm_prov_xfer *idm_prov_xfer_from_priv(void *priv)
{
	return IDM_PROV_CONTAINER_OF(priv, struct idm_prov_xfer, priv);
}
/* Copy n bytes of command data, from data offset `off` on, into the
 * record's range: at its address, or segment by segment. */
static inline void idm_prov_xfer_copy_in(const struct idm_prov_xfer *x, uint32_t off,
					 const void *src, uint32_t n)
{
	size_t d = off - x->offset;

	if (x->addr)
		memcpy(x->addr + d, src, n);
	else
		idm_prov_buf_copy_in(x->buf, x->buf_off + d, src, n);
}
/* Inside put_data()/get_data(): the record the core made for this very
 * call (the task's newest), so the op can fill in its priv area. */
IDM_PROV_API struct idm_prov_xfer *idm_prov_task_xfer_newest(struct idm_task *task);
/* The task's records one by one, oldest first: the first with x NULL,
 * then the one after x, NULL at the end. Completing x (which recycles
 * it) ends the walk: start again from NULL. */
IDM_PROV_API const struct idm_prov_xfer *idm_prov_task_xfer_next(struct idm_task *task,
								 const struct idm_prov_xfer *x);
/* The recorded transfer of dir holding all of [offset, offset+length), or
 * NULL (e.g. unsolicited data no Get_Data asked for yet: stage it). */
IDM_PROV_API const struct idm_prov_xfer *idm_prov_task_xfer_cover(struct idm_task *task,
								  enum idm_data_dir dir,
								  uint32_t offset,
								  uint32_t length);
/* Call fn for every recorded transfer of the task, oldest first; a
 * non-zero return stops the walk and is returned. fn must not issue or
 * complete transfers of the task. */
typedef int (*idm_prov_xfer_fn)(struct idm_task *task, const struct idm_prov_xfer *x,
				void *arg);
IDM_PROV_API int idm_prov_task_foreach_xfer(struct idm_task *task, idm_prov_xfer_fn fn,
					    void *arg);
/* Release every task of the connection (its transport closed or failed):
 * the provider's own task_free op runs for each active task, then the
 * core forgets their transfers. The tasks stay valid for the caller until
 * it frees them; no notification follows. Call it from the provider's
 * close path (conn_terminate, or before idm_prov_conn_failed). */
IDM_PROV_API void idm_prov_conn_release_tasks(struct idm_conn *conn);

/* Unsolicited and immediate data (RFC 7143 13.10-13.14: ImmediateData,
 * InitialR2T, FirstBurstLength). Any context; no I/O. */

/* Initiator, write command of out_len bytes (EDTL edtl): what goes
 * without an R2T. */
struct idm_prov_unsol_plan {
	uint32_t imm;       /* bytes in the command PDU's data segment */
	uint32_t unsol_end; /* immediate + unsolicited Data-Out: [0, end) */
	bool cmd_final;     /* F bit of the command: no Data-Out follows */
};
IDM_PROV_API void idm_prov_unsol_plan(const struct idm_conn_params *p,
				      uint32_t send_dsl, uint32_t edtl,
				      uint32_t out_len,
				      struct idm_prov_unsol_plan *plan);

/* Target: the unsolicited data of one command, embedded in the provider's
 * task area. Fill it with idm_prov_unsol_cmd() when the command arrives;
 * release it with idm_prov_unsol_free() when the task goes. */
struct idm_prov_unsol {
	uint32_t imm_len;   /* immediate data in the command PDU */
	uint32_t end;       /* unsolicited data covers [0, end) */
	uint32_t rcvd;      /* every byte below arrived; next one expected */
	uint32_t datasn;    /* DataSN of the next unsolicited Data-Out */
	const uint8_t *imm; /* set by the provider while the command's
			       notify runs: the immediate data */
	uint32_t imm_taken; /* bytes of it idm_prov_unsol_take() copied */
	uint8_t *stage;     /* slow path: bytes no Get_Data took yet */
	uint32_t st_lo;     /* stage holds [st_lo, rcvd) */
};
/* A SCSI Command arrived (`write`: W bit, imm_len bytes of immediate
 * data, cmd_final: F bit): zero u and set what to expect. -EPROTO with
 * the broken rule in *why (immediate data without ImmediateData=Yes or
 * beyond FirstBurstLength or EDTL, F=0 with InitialR2T=Yes, data on a
 * non-write...). */
IDM_PROV_API int idm_prov_unsol_cmd(struct idm_prov_unsol *u,
				    const struct idm_conn_params *p, bool write,
				    uint32_t edtl, uint32_t imm_len, bool cmd_final,
				    const char **why);
/* An unsolicited Data-Out (TTT 0xffffffff) header: in order, below end,
 * the DataSN expected? -EPROTO with the reason written to why. */
IDM_PROV_API int idm_prov_unsol_dataout(const struct idm_prov_unsol *u,
					uint32_t offset, uint32_t length,
					uint32_t datasn, char *why, size_t whylen);
/* Its `length` bytes were placed or staged: account them. -EPROTO when
 * its F bit ends the unsolicited data early. */
IDM_PROV_API int idm_prov_unsol_arrived(struct idm_prov_unsol *u, uint32_t length,
					bool fbit, char *why, size_t whylen);
/* Where unsolicited byte `offset` goes when no Get_Data range covers it:
 * the stage (allocated on first use, at most `end` bytes). NULL: no
 * memory. */
IDM_PROV_API uint8_t *idm_prov_unsol_stage(struct idm_prov_unsol *u, uint32_t offset);
/* A Get_Data for [offset, offset+length) into dst (the address of byte
 * `offset`): copy what already arrived of it (immediate data during the
 * command's notify, staged bytes). Returns the bytes copied. */
IDM_PROV_API uint32_t idm_prov_unsol_take(struct idm_prov_unsol *u, uint32_t offset,
					  uint32_t length, uint8_t *dst);
/* The same into bytes buf_off... of buf, whatever its segments. */
IDM_PROV_API uint32_t idm_prov_unsol_take_buf(struct idm_prov_unsol *u, uint32_t offset,
					      uint32_t length, struct idm_buf *buf,
					      size_t buf_off);
/* The command's notify returned: immediate data no Get_Data took is
 * staged (u->imm is cleared). -ENOMEM if it cannot be. */
IDM_PROV_API int idm_prov_unsol_cmd_done(struct idm_prov_unsol *u);
/* The bytes idm_prov_unsol_cmd_done() is about to copy to the stage (0:
 * none), for idm_prov_stats_copy(). */
static inline uint32_t idm_prov_unsol_imm_left(const struct idm_prov_unsol *u)
{
	return u->imm && u->imm_taken < u->imm_len ? u->imm_len : 0;
}
IDM_PROV_API void idm_prov_unsol_free(struct idm_prov_unsol *u);

#ifdef __cplusplus
}
#endif

#endif
