/* SPDX-License-Identifier: BSD-2-Clause */
/* Leveled logging to stderr, the journal or syslog for the example
 * programs. */
#include "ex_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#ifndef EX_VERSION
#define EX_VERSION "unknown"
#endif

static const char *log_prog = "idm";
static int log_max = IDM_LOG_WARN;
static enum ex_log_target log_target = EX_LOG_STDERR;

static void set_prog(const char *prog)
{
	if (prog) {
		const char *slash = strrchr(prog, '/');
		log_prog = slash ? slash + 1 : prog;
	}
}

void ex_log_init(const char *prog, int level)
{
	set_prog(prog);
	log_max = level;
}

int ex_log_level(void)
{
	return log_max;
}

int ex_log_parse_level(const char *s)
{
	/* the values lib/log.c accepts for IDM_LOG_LEVEL */
	static const char *const names[] = { "error", "warn", "info", "debug" };

	if (!s)
		return -1;
	for (int i = 0; i < 4; i++)
		if (!strcmp(s, names[i]))
			return i;
	if (!strcmp(s, "warning"))
		return IDM_LOG_WARN;
	if (s[0] >= '0' && s[0] <= '3' && !s[1])
		return s[0] - '0';
	return -1;
}

int ex_log_env_level(const char *prog, int deflt)
{
	const char *s = getenv("IDM_LOG_LEVEL");
	int l;

	if (!s || !*s)
		return deflt;
	l = ex_log_parse_level(s);
	if (l < 0) {
		int saved = log_max;

		set_prog(prog);
		log_max = IDM_LOG_WARN;
		ex_log(IDM_LOG_WARN, "ignoring IDM_LOG_LEVEL='%.64s': use error, "
		       "warn, info, debug or 0-3", s);
		log_max = saved;
		return deflt;
	}
	return l;
}

int ex_log_parse_target(const char *s)
{
	static const char *const names[] = { "auto", "stderr", "journal", "syslog" };

	for (int i = 0; i < 4; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

/* systemd sets JOURNAL_STREAM=DEV:INODE of the stream it connected to
 * stderr; a child that inherited the variable but not the fd must not
 * believe it (sd_journal_stream_fd(3), systemd.exec(5)). */
static int stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2)
		return 0;
	if (fstat(STDERR_FILENO, &st) < 0)
		return 0;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

enum ex_log_target ex_log_set_target(enum ex_log_target t)
{
	if (t == EX_LOG_AUTO) {
		struct stat st;

		if (stderr_is_journal())
			t = EX_LOG_JOURNAL;
		else if (isatty(STDERR_FILENO))
			t = EX_LOG_STDERR;
		else if (fstat(STDERR_FILENO, &st) == 0 &&
			 (S_ISFIFO(st.st_mode) || S_ISREG(st.st_mode)))
			t = EX_LOG_STDERR; /* 2>file or a pipe: someone reads it */
		else
			t = EX_LOG_SYSLOG;
	}
	if (t == EX_LOG_SYSLOG && log_target != EX_LOG_SYSLOG)
		openlog(log_prog, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	log_target = t;
	return t;
}

static const char *level_name(int level)
{
	switch (level) {
	case IDM_LOG_ERROR: return "error";
	case IDM_LOG_WARN: return "warn";
	case IDM_LOG_INFO: return "info";
	default: return "debug";
	}
}

static int syslog_prio(int level)
{
	switch (level) {
	case IDM_LOG_ERROR: return LOG_ERR;
	case IDM_LOG_WARN: return LOG_WARNING;
	case IDM_LOG_INFO: return LOG_INFO;
	default: return LOG_DEBUG;
	}
}

void ex_log(int level, const char *fmt, ...)
{
	char line[1024];
	struct timespec ts;
	struct tm tm;
	va_list ap;
	int n;

	if (level > log_max)
		return;
	if (log_target == EX_LOG_SYSLOG) {
		va_start(ap, fmt);
		vsnprintf(line, sizeof(line), fmt, ap);
		va_end(ap);
		syslog(syslog_prio(level), "%s", line);
		return;
	}
	if (log_target == EX_LOG_JOURNAL) {
		/* the journal adds time and program; "<N>" sets the priority */
		n = snprintf(line, sizeof(line), "<%d>%s: ", syslog_prio(level),
			     level_name(level));
	} else {
		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		n = snprintf(line, sizeof(line), "%02d:%02d:%02d.%03ld %s %s: ",
			     tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000L,
			     log_prog, level_name(level));
	}
	if (n < 0)
		return;
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	n = (int)strlen(line);
	line[n++] = '\n';
	/* One write() per line keeps lines whole when several threads log. */
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}

void ex_log_idm_sink(enum idm_log_level level, const char *msg, void *arg)
{
	(void)arg;
	ex_log((int)level, "libidm: %s", msg);
}

void ex_print_version(const char *prog)
{
	const char *slash = prog ? strrchr(prog, '/') : NULL;

	printf("%s %s (libidm %s)\n", slash ? slash + 1 : (prog ? prog : "idm"),
	       EX_VERSION, idm_version());
}
