/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A stand-in for libidm under idm-target's session layer in fuzz_target:
 * the public calls the target makes (include/libidm/idm.h), done in
 * process without any provider, so that a fuzzed PDU stream reaches
 * login, text, session, task management and SCSI code directly. Every
 * range the target hands over (Put_Data/Get_Data buffers, PDU data) is
 * checked and touched, so ASan sees a bad one; a range libidm would
 * refuse aborts, since the target must never ask for one.
 */
#ifndef IDM_FUZZ_FAKE_IDM_H
#define IDM_FUZZ_FAKE_IDM_H

#include <libidm/idm.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A new accepted connection ("tcp" or "iser"), handed to `accept`. */
idm_conn *fake_conn_new(const char *provider, idm_accept_fn accept);
/* The connection is still there (not destroyed by the target). */
bool fake_conn_alive(const idm_conn *c);
/* Control_Notify one received PDU: a SCSI Command in full feature phase
 * comes with a new task, as the providers do. */
void fake_deliver(idm_conn *c, const uint8_t *bhs, const uint8_t *data, size_t len);
/* Data-Out the peer sent: what the next Get_Data completions place. */
void fake_set_data_out(const uint8_t *data, size_t len);
/* Run the Put_Data/Get_Data completions (and those they start). */
void fake_complete(void);
/* Connection_Terminate_Notify: the peer went away. */
void fake_terminate_notify(idm_conn *c);
/* Free what the target left behind (tasks, connections, buffers). */
void fake_reset(void);

#endif
