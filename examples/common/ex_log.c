/* SPDX-License-Identifier: BSD-2-Clause */
/* Leveled logging to stderr for the example programs. */
#include "ex_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *log_prog = "idm";
static int log_max = IDM_LOG_WARN;

void ex_log_init(const char *prog, int level)
{
	if (prog) {
		const char *slash = strrchr(prog, '/');
		log_prog = slash ? slash + 1 : prog;
	}
	log_max = level;
}

int ex_log_level(void)
{
	return log_max;
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

void ex_log(int level, const char *fmt, ...)
{
	char line[1024];
	struct timespec ts;
	struct tm tm;
	va_list ap;
	int n;

	if (level > log_max)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = snprintf(line, sizeof(line), "%02d:%02d:%02d.%03ld %s %s: ",
		     tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000L,
		     log_prog, level_name(level));
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
