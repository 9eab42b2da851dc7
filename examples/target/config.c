/* SPDX-License-Identifier: BSD-2-Clause */
/* Strict reader of the idm-target configuration file: every error names
 * the file and the line, and nothing is guessed. */
#include "config.h"
#include "ex_log.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONFIG_LINE_MAX 4096

/* Values handed out stay valid until config_free(): the options keep
 * pointers to them, as they do to argv. */
struct value {
	struct value *next;
	char s[];
};
static struct value *values;

static char *keep(const char *s)
{
	size_t n = strlen(s) + 1;
	struct value *v = malloc(sizeof(*v) + n);

	if (!v)
		return NULL;
	memcpy(v->s, s, n);
	v->next = values;
	values = v;
	return v->s;
}

void config_free(void)
{
	while (values) {
		struct value *v = values;
		values = v->next;
		free(v);
	}
}

void *config_mark(void)
{
	return values;
}

void config_release(void *mark)
{
	/* the list is newest first: free down to the mark */
	while (values && values != mark) {
		struct value *v = values;
		values = v->next;
		free(v);
	}
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

int config_load(const char *path, config_fn fn, void *arg)
{
	char where[300], *line = NULL;
	size_t cap = 0;
	ssize_t got;
	FILE *f = fopen(path, "re");
	unsigned lineno = 0;
	int rc = 0;

	if (!f) {
		ex_err("cannot read config file %s: %s", path, strerror(errno));
		return -1;
	}
	errno = 0;
	while ((got = getline(&line, &cap, f)) >= 0) {
		char *name, *val, *eq, *p;
		size_t len = (size_t)got;

		lineno++;
		snprintf(where, sizeof(where), "%s:%u", path, lineno);
		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		if (len > CONFIG_LINE_MAX) {
			ex_err("%s: line longer than %d bytes", where, CONFIG_LINE_MAX);
			rc = -1;
			break;
		}
		if (memchr(line, '\0', len)) {
			ex_err("%s: NUL byte in the line", where);
			rc = -1;
			break;
		}
		name = trim(line);
		if (!*name || *name == '#')
			continue;
		eq = strchr(name, '=');
		if (!eq) {
			ex_err("%s: expected 'name = value', got '%.64s'", where, name);
			rc = -1;
			break;
		}
		*eq = '\0';
		val = trim(eq + 1);
		name = trim(name);
		for (p = name; *p; p++)
			if (!islower((unsigned char)*p) && *p != '-') {
				ex_err("%s: bad setting name '%.64s'", where, name);
				rc = -1;
				goto out;
			}
		if (!*name || !*val) {
			ex_err("%s: %s", where, *name ? "empty value" : "missing name");
			rc = -1;
			break;
		}
		if (!(val = keep(val))) {
			ex_err("%s: out of memory", where);
			rc = -1;
			break;
		}
		if (fn(name, val, where, arg) < 0) {
			rc = -1;
			break;
		}
	}
	if (rc == 0 && ferror(f)) {
		ex_err("cannot read config file %s: %s", path, strerror(errno));
		rc = -1;
	}
out:
	free(line);
	fclose(f);
	return rc;
}
