/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * idm-target configuration file: one "name = value" per line, where
 * name is a long option of the command line (portal, lun, key, ...).
 * See doc/idm-target.md for the format.
 */
#ifndef IDM_TARGET_CONFIG_H
#define IDM_TARGET_CONFIG_H

#include <stddef.h>

/**
 * Called for each setting: `name` is the option name, `value` a string
 * that stays valid until config_free(), `where` "FILE:LINE" for
 * messages. Returns 0 or -1 (the callback has said why).
 */
typedef int (*config_fn)(const char *name, char *value, const char *where, void *arg);

/**
 * Read FILE and call `fn` for every setting, in file order. Returns 0,
 * or -1 after logging an error naming FILE:LINE (syntax) or after `fn`
 * failed.
 */
int config_load(const char *path, config_fn fn, void *arg);
/**
 * config_load() for a file of secrets (`what`, e.g. "credentials file"):
 * refused unless it is a regular file owned by the caller's user or
 * root that group and others have no access to; its lines are never
 * quoted in messages, its values wiped when freed.
 */
int config_load_private(const char *path, const char *what, config_fn fn, void *arg);
/** Free the values of every file loaded so far. */
void config_free(void);
/** The current end of the value list, for config_release(). */
void *config_mark(void);
/** Free the values loaded after `mark` (a SIGHUP reload's own copies). */
void config_release(void *mark);

#endif
