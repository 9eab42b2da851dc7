/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libidm: the iSCSI Datamover Interface of RFC 5047 as a C library.
 *
 * The caller is an iSCSI stack (initiator or target). It keeps all session
 * logic: login negotiation, CmdSN/StatSN, SCSI. libidm moves PDUs and data
 * through a transport provider ("tcp", "iser") loaded at run time.
 *
 * Conventions used throughout:
 *  - Every function that can fail returns 0 (or a count) on success and a
 *    negative errno value on failure; idm_strerror() names it.
 *  - A call that fails raises no callback for what it was asked to do.
 *  - Callbacks never run inside the call that caused them: they run from
 *    idm_ctx_progress() (or the optional progress thread).
 *  - Objects are opaque and come in create/destroy pairs.
 *  - Every public struct that may grow starts with a `size` member that the
 *    caller sets to sizeof(the struct it was compiled with).
 *
 * See doc/api.md for the full contract of each primitive.
 */
#ifndef LIBIDM_IDM_H
#define LIBIDM_IDM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the symbols of the public ABI (the library builds with
 * -fvisibility=hidden and a version script). */
#if defined(__GNUC__)
#define IDM_API __attribute__((visibility("default")))
#else
#define IDM_API
#endif

/* Library version (of the headers the caller was compiled with). */
#define IDM_VERSION_MAJOR 1
#define IDM_VERSION_MINOR 3
#define IDM_VERSION_PATCH 0

/** Version of the library actually loaded, as "1.3.0". */
IDM_API const char *idm_version(void);

/* ------------------------------------------------------------------ */
/* Opaque objects                                                      */
/* ------------------------------------------------------------------ */

typedef struct idm_domain idm_domain; /* memory registration scope    */
typedef struct idm_ctx idm_ctx;       /* event loop, provider registry  */
typedef struct idm_portal idm_portal; /* listening portal (target)      */
typedef struct idm_conn idm_conn;     /* one iSCSI connection           */
typedef struct idm_task idm_task;     /* one ITT on a connection        */
typedef struct idm_buf idm_buf;       /* a data buffer libidm may touch */
typedef struct idm_pdu idm_pdu;       /* a received control-type PDU    */

/* ------------------------------------------------------------------ */
/* Errors and logging                                                  */
/* ------------------------------------------------------------------ */

/**
 * Describe a (negative or positive) errno value returned by libidm.
 * Never returns NULL; the string is static and thread-safe.
 */
IDM_API const char *idm_strerror(int err);

enum idm_log_level {
	IDM_LOG_ERROR = 0,
	IDM_LOG_WARN = 1,
	IDM_LOG_INFO = 2,
	IDM_LOG_DEBUG = 3,
};

/** Log sink: `msg` is a single line without trailing newline. */
typedef void (*idm_log_fn)(enum idm_log_level level, const char *msg, void *arg);

/* ------------------------------------------------------------------ */
/* Domain (since 1.3)                                                  */
/* ------------------------------------------------------------------ */

/*
 * A domain is the scope of memory registration, like a verbs protection
 * domain or a libfabric domain: a buffer created through any context of
 * a domain is registered at most once per device and may be used by any
 * connection on any context of that domain, with any provider. Contexts
 * stay the progress engines: a program with one context per core puts
 * them in one domain and shares its buffers among them. A context
 * created without one has a domain of its own, which is what 1.2 did.
 */
struct idm_domain_attr {
	uint32_t size;  /* sizeof(struct idm_domain_attr) */
	uint32_t flags; /* none yet: 0 */
};

/** Create a domain (`attr` may be NULL). 0, -EINVAL, -ENOMEM. */
IDM_API int idm_domain_create(const struct idm_domain_attr *attr, idm_domain **out);

/**
 * Let go of the caller's reference. The domain lives on while a context
 * or a buffer of it does, and goes with the last of them (releasing
 * every provider's registrations and devices), so contexts, buffers and
 * the domain may be destroyed in any order. NULL is ignored.
 */
IDM_API void idm_domain_destroy(idm_domain *dom);

/** The context's domain: the one it joined, or its own (never NULL for
 * a context). Valid while the context lives. */
IDM_API idm_domain *idm_ctx_get_domain(const idm_ctx *ctx);

/* ------------------------------------------------------------------ */
/* Context                                                             */
/* ------------------------------------------------------------------ */

/* idm_ctx_attr.flags */
#define IDM_CTX_PROGRESS_THREAD (1u << 0) /* start the progress thread now */
/* RDMA providers: the connections of this context share their receive
 * buffers, per device (iSER: a shared receive queue), instead of each
 * posting its own. Far less memory pinned per idle connection; a
 * provider without such queues ignores it (doc/iser.md). The shared
 * buffers take data segments of at most IDM_SHARED_RECV_DSL bytes: with
 * the flag, declare no more than that as this side's receive segment
 * length (iSER: TargetRecvDataSegmentLength for a target,
 * InitiatorRecvDataSegmentLength for an initiator); a connection that
 * negotiated more fails when its data mover is enabled. */
#define IDM_CTX_SHARED_RECV (1u << 1)
#define IDM_SHARED_RECV_DSL 8192u

/* idm_ctx_attr.wakeup_fn: a callback of the context (its lock held, on
 * the thread running the pass), so it may call libidm on this context
 * but not idm_ctx_progress() of it. */
typedef void (*idm_ctx_wakeup_fn)(idm_ctx *ctx, void *arg);

struct idm_ctx_attr {
	uint32_t size;        /* sizeof(struct idm_ctx_attr) */
	uint32_t flags;       /* IDM_CTX_* */
	idm_log_fn log_fn;    /* NULL: log to stderr if IDM_LOG_LEVEL is set */
	void *log_arg;
	int log_level;        /* highest level passed to log_fn; -1: default
	                         (IDM_LOG_LEVEL env var or IDM_LOG_WARN) */
	/* since 1.3 (read when `size` reaches it): the domain the context
	 * joins (idm_domain_create); NULL: a domain of its own */
	idm_domain *domain;
	/* since 1.3: run inside the progress pass that consumes an
	 * idm_ctx_wakeup() (see there); NULL: none */
	idm_ctx_wakeup_fn wakeup_fn;
	void *wakeup_arg;
};

/**
 * Create a context. `attr` may be NULL for defaults.
 * Providers are discovered lazily on first use (see idm_get_providers()).
 */
IDM_API int idm_ctx_create(const struct idm_ctx_attr *attr, idm_ctx **out);

/**
 * Destroy a context. Every portal and connection still open is terminated
 * as by idm_connection_terminate() (no callbacks run) and freed.
 * Must not be called from a callback of this context, nor while the
 * thread is inside its progress. Since 1.3 a callback of another context
 * may destroy it (after running its progress, for instance).
 */
IDM_API void idm_ctx_destroy(idm_ctx *ctx);

/**
 * A file descriptor that becomes readable (POLLIN) whenever
 * idm_ctx_progress() has work to do, including a pending idm_ctx_wakeup().
 * Owned by the context: do not close it.
 */
IDM_API int idm_ctx_get_fd(idm_ctx *ctx);

/**
 * Make progress: wait up to `timeout_ms` (0: don't wait, -1: forever) for
 * events, then handle them and run the callbacks that result.
 * Returns the number of events handled (>= 0; a consumed idm_ctx_wakeup()
 * counts as one, so 0 means the timeout passed with nothing to do) or a
 * negative errno. Not while the progress thread runs (-EBUSY).
 *
 * From a callback: not of the context whose pass runs the callback, nor
 * of any context whose pass this thread is inside (-EDEADLK). Since 1.3
 * a callback of context A may run idm_ctx_progress() of another context
 * B to completion (a synchronous login on B from A's callback). Lock
 * order: B's pass then runs with A's lock held, taking B's. A stays
 * stalled for other threads until it returns, and no thread may ever
 * wait for A while holding B: B's callbacks must not call into A's
 * objects if another thread may progress B meanwhile, and no callback
 * of B may nest A's progress (refused only on the same thread).
 */
IDM_API int idm_ctx_progress(idm_ctx *ctx, int timeout_ms);

/**
 * Wake the context: a blocked idm_ctx_progress() (or the progress thread)
 * returns promptly, or the next one does not sleep, and the fd of
 * idm_ctx_get_fd() is readable until a pass consumes the wakeup. Many
 * wakeups before a pass coalesce into one. The pass that consumes it runs
 * idm_ctx_attr.wakeup_fn, if set, and counts it as one event handled.
 *
 * From any thread, and from a signal handler: it takes no lock,
 * allocates nothing, keeps errno and calls only write(2) (not even that
 * when a wakeup is already pending or nobody can be sleeping). 0, or
 * -EINVAL for NULL. The context must stay alive during the call.
 *
 * For work finishing on other threads (a caller's completion queue):
 * push, then wake; drain after the progress call (or in wakeup_fn). A
 * wakeup raised after the pass consumed the last one makes the next call
 * return, so no push is ever missed:
 *
 *     // any thread                      // the context's owner
 *     push(&q, item);                    for (;;) {
 *     idm_ctx_wakeup(ctx);                   idm_ctx_progress(ctx, -1);
 *                                            while ((it = pop(&q)))
 *                                                finish(it);
 *                                        }
 *
 * A wakeup may be spurious (the fd readable, or a return, with the queue
 * already drained): drain what is there, and nothing if it is empty.
 * Deferring one's own work to the next progress call is the same: queue
 * it, call idm_ctx_wakeup() (from a callback too), and that call returns
 * at once instead of sleeping.
 */
IDM_API int idm_ctx_wakeup(idm_ctx *ctx);

/**
 * Opt-in progress thread for callers without an event loop. While it runs,
 * every libidm call on this context (from any thread) is serialised with
 * the thread by the context lock, and all callbacks run on the thread with
 * that lock held; calling libidm from a callback is allowed.
 */
IDM_API int idm_ctx_start_progress_thread(idm_ctx *ctx);
IDM_API int idm_ctx_stop_progress_thread(idm_ctx *ctx);

/* ------------------------------------------------------------------ */
/* Providers                                                           */
/* ------------------------------------------------------------------ */

/* idm_provider_info.caps */
#define IDM_CAP_INITIATOR (1ull << 0)
#define IDM_CAP_TARGET (1ull << 1)
#define IDM_CAP_DIGESTS (1ull << 2)    /* CRC32C header/data digests */
#define IDM_CAP_RDMA (1ull << 3)       /* data moves by RDMA, zero copy */
#define IDM_CAP_ZERO_COPY_RX (1ull << 4) /* Data-In/Data-Out placed directly */
#define IDM_CAP_DATA_ACK (1ull << 5)   /* A bit / Data_ACK_Notify */
/* moves data to and from buffers of several segments (idm_buf_create_iov);
 * without it such a buffer is refused with -EOPNOTSUPP. iSER: the target
 * takes any range by RDMA (SGE lists); an initiator's command range in
 * one region (segments adjacent in memory) goes by one STag with no copy,
 * and a range across segments that are not adjacent (one STag per
 * direction cannot name them) moves through the connection's registered
 * staging area: Data-Out copied in before the command is sent, Data-In
 * copied out before its SCSI Response is delivered, every byte counted in
 * idm_conn_stats.payload_copy_bytes. The area is bounded
 * (IDM_ISER_STAGING_MB, 4 by default): a command that finds it busy waits
 * in the send backlog, one whose ranges exceed it is refused by
 * idm_send_control with -ENOBUFS, and with IDM_ISER_STAGING_MB=0 such a
 * command is refused with -EOPNOTSUPP (doc/iser.md, "Scattered initiator
 * buffers"). (On paper, not done: on
 * mlx5 adapters, a UMR work request with a KLM list (rdma-core
 * mlx5dv_create_mkey() with an indirect mkey, mlx5dv_wr_mr_list() on an
 * extended QP) builds one key over the segments' MRs, posted on the send
 * queue before the command like a window bind, with no system call and
 * no copy, and invalidated as windows are; the Linux kernel initiator's
 * IB_MR_TYPE_SG_GAPS does the same and is not reachable from user
 * space. Neither soft-RoCE nor plain verbs have it, so it would be a
 * zero-copy path beside the staged one.) */
#define IDM_CAP_SCATTER_GATHER (1ull << 6)

struct idm_provider_info {
	const char *name;        /* "tcp", "iser", ... */
	const char *description;
	const char *path;        /* file it was loaded from */
	uint32_t abi_version;    /* provider ABI it implements */
	uint64_t caps;           /* IDM_CAP_* */
};

/**
 * List the providers that loaded. `*list` stays valid until the context is
 * destroyed. Providers that failed to load are logged and left out (see
 * idm_get_provider_status() for why).
 * Search path: IDM_PROVIDER_PATH (colon-separated; ignored in setuid
 * programs), then the install directory ($libdir/libidm-1). IDM_PROVIDERS
 * (comma-separated names) restricts which are loaded.
 */
IDM_API int idm_get_providers(idm_ctx *ctx, const struct idm_provider_info **list,
			      size_t *count);

/* idm_provider_status.state */
enum idm_provider_state {
	IDM_PROVIDER_LOADED = 0,   /* usable; also in idm_get_providers() */
	IDM_PROVIDER_SKIPPED = 1,  /* refused: see error and reason */
	IDM_PROVIDER_SHADOWED = 2, /* the same name was found earlier in the
				      search path, which wins */
	IDM_PROVIDER_FILTERED = 3, /* left out by IDM_PROVIDERS */
};

/* Since 1.1. One provider file found in the search path. */
struct idm_provider_status {
	uint32_t size;              /* sizeof(struct idm_provider_status), set by
				       the caller */
	enum idm_provider_state state;
	const char *name;           /* from the file name libidm-<name>.so */
	const char *path;
	const char *description;    /* "" unless the module was opened */
	uint32_t abi_version;       /* 0 unless the module was opened */
	uint64_t caps;              /* IDM_CAP_*; 0 unless it was opened */
	int error;                  /* negative errno why it was skipped, or 0 */
	const char *reason;         /* why it was skipped, shadowed or
				       filtered ("no RDMA device"); "" if
				       loaded */
};

/**
 * Since 1.1. Describe the index-th provider file the search found (loading
 * the providers first, as idm_get_providers() does): the ones that loaded
 * and, for those left out, why. Fills at most st->size bytes of *st (the
 * caller sets st->size). Returns 0, or -ENOENT when index is past the last
 * one, so a loop from 0 lists them all, in search order. The strings stay
 * valid until the context is destroyed.
 */
IDM_API int idm_get_provider_status(idm_ctx *ctx, size_t index,
				    struct idm_provider_status *st);

/**
 * Since 1.2. The loaded provider that serves URL scheme `scheme` ("iscsi",
 * "iser"; without "://"), as each provider declares: sets *name to its
 * name (valid until the context is destroyed). Loads the providers first,
 * as idm_get_providers() does. Returns 0; when no loaded provider serves
 * it, the error of a provider that declares it but was left out (as
 * idm_conn_connect() would give for that provider by name: "provider iser
 * not usable here: no RDMA device" in idm_last_error()), else -ENOENT;
 * -EINVAL on a NULL argument (*name is NULL on failure).
 */
IDM_API int idm_provider_for_scheme(idm_ctx *ctx, const char *scheme,
				    const char **name);

/** Since 1.1. The install directory searched after IDM_PROVIDER_PATH. */
IDM_API const char *idm_provider_dir(void);

/**
 * Since 1.2. When this libidm is the copy in the build tree it was built in
 * (and the program is not setuid), that build's provider directories,
 * colon-separated: searched in place of IDM_PROVIDER_PATH when that is
 * unset, so that programs run from the build tree find its providers.
 * NULL for an installed libidm, which never searches a build tree.
 */
IDM_API const char *idm_provider_build_path(void);

/**
 * Since 1.1. More detail on the last call that failed in this thread, when
 * its return value alone says too little: the resolver's message for a
 * host that does not resolve, why a provider asked for by name cannot be
 * used ("provider iser not usable: no RDMA device"). "" if the last such
 * call (idm_conn_connect(), idm_portal_create()) succeeded or had nothing
 * to add. Thread-local; valid until the next libidm call in this thread.
 */
IDM_API const char *idm_last_error(void);

/* ------------------------------------------------------------------ */
/* Connection callbacks (the RFC 5047 notifications)                   */
/* ------------------------------------------------------------------ */

enum idm_data_dir {
	IDM_DATA_IN = 1,  /* target to initiator (Put_Data, Data-In) */
	IDM_DATA_OUT = 2, /* initiator to target (Get_Data, Data-Out) */
};

struct idm_conn_cbs {
	uint32_t size; /* sizeof(struct idm_conn_cbs) */

	/**
	 * Initiator only: the connection idm_conn_connect() started is up
	 * (status 0; login may start) or failed (status < 0; the caller must
	 * still idm_conn_destroy() it).
	 */
	void (*connected)(idm_conn *conn, int status, void *arg);

	/**
	 * Control_Notify: a control-type PDU arrived (any PDU but the Data-In
	 * and Data-Out the provider consumes itself; a Data-In carrying status,
	 * S=1, is delivered here after its data was placed). The PDU and its
	 * data are valid only during the callback. On the target, a SCSI
	 * Command comes with a task (idm_pdu_task()) the caller now owns.
	 */
	void (*control_notify)(idm_conn *conn, idm_pdu *pdu, void *arg);

	/**
	 * Data_Completion_Notify (target): the Put_Data or Get_Data range
	 * [offset, offset+length) finished. status 0: all data sent (Put_Data)
	 * or received and placed (Get_Data); < 0: it failed. `sn` is the last
	 * DataSN sent (Put_Data) or the last R2TSN used (Get_Data). The buffer
	 * range is the caller's again.
	 */
	void (*data_completion_notify)(idm_task *task, enum idm_data_dir dir,
				       uint32_t offset, uint32_t length,
				       uint32_t sn, int status, void *arg);

	/**
	 * Data_ACK_Notify (target, ErrorRecoveryLevel >= 1): the initiator
	 * acknowledged Data-In up to, not including, `datasn`.
	 */
	void (*data_ack_notify)(idm_task *task, uint32_t datasn, void *arg);

	/**
	 * Connection_Terminate_Notify: the connection failed or the peer
	 * closed it (`reason` < 0, see idm_conn_error()). Raised at most once,
	 * after the provider has let go of every buffer and task of the
	 * connection; no callback for the connection follows. The caller then
	 * calls idm_conn_destroy(). Not raised after idm_connection_terminate().
	 */
	void (*connection_terminate_notify)(idm_conn *conn, int reason, void *arg);
};

/* ------------------------------------------------------------------ */
/* Target: listening portals                                           */
/* ------------------------------------------------------------------ */

/**
 * A new connection arrived on `portal`. Set its callbacks with
 * idm_conn_set_cbs() before returning; return 0 to keep it or a negative
 * errno to refuse it (libidm then closes and frees it).
 */
typedef int (*idm_accept_fn)(idm_portal *portal, idm_conn *conn, void *arg);

struct idm_portal_attr {
	uint32_t size;          /* sizeof(struct idm_portal_attr) */
	const char *providers;  /* "tcp", "iser", "tcp,iser"; NULL: "tcp" */
	idm_accept_fn accept;   /* required */
	void *arg;
	int backlog;            /* 0: 128 */
	/* since 1.2 (read only when `size` reaches it): IDM_PORTAL_* */
	uint32_t flags;
};

/**
 * Several contexts may listen on the same address and port, one portal
 * each (one context per core): the kernel spreads new connections over
 * them (SO_REUSEPORT; every socket must belong to the same user). Set it
 * on every portal sharing the port. TCP only: an RDMA CM id cannot share
 * a port, so a portal naming "iser" fails with -EOPNOTSUPP (serve iSER
 * from one context).
 */
#define IDM_PORTAL_REUSEPORT (1u << 0)

/**
 * Since 1.2. On an IPv6 address, listen for IPv6 only (IPV6_V6ONLY): a
 * portal on "::" then leaves IPv4 to a second portal on "0.0.0.0" on the
 * same port, as a stack that listens on both wildcards with one socket
 * each expects, and IPv4 peers never appear as ::ffff:a.b.c.d. Without
 * it the system default applies (on Linux dual-stack). No effect on an
 * IPv4 address. The core binds the socket itself, so a provider that
 * cannot take a bound socket (iSER) fails with -EOPNOTSUPP.
 */
#define IDM_PORTAL_V6ONLY (1u << 1)

/**
 * Listen on host:port ("0.0.0.0", "::", "127.0.0.1"; port "3260").
 * With several providers each listens on the same address and port (TCP
 * and iSER use different port spaces). port "0" picks a free port, see
 * idm_portal_port().
 */
IDM_API int idm_portal_create(idm_ctx *ctx, const char *host, const char *port,
			      const struct idm_portal_attr *attr, idm_portal **out);
IDM_API int idm_portal_port(idm_portal *portal);
/** Stop listening. Connections already accepted are not affected. */
IDM_API void idm_portal_destroy(idm_portal *portal);

/* ------------------------------------------------------------------ */
/* Connections                                                         */
/* ------------------------------------------------------------------ */

enum idm_role {
	IDM_ROLE_INITIATOR = 1,
	IDM_ROLE_TARGET = 2,
};

struct idm_conn_attr {
	uint32_t size;                  /* sizeof(struct idm_conn_attr) */
	const char *provider;           /* "tcp", "iser", NULL or "auto" */
	const struct idm_conn_cbs *cbs; /* copied */
	void *arg;                      /* passed to every callback */
	int connect_timeout_ms;         /* 0: 10000 */
};

/**
 * Initiator: start connecting to host:port. `cbs->connected` reports the
 * outcome. With provider "auto" iSER is tried first and TCP used when no
 * RDMA path exists or the target refuses iSER.
 */
IDM_API int idm_conn_connect(idm_ctx *ctx, const char *host, const char *port,
			     const struct idm_conn_attr *attr, idm_conn **out);

/** Target: set callbacks of an accepted connection (from idm_accept_fn). */
IDM_API int idm_conn_set_cbs(idm_conn *conn, const struct idm_conn_cbs *cbs,
			     void *arg);

/**
 * Free a connection handle. Terminates it first if it is still up (as
 * idm_connection_terminate()). Since 1.2 it may be called from any
 * callback, this connection's own included: the connection is terminated
 * at once (no callback of it follows) and freed by the library once the
 * callback and the work that raised it have returned. Either way the
 * handle must not be used again after the call.
 */
IDM_API void idm_conn_destroy(idm_conn *conn);

IDM_API enum idm_role idm_conn_role(const idm_conn *conn);
IDM_API const char *idm_conn_provider(const idm_conn *conn);
IDM_API void *idm_conn_get_arg(const idm_conn *conn);
/** Human-readable reason of the last failure ("" if none). */
IDM_API const char *idm_conn_error(const idm_conn *conn);
/** "ip:port" of the peer / of the local end. */
IDM_API const char *idm_conn_peer_name(const idm_conn *conn);
IDM_API const char *idm_conn_local_name(const idm_conn *conn);

/** Since 1.2. Which end of a connection idm_conn_sockaddr() reports. */
enum idm_addr_end {
	IDM_ADDR_PEER = 0,
	IDM_ADDR_LOCAL = 1,
};

/**
 * Since 1.2. The address of the peer or of the local end as a socket
 * address (what idm_conn_peer_name()/idm_conn_local_name() print), for
 * callers that match addresses or answer SendTargets. Copies it to *addr
 * and its length to *len. Returns 0, -EINVAL (NULL argument, unknown
 * end) or -ENOTCONN (not known yet: an initiator connection before the
 * provider connected, or an adopted socket getsockname() failed on).
 */
IDM_API int idm_conn_sockaddr(const idm_conn *conn, enum idm_addr_end end,
			      struct sockaddr_storage *addr, socklen_t *len);

/* ------------------------------------------------------------------ */
/* Since 1.2: sockets the caller set up itself                         */
/* ------------------------------------------------------------------ */

/**
 * Since 1.2. Adopt a TCP connection the caller set up itself (its own
 * accept(), a connection systemd or inetd passed, its own connect()) as a
 * connection in the login phase, as if libidm had accepted it (role
 * IDM_ROLE_TARGET) or connected it (IDM_ROLE_INITIATOR: no `connected`
 * callback follows, login may start at once). attr->provider: NULL,
 * "auto" or "tcp"; a provider that cannot take a socket answers
 * -EOPNOTSUPP (iSER: an RDMA connection is no socket).
 * attr->connect_timeout_ms is ignored.
 * fd must be a connected stream socket: -EBADF if it is no open
 * descriptor, -ENOTSOCK if it is not a socket, -EINVAL for a datagram or
 * listening socket, -ENOTCONN if it is not connected.
 * On success libidm owns fd: it sets O_NONBLOCK, FD_CLOEXEC and its
 * socket options (TCP_NODELAY, keepalive) and closes fd when the
 * connection is terminated or destroyed. On failure fd stays the
 * caller's, open and unchanged.
 */
IDM_API int idm_conn_adopt_fd(idm_ctx *ctx, int fd, enum idm_role role,
			      const struct idm_conn_attr *attr, idm_conn **out);

/**
 * Since 1.2. As idm_conn_adopt_fd(), for a connection whose login the
 * caller finished itself over the socket: the connection starts in full
 * feature phase, as after idm_notice_key_values(conn, keys, keys_len)
 * and idm_enable_datamover() (a target's final Login Response was sent
 * by the caller). `keys` is the negotiated text as Notice_Key_Values
 * takes it (a bad value: -EINVAL, fd untouched). Nothing else carries
 * over: the TCP data mover keeps no sequence numbers of its own (CmdSN,
 * StatSN and ExpStatSN live in the caller's PDUs; R2TSN, DataSN and
 * target transfer tags start afresh per task), so the socket must be
 * positioned at a PDU boundary: the caller has read exactly up to the
 * end of the final Login Response (initiator) or Login Request (target).
 */
IDM_API int idm_conn_adopt_fd_ffp(idm_ctx *ctx, int fd, enum idm_role role,
				  const struct idm_conn_attr *attr,
				  const char *keys, size_t keys_len,
				  idm_conn **out);

/**
 * Since 1.2. A portal serving a listening socket the caller created and
 * bound itself (systemd socket activation, LISTEN_FDS; a port bound by a
 * privileged parent). attr->providers names the one provider to use
 * (NULL: "tcp"; -EOPNOTSUPP if it cannot take a socket); attr->backlog is
 * ignored (the caller called listen()). fd: -EBADF, -ENOTSOCK, or
 * -EINVAL when it is not a listening stream socket. On success libidm
 * owns fd (sets O_NONBLOCK and FD_CLOEXEC, closes it in
 * idm_portal_destroy()); on failure it stays the caller's, unchanged.
 */
IDM_API int idm_portal_create_fd(idm_ctx *ctx, int fd,
				 const struct idm_portal_attr *attr,
				 idm_portal **out);

/* ------------------------------------------------------------------ */
/* Buffers                                                             */
/* ------------------------------------------------------------------ */

/**
 * Wrap caller memory [addr, addr+len) so libidm can move data into or out
 * of it (a provider may register it with an RDMA device on first use).
 * Create such buffers once and reuse them: registration is not cheap.
 * Since 1.3 the iSER provider keeps registrations of private anonymous
 * memory (malloc, anonymous mmap) in a bounded cache after the buffer is
 * destroyed, so a buffer created again per command on the same memory
 * registers nothing; memory the caller unmaps is dropped from the cache
 * before its address can be reused (idm_conn_stats mr_cache_*,
 * doc/iser.md "Registration cache"). The creation itself still costs an
 * allocation.
 * The buffer belongs to the context's domain (idm_ctx_get_domain): any
 * connection on any context of that domain may use it, and it may
 * outlive the context it was created through.
 */
IDM_API int idm_buf_create(idm_ctx *ctx, void *addr, size_t len, idm_buf **out);

/** Allocate len bytes of libidm-owned memory suited to every provider. */
IDM_API int idm_buf_alloc(idm_ctx *ctx, size_t len, idm_buf **out);

/** Free the handle (and the memory, for idm_buf_alloc buffers) and its
 * registrations. The buffer must not be in use by a task on any context.
 * Any thread may call it. */
IDM_API void idm_buf_destroy(idm_buf *buf);
/** The memory of a buffer of one segment; NULL for a buffer of several
 * (idm_buf_create_iov): use idm_buf_segments() there. */
IDM_API void *idm_buf_addr(const idm_buf *buf);
/** Total length (of all segments). */
IDM_API size_t idm_buf_len(const idm_buf *buf);

/** Most segments idm_buf_create_iov() takes. */
#define IDM_BUF_IOV_MAX 1024

/**
 * Scatter-gather: wrap caller memory made of iovcnt segments (1 ...
 * IDM_BUF_IOV_MAX); the buffer's bytes are their concatenation, and every
 * (buf, buf_off, len) of the API addresses that concatenation. The array
 * is copied; the memory stays the caller's (not freed by libidm). A
 * segment of length 0 or address NULL is refused (-EINVAL), as is a total
 * beyond SIZE_MAX / 2. A provider without IDM_CAP_SCATTER_GATHER refuses
 * a buffer of several segments with -EOPNOTSUPP (idm_put_data,
 * idm_get_data, idm_task_set_data); one segment behaves as
 * idm_buf_create().
 */
IDM_API int idm_buf_create_iov(idm_ctx *ctx, const struct iovec *iov, int iovcnt,
			       idm_buf **out);

/** The buffer's segments: returns their count (1 for idm_buf_create and
 * idm_buf_alloc buffers) and points *iov at them (read-only, valid until
 * idm_buf_destroy); -EINVAL for NULL. */
IDM_API int idm_buf_segments(const idm_buf *buf, const struct iovec **iov);

/* ------------------------------------------------------------------ */
/* Tasks                                                               */
/* ------------------------------------------------------------------ */

/**
 * Initiator: create the task for a new command with Initiator Task Tag
 * `itt`. Tasks come from a per-connection pool (no malloc per I/O after
 * warm-up). -EEXIST if the ITT is active on this connection.
 */
IDM_API int idm_task_create(idm_conn *conn, uint32_t itt, idm_task **out);

/**
 * Initiator: attach the data buffers of the command sent next with this
 * task: `in` receives Data-In (read data), `out` supplies Data-Out (write
 * data); each may be NULL. Lengths are the expected transfer lengths.
 * The buffers belong to libidm until idm_deallocate_task_resources().
 */
IDM_API int idm_task_set_data(idm_task *task, idm_buf *in, size_t in_off,
			      uint32_t in_len, idm_buf *out, size_t out_off,
			      uint32_t out_len);

IDM_API uint32_t idm_task_itt(const idm_task *task);
IDM_API idm_conn *idm_task_conn(const idm_task *task);
IDM_API void idm_task_set_arg(idm_task *task, void *arg);
IDM_API void *idm_task_get_arg(const idm_task *task);
/** Bytes of the task's data placed so far (Data-In at the initiator,
 * Data-Out at the target). */
IDM_API uint32_t idm_task_data_received(const idm_task *task);

/* ------------------------------------------------------------------ */
/* Received PDUs (valid only during control_notify)                    */
/* ------------------------------------------------------------------ */

#define IDM_BHS_LEN 48

/** The 48-byte Basic Header Segment. */
IDM_API const uint8_t *idm_pdu_bhs(const idm_pdu *pdu);
/** Additional Header Segments (NULL, 0 if none). */
IDM_API const uint8_t *idm_pdu_ahs(const idm_pdu *pdu, size_t *len);
/** Data segment (NULL, 0 if none or if the provider already placed it). */
IDM_API const uint8_t *idm_pdu_data(const idm_pdu *pdu, size_t *len);
/** Target: the task created for a SCSI Command; initiator: the task of a
 * SCSI Response or Data-In with status. NULL otherwise. */
IDM_API idm_task *idm_pdu_task(const idm_pdu *pdu);
IDM_API uint8_t idm_pdu_opcode(const idm_pdu *pdu);

/* ------------------------------------------------------------------ */
/* RFC 5047 primitives                                                 */
/* ------------------------------------------------------------------ */

/* idm_send_control() flags: none defined yet, pass 0. */

/**
 * Send_Control (initiator and target, any connection state after
 * connect/accept; login PDUs included).
 * `bhs` is the complete 48-byte BHS the caller built; `ahs`/`data` the
 * AHS and data segment. libidm copies all of it before returning, fills in
 * TotalAHSLength and DataSegmentLength, adds digests and padding.
 *
 * Initiator SCSI Command: pass the task from idm_task_create() whose data
 * buffers are set; `data` must be NULL. libidm then sends immediate data
 * and unsolicited Data-Out as ImmediateData, InitialR2T and
 * FirstBurstLength allow (fixing DataSegmentLength and the F bit), answers
 * R2Ts and places Data-In. For other PDUs `task` is NULL.
 */
IDM_API int idm_send_control(idm_conn *conn, const uint8_t bhs[IDM_BHS_LEN],
			     const void *ahs, size_t ahs_len, const void *data,
			     size_t data_len, idm_task *task, uint32_t flags);

/* idm_put_data() flags */
#define IDM_PUT_ACK (1u << 0) /* set the A bit on the last Data-In (ERL>=1) */

/**
 * Put_Data (target, full feature phase): send bytes [offset, offset+length)
 * of the command's read data from buf[buf_off ...].
 * `datain` is the caller's template of the SCSI Data-In BHS: opcode 0x25,
 * LUN, ITT, ExpCmdSN, MaxCmdSN and, to carry status in the last Data-In
 * (S bit), the S, U, O bits, Status, StatSN and Residual Count. libidm
 * fills DataSegmentLength, TTT, DataSN, Buffer Offset, the F and A bits,
 * splits at the initiator's MaxRecvDataSegmentLength and sets F at every
 * MaxBurstLength boundary; S goes only on the very last PDU.
 * data_completion_notify(IDM_DATA_IN) follows.
 */
IDM_API int idm_put_data(idm_task *task, const uint8_t datain[IDM_BHS_LEN],
			 idm_buf *buf, size_t buf_off, uint32_t offset,
			 uint32_t length, uint32_t flags);

/**
 * Get_Data (target, full feature phase): receive bytes [offset,
 * offset+length) of the command's write data into buf[buf_off ...].
 * `r2t` is the caller's template of the R2T BHS (LUN, ITT, StatSN,
 * ExpCmdSN, MaxCmdSN); libidm fills TTT, R2TSN, Buffer Offset and Desired
 * Data Transfer Length, keeps at most MaxOutstandingR2T outstanding, each
 * at most MaxBurstLength.
 * Immediate and unsolicited data of the command lying in the range are
 * placed too, without R2Ts: call Get_Data for a write command from its
 * SCSI Command control_notify so they land directly in `buf` (called
 * later, libidm keeps them in a staging copy until then).
 * Several Get_Data ranges of one task may be outstanding at once if they do
 * not overlap (-EINVAL); a provider may bound how many (the TCP provider:
 * 4, then -EBUSY), so a caller splitting a large write should ask for the
 * next range from the previous range's completion.
 * data_completion_notify(IDM_DATA_OUT) follows for each range.
 */
IDM_API int idm_get_data(idm_task *task, const uint8_t r2t[IDM_BHS_LEN],
			 idm_buf *buf, size_t buf_off, uint32_t offset,
			 uint32_t length, uint32_t flags);

/**
 * Allocate_Connection_Resources (both roles, during login after the
 * security stage): size queues and pools for full feature phase from the
 * keys noticed so far. Idempotent.
 */
IDM_API int idm_allocate_connection_resources(idm_conn *conn);

/**
 * Since 1.1 (both roles, before Allocate_Connection_Resources or
 * Enable_Datamover): the most commands the caller admits on this
 * connection at once. A target passes its CmdSN window (MaxCmdSN -
 * ExpCmdSN + 1), an initiator the commands it keeps outstanding.
 * Providers that must provision receive buffers for what the peer may
 * send without being asked (iSER: each command with its immediate data
 * and unsolicited Data-Out, RFC 7145 8.1) size them for this many
 * commands, within a per-connection memory bound (doc/iser.md); the TCP
 * provider needs nothing. 0 (the default) lets the provider assume a
 * small window. Returns 0, -EINVAL for a NULL connection, -ENOTCONN if
 * it is no longer in the login phase, or -EBUSY once its resources are
 * allocated (the value could no longer take effect).
 */
IDM_API int idm_conn_set_cmd_window(idm_conn *conn, uint32_t commands);

/**
 * Since 1.2: per-connection counters, for monitoring and for finding out
 * why a connection is slow or failing without turning on debug logs.
 * Counts start at 0 when the connection is created and cover login and
 * full feature phase. A size-prefixed struct: set st->size to
 * sizeof(struct idm_conn_stats); libidm fills at most that many bytes,
 * so a caller built against an older, shorter struct keeps working.
 */
struct idm_conn_stats {
	uint32_t size;             /* sizeof(struct idm_conn_stats) */
	uint32_t tasks_active;     /* tasks created and not yet freed */
	uint32_t xfers_in_flight;  /* Put_Data/Get_Data ops not completed */
	uint32_t sendq_entries;       /* PDUs queued, not yet on the wire */
	uint64_t sendq_bytes;      /* their bytes */
	/* PDUs and bytes on the wire, each way. Bytes count BHS, AHS,
	 * digests, data and padding (TCP); for iSER the iSER header, BHS and
	 * data carried by Sends, and the payload of RDMA Reads and Writes. */
	uint64_t pdus_tx, pdus_rx;
	uint64_t bytes_tx, bytes_rx;
	/* of those PDUs (either direction, by opcode) */
	uint64_t data_in_pdus, data_out_pdus, r2t_pdus;
	/* PDUs passed through Send_Control / delivered by Control_Notify */
	uint64_t control_tx, control_rx;
	uint64_t header_digest_errors, data_digest_errors; /* TCP */
	/* iSER: RDMA Writes and Reads posted, Sends with Invalidate posted,
	 * and the times every posted receive had been consumed (a peer's
	 * Send in that window is RNR-NAKed and retried by the adapter; the
	 * retries themselves are counted per port by the device, not per
	 * queue pair). 0 on TCP. */
	uint64_t rdma_writes, rdma_reads, send_invalidates, recv_queue_empty;
	/* SCSI payload (Data-In/Data-Out data, immediate data) this side
	 * copied in user space: how many copies and their bytes. Solicited
	 * data moves without one (TCP: received straight into the Get_Data
	 * buffer and sent from the Put_Data buffer, but for the few bytes
	 * read along with a header; iSER: RDMA). A target copies immediate
	 * and unsolicited data: iSER once (it comes in a Send), TCP when it
	 * was read before a Get_Data asked for it. An iSER initiator copies
	 * a command range across segments not adjacent in memory once,
	 * through its staging area (IDM_CAP_SCATTER_GATHER). */
	uint64_t payload_copies, payload_copy_bytes;
	/* Since 1.3: late answers for tasks the caller released
	 * (idm_deallocate_task_resources() before the final status, e.g.
	 * on a timeout or an abort), dropped without failing the
	 * connection: on a TCP initiator Data-In (its data read and
	 * discarded, never into the caller's buffer; digests checked) and
	 * R2T (not answered); on a TCP target Data-Out; on an iSER target
	 * unsolicited Data-Out. 0 on an iSER initiator: Data-In and R2T
	 * travel as RDMA there, and a late SCSI Response reaches
	 * control_notify without a task, as on TCP (not counted). */
	uint64_t late_pdus_dropped;
	/* Since 1.3. iSER: the registration cache of caller memory on the
	 * connection's RDMA device (the device's figures, shared by every
	 * connection of the domain on it; doc/iser.md, "Registration
	 * cache"). Buffers registered again after their idm_buf was freed
	 * hit; 0 on TCP, and on iSER with plain MR STags or
	 * IDM_ISER_MR_CACHE_MB=0 (no cache). hits: registrations found
	 * covering the memory (nothing registered); misses: registered,
	 * then cached; evictions: idle registrations dropped to stay
	 * within the bound; invalidations: dropped because the memory was
	 * unmapped, discarded or moved; uncached: registered for the one
	 * buffer only (memory that cannot be watched, such as shared or
	 * file mappings, or no room in the bound); pinned_bytes: bytes the
	 * cache keeps registered now. */
	uint64_t mr_cache_hits, mr_cache_misses, mr_cache_evictions;
	uint64_t mr_cache_invalidations, mr_cache_uncached;
	uint64_t mr_cache_pinned_bytes;
};

/**
 * Since 1.2: fill *st (st->size set by the caller) with conn's counters.
 * Callable from any thread (it takes the context's lock, so the figures
 * are one consistent snapshot). Returns 0, or -EINVAL for a NULL argument
 * or a size smaller than the first two members.
 */
IDM_API int idm_conn_get_stats(const idm_conn *conn, struct idm_conn_stats *st);

/* Since 1.2. Default bounds of a connection's send queue (see below). */
#define IDM_SEND_QUEUE_ENTRIES 1024u
#define IDM_SEND_QUEUE_BYTES (1u << 20)

/**
 * Since 1.2 (both roles, any time from connect or accept on, e.g. in the
 * accept callback): bound the connection's send queue, so that a peer
 * that sends requests without reading the answers cannot make this side
 * queue them without limit. `max_entries` counts queued units (one per
 * Send_Control, Put_Data, R2T, ...), `max_bytes` the bytes libidm copied
 * and holds for them (caller buffers of Put_Data and Data-Out are not
 * copied and do not count); 0 keeps the default (IDM_SEND_QUEUE_ENTRIES,
 * IDM_SEND_QUEUE_BYTES). While the queue holds more than half of either,
 * the provider stops reading new PDUs from the connection (TCP: stops
 * polling the socket, so the peer's window closes; iSER: does not repost
 * receive buffers, so the peer gets RNR) and resumes once it drained to a
 * quarter. Send_Control on a queue that is full returns -EAGAIN, except
 * for a SCSI Command, SCSI Response or Task Management Function Response
 * (their number is bounded by the command window) and except when the
 * queue is empty. Returns 0, -EINVAL for a NULL connection or a value
 * below 16 entries or 4096 bytes, -ENOTCONN once it was terminated or
 * failed.
 */
IDM_API int idm_conn_set_send_limits(idm_conn *conn, uint32_t max_entries,
				     uint32_t max_bytes);

/**
 * Since 1.2: hand conn, in the login phase or full feature phase, to the
 * context dst (one context per core), with its tasks, transfers in flight
 * and callbacks: from the move on, its callbacks run in dst's progress
 * passes, each event once. Called
 *  - outside any callback (e.g. between progress calls, from any thread):
 *    takes both contexts' locks in address order, moves, and returns 0;
 *  - from a callback of conn's context (its progress thread): the move is
 *    queued and done at the end of that pass, between PDUs; it returns 0
 *    and callbacks still run on the source until then (-EALREADY while
 *    one is pending). From a callback of another context: -EDEADLK.
 * While a move may be under way, the connection's own calls (primitives,
 * tasks) come from the thread running its callbacks or the one moving it,
 * never from a third thread (idm_conn_get_stats() excepted). Buffers: a
 * provider that registers memory (iSER) takes buffers of the connection's
 * domain only, so it moves between contexts of one domain
 * (idm_domain_create); the TCP provider accepts buffers of any context
 * (they must outlive their transfers). iSER moves a connection in the
 * login and in the full feature phase, transfers in flight included; not
 * one on a shared receive queue (IDM_CTX_SHARED_RECV: -EOPNOTSUPP), which
 * is its context's. idm_last_error() and the source's log say why.
 * Returns 0, -ENOTCONN (connecting, failed or terminated), -EOPNOTSUPP
 * (the provider cannot move connections, or not this one), -EXDEV (dst
 * is in another domain and the provider registers memory), -EAGAIN
 * (moved meanwhile by its callbacks), -EINVAL.
 */
IDM_API int idm_conn_move(idm_conn *conn, idm_ctx *dst);

/** Deallocate_Connection_Resources: undo the above (e.g. login failed). */
IDM_API void idm_deallocate_connection_resources(idm_conn *conn);

/**
 * Enable_Datamover (both roles): switch to full feature phase.
 * Initiator: call after the final Login Response arrived; pass NULL.
 * Target: pass the final Login Response (BHS and data segment); libidm
 * sends it as the last login-phase PDU, then enables the data mover.
 * Allocates connection resources if that was not done.
 */
IDM_API int idm_enable_datamover(idm_conn *conn,
				 const uint8_t final_login_rsp[IDM_BHS_LEN],
				 const void *data, size_t data_len);

/**
 * Connection_Terminate (both roles): close the connection now. When it
 * returns, libidm holds no buffer, task or PDU of the connection and no
 * callback of the connection will run (no Connection_Terminate_Notify).
 * The handle stays valid until idm_conn_destroy().
 */
IDM_API void idm_connection_terminate(idm_conn *conn);

/**
 * Notice_Key_Values (both roles): tell the data mover the negotiated
 * values. `kv` is iSCSI text: "Key=Value" strings each ended by NUL,
 * `len` bytes in all. Recognised: HeaderDigest, DataDigest,
 * MaxBurstLength, FirstBurstLength, ImmediateData, InitialR2T,
 * MaxOutstandingR2T, ErrorRecoveryLevel, DataPDUInOrder,
 * DataSequenceInOrder, InitiatorRecvDataSegmentLength and
 * TargetRecvDataSegmentLength (for TCP: the MaxRecvDataSegmentLength each
 * side declared), MaxRecvDataSegmentLength (the value the peer declared),
 * and the iSER keys RDMAExtensions, MaxOutstandingUnexpectedPDUs,
 * MaxAHSLength, TaggedBufferForSolicitedDataOnly, iSERHelloRequired.
 * Unknown keys are ignored; a bad value of a known key fails with -EINVAL
 * and changes nothing, and idm_last_error() names the key and the range
 * it must be in (since 1.3). Digest values take effect with the PDU after
 * the final Login Response.
 */
IDM_API int idm_notice_key_values(idm_conn *conn, const char *kv, size_t len);

/**
 * Deallocate_Task_Resources (both roles): end the task. When it returns
 * libidm no longer touches the task's buffers and raises no callback for
 * it; pending Put_Data/Get_Data are cancelled without notification. The
 * handle is invalid afterwards.
 * Initiator, before the task's final status (a timeout, an abort, a LUN
 * reset; any number at once): what the target still sends for it is
 * late. Since 1.3 a TCP initiator drops its Data-In (read past, digests
 * checked, never into the buffer) and R2T (not answered) and counts them
 * (idm_conn_stats.late_pdus_dropped); the connection goes on. It
 * remembers 4 released ITTs per command of idm_conn_set_cmd_window()
 * (128 to 4096; a task that got its status takes no room): a late answer
 * for one released longer ago than that, or for an ITT that was never a
 * command, still fails the connection. A late SCSI Response, or Data-In
 * with status, reaches control_notify with no task, as before: its
 * StatSN counts, the caller decides. On iSER the task's STags are
 * invalidated here: a target that still RDMA-Writes into them or
 * invalidates them by its Send with Invalidate breaks the queue pair and
 * the connection fails (rxe in Linux 6.1 even crashes on the latter:
 * doc/iser.md, "Late answers"); abort such a task before ending it.
 */
IDM_API void idm_deallocate_task_resources(idm_task *task);

#ifdef __cplusplus
}
#endif
#endif /* LIBIDM_IDM_H */
