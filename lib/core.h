/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The core's objects, for the files of lib/ only. Providers see them
 * opaque through <libidm/provider.h> and its accessors (lib/prov_sdk.c);
 * nothing outside lib/ and the core's white-box unit tests includes this.
 */
#ifndef LIBIDM_CORE_H
#define LIBIDM_CORE_H

#include <libidm/idm.h>
#include <libidm/provider.h>
#include <libidm/provider_util.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "idm_uthash.h"

#define IDMP_PRINTF(a, b) IDM_PROV_PRINTF(a, b)

#define IDMP_MAX_PROVIDERS 8
/* provider files described by idm_get_provider_status(); more are loaded
 * or skipped as usual, just not described */
#define IDMP_MAX_PROVIDER_STATUS 32

struct idmp_prov_status;

/* ------------------------------------------------------------------ */
/* Objects                                                             */
/* ------------------------------------------------------------------ */

struct idm_prov {
	/* &ops_copy once loaded: the provider's table, at least
	 * IDM_PROV_OPS_MIN_SIZE bytes, copied into a zero-filled full-size
	 * one, so that an op beyond the provider's `size` reads NULL */
	const struct idm_prov_ops *ops;
	struct idm_prov_ops ops_copy;
	struct idm_ctx *ctx; /* NULL for a domain's own instance */
	void *dl;        /* dlopen handle (NULL for built-in test providers) */
	int index;       /* slot in ctx->providers */
	/* the provider in the context's domain (lib/domain.c): its slot in
	 * idm_buf.reg, shared by this provider's instances on every context
	 * of the domain, and its shared state */
	int reg_index;
	struct idmp_dom_prov *dom;
	void *priv;      /* provider's global state */
	struct idm_provider_info info;
	char path[512];
	/* init() may say here why it failed ("no RDMA device"): shown by
	 * idm_get_provider_status() and idm_last_error() */
	char why[128];
};

struct idm_buf {
	struct idm_domain *dom; /* holds a reference */
	/* the memory when the buffer is one segment (the fast path: no
	 * segment walk), NULL when it has several */
	void *addr;
	size_t len;      /* total, of all segments */
	bool owned;      /* memory allocated by idm_buf_alloc */
	int nseg;        /* >= 1 */
	/* the segments: &one for a one-segment buffer, else an array
	 * allocated with the struct; seg_end[i] is the byte after segment i
	 * in the concatenation (prefix sums, for a binary search) */
	struct iovec *seg;
	size_t *seg_end;
	struct iovec one;
	/* provider registrations, by the domain's provider slot; set once
	 * (release) by whichever context's instance registers first, read
	 * (acquire) by all */
	void *_Atomic reg[IDMP_MAX_PROVIDERS];
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
	struct idm_sq xfers; /* in flight: struct idmp_xfer (lib/dm_xfer.c) */
	UT_hash_handle hh;  /* conn->tasks by itt */
	struct idm_task *next_free;
	/* provider-private area of ops->task_priv_size bytes follows */
	_Alignas(16) unsigned char priv[];
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
	/* idm_conn_sockaddr(): what the provider passed to set_names, len 0
	 * while unknown */
	struct sockaddr_storage peer_sa, local_sa;
	socklen_t peer_salen, local_salen;
	/* tasks */
	struct idm_task *tasks;     /* uthash by itt, active ones */
	struct idm_task *task_free; /* pool free list */
	void **task_chunks;
	size_t n_task_chunks;
	size_t task_size;
	struct idm_pool xfer_pool; /* struct idmp_xfer of every task */
	/* ctx list */
	struct idm_conn *next, *prev;
	/* auto provider selection: remaining candidates */
	int fallback_index;
	struct sockaddr_storage sa;
	socklen_t salen;
	int connect_timeout_ms;
	/* idm_conn_set_cmd_window(): commands admitted at once, 0 unknown */
	uint32_t cmd_window;
	/* idm_conn_get_stats(): what the provider counts, what the core does */
	struct idm_prov_stats stats;
	uint64_t control_tx, control_rx;
	/* idm_conn_set_send_limits(), defaults filled in */
	struct idm_prov_send_limits send_limits;
	/* idm_conn_move() from a callback: done at the end of the pass */
	struct idm_prov_defer move_defer;
	struct idm_ctx *move_dst;
	/* idm_conn_destroy() from a callback of this context: freed by a
	 * deferred item once the pass under way let go of it */
	struct idm_prov_defer destroy_defer;
	bool destroy_pending;
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

/* A provider as the domain knows it: the state its instances on the
 * domain's contexts share (ops->dom_open), and an instance of its own
 * (ctx NULL) through which buffers release their registrations after
 * those contexts are gone; `dl` keeps the module mapped until then. */
struct idmp_dom_prov {
	const struct idm_prov_ops *src_ops; /* what the module's entry returned */
	void *dl;
	void *priv;                         /* ops->dom_open's */
	struct idm_prov inst;
	struct idm_domain *domain;
};

struct idm_domain {
	pthread_mutex_t lock;  /* providers[], and what dom_lock guards */
	_Atomic unsigned refs; /* the creator's, its contexts', its buffers' */
	size_t n_providers;
	struct idmp_dom_prov providers[IDMP_MAX_PROVIDERS];
};

struct idm_ctx {
	pthread_mutex_t lock; /* recursive; see idm_ctx_start_progress_thread */
	struct idm_domain *dom; /* holds a reference */
	uint32_t flags;       /* idm_ctx_attr.flags (idm_prov_ctx_flags) */
	int epfd;
	int evfd;             /* wakes epfd for deferred work */
	struct idm_prov_watch ev_watch;
	struct idm_prov_defer *defer_head, *defer_tail;
	/* the last item the pass under way runs (items queued after it wait
	 * for the next pass); idm_prov_defer_cancel() keeps it valid */
	struct idm_prov_defer *defer_mark;
	/* Who may need the eventfd written (lib/progress.c, "Wakeups"): */
	_Atomic bool defer_pending; /* defer_head != NULL, read without lock */
	_Atomic int sleepers;       /* threads in (or entering) epoll_wait */
	_Atomic bool fd_shared;     /* idm_ctx_get_fd() called: a caller may
	                               poll epfd outside idm_ctx_progress() */
	bool kicked;                /* evfd written, not yet drained (lock) */
	_Atomic bool skip_poll;     /* the last pass polled and left work */
	/* idm_ctx_wakeup() (lib/wakeup.c): raised by any thread, consumed
	 * by a pass */
	_Atomic bool wake_pending;
	idm_ctx_wakeup_fn wakeup_fn;
	void *wakeup_arg;
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
	/* bumped (under the lock) each time a connection moves away: a pass
	 * that saw it change since its epoll_wait drops that wait's events,
	 * which may name a moved watch (epoll is level-triggered, so they
	 * come back from the next wait) */
	_Atomic unsigned moved_out;
};

/* One recorded Put_Data / Get_Data (lib/dm_xfer.c). */
struct idmp_xfer {
	struct idm_sq_link link; /* task->xfers */
	struct idm_prov_xfer x;
};

#endif
