/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Logging for the example programs: one line per message on stderr,
 * prefixed with a timestamp, the program name and the level, or to
 * syslog/the journal when the program runs as a service.
 * Levels are those of libidm (IDM_LOG_ERROR .. IDM_LOG_DEBUG) so that
 * ex_log_idm_sink() can be handed to idm_ctx_attr.log_fn directly.
 */
#ifndef EX_LOG_H
#define EX_LOG_H

#include <libidm/idm.h>

/* Where the lines go (ex_log_set_target). */
enum ex_log_target {
	EX_LOG_AUTO,    /* decided by ex_log_set_target() from stderr */
	EX_LOG_STDERR,  /* timestamped lines on stderr */
	EX_LOG_JOURNAL, /* stderr is a journal stream: "<N>" priority prefix */
	EX_LOG_SYSLOG,  /* syslog(3), facility daemon */
};

/** Set the program name shown in every line and the highest level shown. */
void ex_log_init(const char *prog, int level);
/** Current highest level shown (callers skip costly formatting above it). */
int ex_log_level(void);
/**
 * Parse a level as libidm does: error, warn (warning), info, debug or
 * 0-3. Returns the level or -1.
 */
int ex_log_parse_level(const char *s);
/**
 * The level IDM_LOG_LEVEL asks for, or `deflt` when it is unset or
 * empty. A bad value gives `deflt` and a warning naming it (on stderr,
 * with `prog` as prefix).
 */
int ex_log_env_level(const char *prog, int deflt);
/** Parse "auto", "stderr", "syslog" or "journal". Returns it or -1. */
int ex_log_parse_target(const char *s);
/**
 * Choose where lines go. EX_LOG_AUTO picks the journal when
 * JOURNAL_STREAM names our stderr, stderr when it is a terminal, a pipe
 * or a file (someone reads it), and syslog otherwise (/dev/null, closed,
 * a socket: what a service manager without a journal gives us).
 * Returns the target chosen.
 */
enum ex_log_target ex_log_set_target(enum ex_log_target t);
/** Log a printf-style message at `level`. Thread-safe (one write per line). */
void ex_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** idm_log_fn that forwards libidm's own messages to ex_log(). */
void ex_log_idm_sink(enum idm_log_level level, const char *msg, void *arg);
/** Print "PROG VERSION (libidm VERSION)" on stdout, for --version. */
void ex_print_version(const char *prog);

#define ex_err(...) ex_log(IDM_LOG_ERROR, __VA_ARGS__)
#define ex_warn(...) ex_log(IDM_LOG_WARN, __VA_ARGS__)
#define ex_info(...) ex_log(IDM_LOG_INFO, __VA_ARGS__)
#define ex_dbg(...)                                                        \
	do {                                                               \
		if (ex_log_level() >= IDM_LOG_DEBUG)                       \
			ex_log(IDM_LOG_DEBUG, __VA_ARGS__);                \
	} while (0)

#endif
