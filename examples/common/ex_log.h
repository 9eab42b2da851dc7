/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Logging for the example programs: one line per message on stderr,
 * prefixed with a timestamp, the program name and the level.
 * Levels are those of libidm (IDM_LOG_ERROR .. IDM_LOG_DEBUG) so that
 * ex_log_idm_sink() can be handed to idm_ctx_attr.log_fn directly.
 */
#ifndef EX_LOG_H
#define EX_LOG_H

#include <libidm/idm.h>

/** Set the program name shown in every line and the highest level shown. */
void ex_log_init(const char *prog, int level);
/** Current highest level shown (callers skip costly formatting above it). */
int ex_log_level(void);
/** Log a printf-style message at `level`. Thread-safe (one write per line). */
void ex_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** idm_log_fn that forwards libidm's own messages to ex_log(). */
void ex_log_idm_sink(enum idm_log_level level, const char *msg, void *arg);

#define ex_err(...) ex_log(IDM_LOG_ERROR, __VA_ARGS__)
#define ex_warn(...) ex_log(IDM_LOG_WARN, __VA_ARGS__)
#define ex_info(...) ex_log(IDM_LOG_INFO, __VA_ARGS__)
#define ex_dbg(...)                                                        \
	do {                                                               \
		if (ex_log_level() >= IDM_LOG_DEBUG)                       \
			ex_log(IDM_LOG_DEBUG, __VA_ARGS__);                \
	} while (0)

#endif
