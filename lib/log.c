/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Logging: to the caller's sink, or to stderr when IDM_LOG_LEVEL asks for
 * it. A library has no business writing to stdout, and by default says
 * nothing at all unless the caller or the environment asks.
 */
#include "core.h"
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int level_from_env(void)
{
	const char *s = secure_getenv("IDM_LOG_LEVEL");

	if (!s || !*s)
		return -1;
	if (!strcmp(s, "error"))
		return IDM_LOG_ERROR;
	if (!strcmp(s, "warn") || !strcmp(s, "warning"))
		return IDM_LOG_WARN;
	if (!strcmp(s, "info"))
		return IDM_LOG_INFO;
	if (!strcmp(s, "debug"))
		return IDM_LOG_DEBUG;
	if (s[0] >= '0' && s[0] <= '3' && !s[1])
		return s[0] - '0';
	return IDM_LOG_WARN;
}

static void stderr_sink(enum idm_log_level level, const char *msg, void *arg)
{
	static const char *const names[] = {"error", "warn", "info", "debug"};
	(void)arg;
	fprintf(stderr, "libidm %s: %s\n", names[level & 3], msg);
}

void idmp_log_init(struct idm_ctx *ctx, const struct idm_ctx_attr *attr)
{
	int env = level_from_env();

	if (attr && attr->log_fn) {
		ctx->log_fn = attr->log_fn;
		ctx->log_arg = attr->log_arg;
		ctx->log_level = attr->log_level >= 0 ? attr->log_level
			       : env >= 0	      ? env
						      : IDM_LOG_WARN;
		return;
	}
	/* No sink given: stay silent unless the environment asks. */
	ctx->log_fn = env >= 0 ? stderr_sink : NULL;
	ctx->log_arg = NULL;
	ctx->log_level = env;
}

void idm_prov_log(struct idm_ctx *ctx, enum idm_log_level level, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (!ctx || !ctx->log_fn || (int)level > ctx->log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ctx->log_fn(level, buf, ctx->log_arg);
}
