/* SPDX-License-Identifier: BSD-2-Clause */
/* The example programs' option tables turned into what getopt_long()
 * and --help need (ex_opts.h). */
#include "ex_opts.h"

#include <string.h>

#define MAX_OPTS 96	  /* options in one program's table */
#define HELP_COLUMN 28	  /* where --help puts an option's text */

/* What getopt_long() takes, made from a table of rows. */
struct getopt_tables {
	struct option longs[MAX_OPTS + 1];
	char shorts[3 * MAX_OPTS + 1];
};

static int is_end(const struct ex_opt *r)
{
	return !r->name && !r->help;
}

static int has_letter(const struct ex_opt *r)
{
	return r->key > 0 && r->key < 256;
}

/* The long options in table order; the short ones, each followed by ':'
 * when it takes an argument. */
static void build_getopt(const struct ex_opt *rows, struct getopt_tables *g)
{
	size_t nl = 0, ns = 0;

	for (const struct ex_opt *r = rows; !is_end(r) && nl < MAX_OPTS; r++) {
		if (!r->name)
			continue;
		g->longs[nl++] = (struct option){ r->name, r->has_arg, NULL, r->key };
		if (!has_letter(r))
			continue;
		g->shorts[ns++] = (char)r->key;
		if (r->has_arg == required_argument)
			g->shorts[ns++] = ':';
	}
	g->longs[nl] = (struct option){ NULL, 0, NULL, 0 };
	g->shorts[ns] = '\0';
}

enum ex_opts_result ex_opts_parse(const struct ex_opt *rows, int argc, char **argv,
				  ex_opt_fn set, void *ctx)
{
	struct getopt_tables g;
	int key;

	build_getopt(rows, &g);
	while ((key = getopt_long(argc, argv, g.shorts, g.longs, NULL)) != -1) {
		const struct ex_opt *opt = ex_opts_by_key(rows, key);

		if (key == 'h')
			return EX_OPTS_HELP;
		if (key == 'V')
			return EX_OPTS_VERSION;
		if (!opt)
			return EX_OPTS_UNKNOWN; /* '?' or ':' */
		if (set(opt, optarg, ctx) < 0)
			return EX_OPTS_REFUSED;
	}
	return EX_OPTS_DONE;
}

/* The text of an option, each line after the first at HELP_COLUMN. */
static void print_help_text(FILE *f, const char *text)
{
	for (const char *nl; (nl = strchr(text, '\n')); text = nl + 1)
		fprintf(f, "%.*s\n%*s", (int)(nl - text), text, HELP_COLUMN, "");
	fprintf(f, "%s\n", text);
}

static void print_option(FILE *f, const struct ex_opt *r)
{
	int n;

	if (has_letter(r))
		n = fprintf(f, "  -%c, --%s", r->key, r->name);
	else
		n = fprintf(f, "      --%s", r->name);
	if (r->label)
		n += fprintf(f, " %s", r->label);
	if (!*r->help) {
		fputc('\n', f);
		return;
	}
	if (r->help[0] != '\n')
		fprintf(f, "%*s", n < HELP_COLUMN ? HELP_COLUMN - n : 2, "");
	print_help_text(f, r->help);
}

void ex_opts_usage(FILE *f, const struct ex_opt *rows)
{
	for (const struct ex_opt *r = rows; !is_end(r); r++) {
		if (!r->name)
			fputs(r->help, f);
		else if (r->help)
			print_option(f, r);
	}
}

const struct ex_opt *ex_opts_by_name(const struct ex_opt *rows, const char *name)
{
	for (const struct ex_opt *r = rows; !is_end(r); r++)
		if (r->name && !strcmp(r->name, name))
			return r;
	return NULL;
}

const struct ex_opt *ex_opts_by_key(const struct ex_opt *rows, int key)
{
	for (const struct ex_opt *r = rows; !is_end(r); r++)
		if (r->name && r->key == key)
			return r;
	return NULL;
}
