/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * idm-target's secrets, kept off the command line (where every local
 * user reads them in /proc/PID/cmdline): a credentials file of
 * "name = value" lines, like the config file, that only its owner may
 * read (config_load_private()). It holds the CHAP credentials:
 *
 *     chap = USER:SECRET            what every initiator without its
 *                                   own line must give
 *     initiator-chap = IQN USER:SECRET   what initiator IQN must give
 *     mutual-chap = USER:SECRET     what the target answers with when
 *                                   an initiator asks it to prove itself
 *     discovery-chap = USER:SECRET  what discovery sessions must give
 *                                   (without it: as normal sessions)
 *
 * Given by --credentials FILE (or "credentials = FILE" in the config
 * file), or passed by systemd as the credential idm-target.credentials
 * (LoadCredential= in the unit), which appears in $CREDENTIALS_DIRECTORY.
 */
#ifndef IDM_TARGET_CREDENTIALS_H
#define IDM_TARGET_CREDENTIALS_H

#include <stdbool.h>

/* The name of the systemd credential read when --credentials is not given. */
#define CREDENTIALS_NAME "idm-target.credentials"

/**
 * Read the credentials file at `path`. 0, or -1 after an error naming
 * the file (and line) but never a secret.
 */
int credentials_load(const char *path);

/**
 * Read $CREDENTIALS_DIRECTORY/idm-target.credentials if the service
 * manager passed it. 0 (read, or not passed), or -1 after an error.
 */
int credentials_load_systemd(void);

/**
 * Set the CHAP credentials from "USER:SECRET" (`arg` is split in place
 * and must stay valid). `where` names the setting for messages. 0, or -1.
 */
int credentials_set_chap(char *arg, const char *where);

/**
 * After every source of credentials was read: -1 (said why) if the
 * mutual-chap secret is also one an initiator authenticates with.
 */
int credentials_check(void);

#endif
