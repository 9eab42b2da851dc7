/* SPDX-License-Identifier: BSD-2-Clause */
/* Strict reader of the idm-target configuration file: every error names
 * the file and the line, and nothing is guessed. */
#include "config.h"
#include "ex_log.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Values are wiped before they go: some are secrets (a credentials
 * file's), and freed memory is reused by anything. */
static void drop(struct value *v)
{
	explicit_bzero(v->s, strlen(v->s));
	free(v);
}

void config_free(void)
{
	while (values) {
		struct value *v = values;
		values = v->next;
		drop(v);
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
		drop(v);
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

/* A line as read: without its newline, and refused when too long or
 * holding a NUL byte. 0, or -1 after a message. */
static int check_line(char *line, size_t len, const char *where)
{
	if (len && line[len - 1] == '\n')
		line[--len] = '\0';
	if (len > CONFIG_LINE_MAX) {
		ex_err("%s: line longer than %d bytes", where, CONFIG_LINE_MAX);
		return -1;
	}
	if (memchr(line, '\0', len)) {
		ex_err("%s: NUL byte in the line", where);
		return -1;
	}
	return 0;
}

static bool valid_name(const char *name)
{
	for (const char *p = name; *p; p++)
		if (!islower((unsigned char)*p) && *p != '-')
			return false;
	return true;
}

/* "name = value" of a line that is not blank or a comment, split in
 * place. `quote`: whether messages may quote the line. 0, or -1 after a
 * message. */
static int split_setting(char *line, bool quote, const char *where, char **name,
			 char **val)
{
	char *eq = strchr(line, '=');

	if (!eq) {
		if (!quote)
			ex_err("%s: expected 'name = value'", where);
		else
			ex_err("%s: expected 'name = value', got '%.64s'", where, line);
		return -1;
	}
	*eq = '\0';
	*val = trim(eq + 1);
	*name = trim(line);
	if (!valid_name(*name)) {
		if (!quote)
			ex_err("%s: bad setting name", where);
		else
			ex_err("%s: bad setting name '%.64s'", where, *name);
		return -1;
	}
	if (!**name || !**val) {
		ex_err("%s: %s", where, **name ? "empty value" : "missing name");
		return -1;
	}
	return 0;
}

/* One line read: nothing for a blank line or a comment, else its
 * setting to `fn`, its value kept (keep()). 0, or -1 after a message. */
static int parse_line(char *line, size_t len, const char *where, bool secret,
		      config_fn fn, void *arg)
{
	char *name, *val;

	if (check_line(line, len, where) < 0)
		return -1;
	name = trim(line);
	if (!*name || *name == '#')
		return 0;
	/* a line that may hold a secret is never quoted: any line of a
	 * file of secrets, a chap line of any file */
	if (split_setting(name, !secret && strncasecmp(name, "chap", 4) != 0, where,
			  &name, &val) < 0)
		return -1;
	if (!(val = keep(val))) {
		ex_err("%s: out of memory", where);
		return -1;
	}
	return fn(name, val, where, arg) < 0 ? -1 : 0;
}

/* Every line of an open file to `fn`, up to the first error. */
static int parse_lines(FILE *f, const char *path, bool secret, config_fn fn, void *arg)
{
	char where[300], *line = NULL;
	size_t cap = 0;
	ssize_t got;
	unsigned lineno = 0;
	int rc = 0;

	errno = 0;
	while (rc == 0 && (got = getline(&line, &cap, f)) >= 0) {
		snprintf(where, sizeof(where), "%s:%u", path, ++lineno);
		rc = parse_line(line, (size_t)got, where, secret, fn, arg);
	}
	if (rc == 0 && ferror(f)) {
		ex_err("cannot read %s: %s", path, strerror(errno));
		rc = -1;
	}
	if (line) /* the last line read may have been a secret */
		explicit_bzero(line, cap);
	free(line);
	return rc;
}

int config_load(const char *path, config_fn fn, void *arg)
{
	FILE *f = fopen(path, "re");
	int rc;

	if (!f) {
		ex_err("cannot read config file %s: %s", path, strerror(errno));
		return -1;
	}
	rc = parse_lines(f, path, false, fn, arg);
	fclose(f);
	return rc;
}

/* A file of secrets must be its owner's alone, as ssh demands of a
 * private key: a regular file, owned by us or root, that neither group
 * nor others may read or write (or a reader could take the secret, a
 * writer replace it). */
static int check_private(const struct stat *st, const char *what, const char *path)
{
	if (!S_ISREG(st->st_mode)) {
		ex_err("%s %s: not a regular file", what, path);
		return -1;
	}
	if (st->st_uid != geteuid() && st->st_uid != 0) {
		ex_err("%s %s: owned by uid %u, neither root nor the user this "
		       "program runs as (uid %u)", what, path, (unsigned)st->st_uid,
		       (unsigned)geteuid());
		return -1;
	}
	if (st->st_mode & 077) {
		ex_err("%s %s: permissions %04o are too open: group and others must "
		       "have no access to a file of secrets (chmod 600 %s)", what, path,
		       (unsigned)(st->st_mode & 07777), path);
		return -1;
	}
	return 0;
}

int config_load_private(const char *path, const char *what, config_fn fn, void *arg)
{
	struct stat st;
	FILE *f;
	int fd, rc;

	/* checked on the descriptor read from: no window for a swap */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ex_err("cannot read %s %s: %s", what, path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		ex_err("cannot read %s %s: %s", what, path, strerror(errno));
		close(fd);
		return -1;
	}
	if (check_private(&st, what, path) < 0) {
		close(fd);
		return -1;
	}
	f = fdopen(fd, "r");
	if (!f) {
		ex_err("cannot read %s %s: %s", what, path, strerror(errno));
		close(fd);
		return -1;
	}
	rc = parse_lines(f, path, true, fn, arg);
	fclose(f);
	return rc;
}
