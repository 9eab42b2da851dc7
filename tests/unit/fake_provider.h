/* SPDX-License-Identifier: BSD-2-Clause */
/* What the fake provider (fake_provider.c) shows the unit tests. */
#ifndef LIBIDM_TEST_FAKE_PROVIDER_H
#define LIBIDM_TEST_FAKE_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

/* Call counters of every op, read through dlsym(handle, "fake_stats"). */
/* What the fake writes into the priv area of each transfer record. */
#define FAKE_XFER_MARK 0xfadeu

struct fake_stats {
	int init, fini, listen, unlisten, connect, send_control, put_data,
		get_data, enable_datamover, conn_terminate, task_free,
		alloc_conn_rsrc, free_conn_rsrc, notice_key_values, conn_free,
		buf_release, conn_stats, dom_open, dom_close;
	uint8_t last_bhs[48];
	size_t last_data_len;
	int notice_fail; /* notice_key_values returns this */
	int xfer_hold;	 /* Put/Get_Data accepted, completed by the test */
	/* Put_Data registers its buffer (a marker allocation), which
	 * buf_release frees; released_in_domain counts the releases that
	 * saw the domain's state from dom_open */
	int reg_bufs, released_in_domain;
};

#endif
