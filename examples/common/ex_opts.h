/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Command-line options of the example programs, each described once in
 * a table of rows: its long name, short letter, argument and --help
 * text. From that table come the getopt_long() table, the short-option
 * string, the --help text and the names a config file may use, so that
 * they cannot drift apart.
 */
#ifndef EX_OPTS_H
#define EX_OPTS_H

#include <getopt.h>
#include <stdio.h>

/* Keys of the long-only options both programs have; an option with a
 * short letter has that letter as its key. */
enum ex_opt_key {
	EX_KEY_LOG_LEVEL = 256,
	EX_KEY_CREDENTIALS,
	EX_KEY_CHAP,
	EX_KEY_CHAP_ALGS,
	EX_KEY_PROGRAM = 512, /* a program's own long-only keys start here */
};

/*
 * One row of a program's option table: an option (`name` set), or a
 * line of --help text between options (`name` NULL, the line in
 * `help`). A row with neither ends the table.
 *
 * --help shows an option as "  -x, --name LABEL" and its text from
 * column 28 (two spaces further when the left part is that long); each
 * '\n' in the text goes on at column 28, and a text starting with '\n'
 * starts below the option. An option whose help is NULL is not shown
 * (an alias).
 */
struct ex_opt {
	const char *name;  /* long name */
	int key;	   /* short letter, or an ex_opt_key / program key */
	int has_arg;	   /* no_argument or required_argument */
	const char *label; /* what the argument is called in --help, or NULL */
	const char *help;
};

/* The rows both programs share: the same name, letter and argument
 * everywhere; each program words the help for what the option does
 * there. */
#define EX_OPT_HELP \
	{ "help", 'h', no_argument, NULL, "this text" }
#define EX_OPT_VERSION \
	{ "version", 'V', no_argument, NULL, "print the program and libidm versions" }
#define EX_OPT_VERBOSE(text) \
	{ "verbose", 'v', no_argument, NULL, text }
#define EX_OPT_QUIET(text) \
	{ "quiet", 'q', no_argument, NULL, text }
#define EX_OPT_LOG_LEVEL(text) \
	{ "log-level", EX_KEY_LOG_LEVEL, required_argument, "LEVEL", text }
#define EX_OPT_CREDENTIALS(text) \
	{ "credentials", EX_KEY_CREDENTIALS, required_argument, "FILE", text }
#define EX_OPT_CHAP(text) \
	{ "chap", EX_KEY_CHAP, required_argument, "USER:SECRET", text }
#define EX_OPT_CHAP_ALGS(text) \
	{ "chap-algorithms", EX_KEY_CHAP_ALGS, required_argument, "LIST", text }
#define EX_OPT_TEXT(line) { NULL, 0, 0, NULL, line }
#define EX_OPT_END { NULL, 0, 0, NULL, NULL }

/* What ex_opts_parse() stopped at. */
enum ex_opts_result {
	EX_OPTS_DONE,	  /* every option applied; optind is the first operand */
	EX_OPTS_HELP,	  /* -h, --help */
	EX_OPTS_VERSION,  /* -V, --version */
	EX_OPTS_UNKNOWN,  /* getopt_long() already said what is wrong */
	EX_OPTS_REFUSED,  /* the handler refused a value (and said why) */
};

/* Applies one option: 0, or -1 after saying why. `arg` is NULL for an
 * option without an argument. */
typedef int (*ex_opt_fn)(const struct ex_opt *opt, char *arg, void *ctx);

/* Run getopt_long() over argv with the options of `rows`, handing each
 * to `set`, up to the end, --help, --version or the first error. */
enum ex_opts_result ex_opts_parse(const struct ex_opt *rows, int argc, char **argv,
				  ex_opt_fn set, void *ctx);
/* Print the --help lines of `rows`. */
void ex_opts_usage(FILE *f, const struct ex_opt *rows);
/* The option called `name`, or NULL. */
const struct ex_opt *ex_opts_by_name(const struct ex_opt *rows, const char *name);
/* The option of `key`, or NULL. */
const struct ex_opt *ex_opts_by_key(const struct ex_opt *rows, int key);

#endif
