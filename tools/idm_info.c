/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * idm_info: what libidm finds on this host. The providers in the search
 * path, loaded or not and why (from idm_get_provider_status()), the
 * search path and IDM_* environment in force, and the RDMA devices the
 * iSER provider would use. With -p NAME the exit status says whether that
 * provider can be used.
 */
#include "info.h"

#include <libidm/idm.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXIT_UNUSABLE 1 /* -p NAME: not usable; or no provider at all */
#define EXIT_USAGE 2

extern char **environ;

static const char *state_name(enum idm_provider_state s)
{
	switch (s) {
	case IDM_PROVIDER_LOADED:
		return "loaded";
	case IDM_PROVIDER_SKIPPED:
		return "skipped";
	case IDM_PROVIDER_SHADOWED:
		return "shadowed";
	case IDM_PROVIDER_FILTERED:
		return "filtered";
	}
	return "unknown";
}

static void caps(struct out *o, uint64_t c)
{
	static const struct {
		uint64_t bit;
		const char *name;
	} names[] = {
		{IDM_CAP_INITIATOR, "initiator"},
		{IDM_CAP_TARGET, "target"},
		{IDM_CAP_DIGESTS, "digests"},
		{IDM_CAP_RDMA, "rdma"},
		{IDM_CAP_ZERO_COPY_RX, "zero_copy_rx"},
		{IDM_CAP_DATA_ACK, "data_ack"},
	};
	char text[256] = "";

	if (o->json) {
		out_arr_begin(o, "caps", "capabilities");
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (c & names[i].bit)
				out_str(o, NULL, NULL, "%s", names[i].name);
		out_arr_end(o);
		return;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (c & names[i].bit) {
			if (text[0])
				strcat(text, " ");
			strcat(text, names[i].name);
		}
	out_str(o, "caps", "capabilities", "%s", text[0] ? text : "-");
}

/* The directories libidm searches, in its order (lib/provider_dirs.c):
 * IDM_PROVIDER_PATH or, when that is unset and this is a build tree's
 * libidm, the build's provider directories; then the install directory.
 * Sets *from to what the first part comes from; returns it or NULL. */
static const char *first_dirs(const char **from)
{
	const char *env = getenv("IDM_PROVIDER_PATH");

	if (env && *env) {
		*from = "IDM_PROVIDER_PATH";
		return env;
	}
	*from = "build tree";
	return idm_provider_build_path();
}

static void search_path(struct out *o)
{
	const char *from, *dirs = first_dirs(&from);

	out_arr_begin(o, "search_path", "provider search path");
	if (dirs) {
		char *copy = strdup(dirs), *save = NULL, *dir;

		for (dir = copy ? strtok_r(copy, ":", &save) : NULL; dir;
		     dir = strtok_r(NULL, ":", &save)) {
			out_obj_begin(o, NULL, NULL);
			out_str(o, "dir", "dir", "%s", dir);
			out_str(o, "from", "from", "%s", from);
			out_bool(o, "exists", "exists", access(dir, X_OK) == 0);
			out_obj_end(o);
		}
		free(copy);
	}
	out_obj_begin(o, NULL, NULL);
	out_str(o, "dir", "dir", "%s", idm_provider_dir());
	out_str(o, "from", "from", "install directory");
	out_bool(o, "exists", "exists", access(idm_provider_dir(), X_OK) == 0);
	out_obj_end(o);
	out_arr_end(o);
}

/* "DIRS (FROM), DIR (install directory)": where nothing usable was found */
static void searched(char *buf, size_t len)
{
	const char *from, *dirs = first_dirs(&from);

	if (dirs)
		snprintf(buf, len, "%s (%s), %s (install directory)", dirs, from,
			 idm_provider_dir());
	else
		snprintf(buf, len, "%s (install directory; IDM_PROVIDER_PATH not set)",
			 idm_provider_dir());
}

static void environment(struct out *o)
{
	bool any = false;

	out_obj_begin(o, "environment", "environment");
	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		char key[128];

		if (strncmp(*e, "IDM_", 4) || !eq || (size_t)(eq - *e) >= sizeof(key))
			continue;
		memcpy(key, *e, (size_t)(eq - *e));
		key[eq - *e] = '\0';
		out_str(o, key, key, "%s", eq + 1);
		any = true;
	}
	if (!any)
		out_note(o, "  (no IDM_* variable set)");
	out_obj_end(o);
}

/* Lists the providers (only `only` if set); returns true if one of that
 * name, or any without -p, loaded, else the first reason in why. */
static bool providers(struct out *o, idm_ctx *ctx, const char *only,
		      char *why, size_t why_len)
{
	bool usable = false, seen = false;

	out_arr_begin(o, "providers", "providers");
	for (size_t i = 0;; i++) {
		struct idm_provider_status st = {.size = sizeof(st)};

		if (idm_get_provider_status(ctx, i, &st) < 0)
			break;
		if (only && strcmp(st.name, only))
			continue;
		seen = true;
		usable |= st.state == IDM_PROVIDER_LOADED;
		if (st.state != IDM_PROVIDER_LOADED && !why[0])
			snprintf(why, why_len, "%s (%s)", st.reason, st.path);
		out_obj_begin(o, NULL, NULL);
		out_str(o, "name", "name", "%s", st.name);
		out_str(o, "state", "state", "%s", state_name(st.state));
		out_str(o, "path", "path", "%s", st.path);
		if (st.abi_version)
			out_int(o, "abi_version", "ABI version", st.abi_version);
		if (st.description[0])
			out_str(o, "description", "description", "%s",
				st.description);
		if (st.abi_version)
			caps(o, st.caps);
		if (st.state != IDM_PROVIDER_LOADED) {
			out_str(o, "reason", "reason", "%s", st.reason);
			if (st.state == IDM_PROVIDER_SKIPPED) {
				out_int(o, "errno", "errno", -st.error);
				out_str(o, "error", "error", "%s",
					idm_strerror(st.error));
			}
		}
		out_obj_end(o);
	}
	out_arr_end(o);
	if (only && !seen) {
		char where[512];

		searched(where, sizeof(where));
		snprintf(why, why_len, "no libidm-%s.so in %s; set IDM_PROVIDER_PATH "
			 "to the directory that holds it", only, where);
	}
	return usable;
}

/* whether the search found any provider file at all, usable or not */
static bool any_file(idm_ctx *ctx)
{
	struct idm_provider_status st = {.size = sizeof(st)};

	return idm_get_provider_status(ctx, 0, &st) == 0;
}

static void usage(FILE *f, const char *argv0)
{
	fprintf(f,
		"Usage: %s [-j|--json] [-p|--provider NAME]\n"
		"Show what libidm finds on this host: the providers in the\n"
		"search path (loaded, or why not), the search path and IDM_*\n"
		"environment in force, and the RDMA devices and ports.\n\n"
		"  -j, --json           JSON instead of text\n"
		"  -p, --provider NAME  only this provider; exit status 1 when\n"
		"                       it cannot be used\n"
		"  -V, --version        print the version and exit\n"
		"  -h, --help           this text\n\n"
		"Exit status: 0 (the provider, or without -p at least one\n"
		"provider, is usable), 1 (it is not), 2 (usage error).\n",
		argv0);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"provider", required_argument, NULL, 'p'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct idm_ctx_attr attr = {.size = sizeof(attr), .log_level = -1};
	const char *only = NULL;
	char why[768] = "";
	bool json = false, usable, found_any;
	struct out o;
	idm_ctx *ctx;
	int c, r;

	while ((c = getopt_long(argc, argv, "jp:Vh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'p':
			only = optarg;
			break;
		case 'V':
			printf("idm_info %s (libidm %s)\n", IDM_INFO_VERSION,
			       idm_version());
			return 0;
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		default:
			usage(stderr, argv[0]);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0],
			argv[optind]);
		usage(stderr, argv[0]);
		return EXIT_USAGE;
	}
	/* the library's log stays silent unless IDM_LOG_LEVEL asks: the
	 * reasons are in the report itself */
	r = idm_ctx_create(&attr, &ctx);
	if (r < 0) {
		fprintf(stderr, "%s: idm_ctx_create: %s\n", argv[0], idm_strerror(r));
		return EXIT_UNUSABLE;
	}
	out_init(&o, stdout, json);
	out_str(&o, "libidm_version", "libidm", "%s", idm_version());
	search_path(&o);
	environment(&o);
	usable = providers(&o, ctx, only, why, sizeof(why));
	found_any = any_file(ctx);
	if (!only || !strcmp(only, "iser"))
		info_rdma(&o);
	out_finish(&o);
	idm_ctx_destroy(ctx);
	if (fflush(stdout) != 0)
		return EXIT_UNUSABLE;
	if (!usable) {
		/* one line for scripts and people: the report may be JSON */
		if (only)
			fprintf(stderr, "idm_info: provider %s cannot be used: %s\n",
				only, why);
		else if (found_any) /* the report says why each one is out */
			fprintf(stderr, "idm_info: no usable provider\n");
		else {
			char where[512];

			searched(where, sizeof(where));
			fprintf(stderr, "idm_info: no usable provider: no libidm-*.so "
				"in %s; set IDM_PROVIDER_PATH to the directory that "
				"holds libidm-tcp.so\n", where);
		}
		return EXIT_UNUSABLE;
	}
	return 0;
}
