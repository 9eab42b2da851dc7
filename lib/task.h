/* SPDX-License-Identifier: BSD-2-Clause */
/* lib/task.c: a connection's tasks. */
#ifndef LIBIDM_TASK_H
#define LIBIDM_TASK_H

#include "core.h"

void idmp_task_pool_destroy(struct idm_conn *conn);

#endif
