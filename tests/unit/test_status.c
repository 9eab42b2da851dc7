/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * idm_get_provider_status(), idm_provider_dir() and idm_last_error(): every
 * provider file found is described, loaded or not, with the reason it was
 * left out; connecting to a provider that was skipped names the reason;
 * an unresolvable host gives the resolver's message.
 */
#include "unit.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ALL_FAKES "fake,badabi,noop,noentry,small,misname,other,initfail,ghost"

/* The status of the first file named `name`, or fails the test. */
static struct idm_provider_status get(idm_ctx *ctx, const char *name)
{
	for (size_t i = 0; i < 64; i++) {
		struct idm_provider_status st = {.size = sizeof(st)};

		if (idm_get_provider_status(ctx, i, &st) < 0)
			break;
		if (!strcmp(st.name, name))
			return st;
	}
	ck_abort_msg("no status for %s", name);
	return (struct idm_provider_status){0};
}

static size_t count(idm_ctx *ctx)
{
	size_t i = 0;

	for (;; i++) {
		struct idm_provider_status st = {.size = sizeof(st)};
		int r = idm_get_provider_status(ctx, i, &st);

		if (r == -ENOENT)
			break;
		ck_assert_int_eq(r, 0);
		ck_assert_uint_lt(i, 64);
	}
	return i;
}

START_TEST(loaded_and_skipped_are_described)
{
	struct idm_provider_status st;
	char why[64];
	idm_ctx *ctx;

	unit_use_providers("badabi:noop:noentry:small:misname:initfail:good", ALL_FAKES);
	ctx = unit_ctx();
	ck_assert_uint_eq(count(ctx), 7);

	st = get(ctx, "fake");
	ck_assert_int_eq(st.state, IDM_PROVIDER_LOADED);
	ck_assert_str_eq(st.path, FAKES_DIR "/good/libidm-fake.so");
	ck_assert_str_eq(st.description, "fake provider for the unit tests");
	ck_assert_uint_eq(st.abi_version, IDM_PROV_ABI);
	ck_assert(st.caps & IDM_CAP_INITIATOR);
	ck_assert_int_eq(st.error, 0);
	ck_assert_str_eq(st.reason, "");

	st = get(ctx, "badabi");
	ck_assert_int_eq(st.state, IDM_PROVIDER_SKIPPED);
	ck_assert_int_eq(st.error, -ELIBBAD);
	snprintf(why, sizeof(why), "ABI %d, libidm needs %d", IDM_PROV_ABI + 1,
		 IDM_PROV_ABI);
	ck_assert_str_eq(st.reason, why);
	ck_assert_uint_eq(st.abi_version, IDM_PROV_ABI + 1);
	ck_assert_uint_eq(st.caps, 0); /* a table of another ABI is not read */

	st = get(ctx, "noop");
	ck_assert_int_eq(st.state, IDM_PROVIDER_SKIPPED);
	ck_assert_int_eq(st.error, -ELIBBAD);
	ck_assert_str_eq(st.reason, "mandatory op put_data missing");

	st = get(ctx, "noentry");
	ck_assert_int_eq(st.state, IDM_PROVIDER_SKIPPED);
	ck_assert_ptr_nonnull(strstr(st.reason, "no " IDM_PROV_ENTRY_NAME " symbol"));
	ck_assert_uint_eq(st.abi_version, 0);
	ck_assert_str_eq(st.description, "");

	st = get(ctx, "small");
	ck_assert_int_eq(st.state, IDM_PROVIDER_SKIPPED);
	ck_assert_ptr_nonnull(strstr(st.reason, "ops table of"));

	st = get(ctx, "misname");
	ck_assert_int_eq(st.state, IDM_PROVIDER_SKIPPED);
	ck_assert_str_eq(st.reason, "calls itself \"other\"");

	/* init failed: its own words, and its errno */
	st = get(ctx, "initfail");
	ck_assert_int_eq(st.state, IDM_PROVIDER_SKIPPED);
	ck_assert_int_eq(st.error, -ENODEV);
	ck_assert_str_eq(st.reason, "no fake device here");
	ck_assert(unit_log_has("not usable here: no fake device here"));

	/* the strings stay valid while the context lives, asking again
	 * describes the same files */
	ck_assert_uint_eq(count(ctx), 7);
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(shadowed_and_filtered)
{
	struct idm_provider_status st = {0};
	idm_ctx *ctx;

	unit_use_providers("good:second:initfail", "fake");
	ctx = unit_ctx();
	ck_assert_uint_eq(count(ctx), 3);
	ck_assert_int_eq(idm_get_provider_status(ctx, 0, &st), -EINVAL); /* size 0 */
	st = (struct idm_provider_status){.size = sizeof(st)};
	ck_assert_int_eq(idm_get_provider_status(ctx, 0, &st), 0);
	ck_assert_int_eq(st.state, IDM_PROVIDER_LOADED);
	ck_assert_int_eq(idm_get_provider_status(ctx, 1, &st), 0);
	ck_assert_int_eq(st.state, IDM_PROVIDER_SHADOWED);
	ck_assert_str_eq(st.path, FAKES_DIR "/second/libidm-fake.so");
	ck_assert_ptr_nonnull(strstr(st.reason, FAKES_DIR "/good/libidm-fake.so"));
	ck_assert_int_eq(st.error, -EEXIST);
	ck_assert_int_eq(idm_get_provider_status(ctx, 2, &st), 0);
	ck_assert_int_eq(st.state, IDM_PROVIDER_FILTERED);
	ck_assert_str_eq(st.name, "initfail");
	ck_assert_str_eq(st.reason, "not in IDM_PROVIDERS=fake");
	ck_assert_int_eq(idm_get_provider_status(ctx, 3, &st), -ENOENT);
	ck_assert_int_eq(idm_get_provider_status(ctx, (size_t)-1, &st), -ENOENT);
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(shorter_struct_gets_its_part)
{
	struct {
		struct idm_provider_status st;
		unsigned char guard[16];
	} b;
	idm_ctx *ctx;

	unit_use_providers("good", ALL_FAKES);
	ctx = unit_ctx();
	/* a caller that knows only up to `path` */
	memset(&b, 0xa5, sizeof(b));
	b.st.size = offsetof(struct idm_provider_status, description);
	ck_assert_int_eq(idm_get_provider_status(ctx, 0, &b.st), 0);
	ck_assert_uint_eq(b.st.size, offsetof(struct idm_provider_status, description));
	ck_assert_str_eq(b.st.name, "fake");
	ck_assert_int_eq(*(unsigned char *)&b.st.description, 0xa5);
	/* a caller built against a longer struct: only ours is written */
	memset(&b, 0xa5, sizeof(b));
	b.st.size = sizeof(b);
	ck_assert_int_eq(idm_get_provider_status(ctx, 0, &b.st), 0);
	ck_assert_uint_eq(b.st.size, sizeof(b.st));
	ck_assert_int_eq(b.guard[0], 0xa5);
	ck_assert_int_eq(idm_get_provider_status(NULL, 0, &b.st), -EINVAL);
	ck_assert_int_eq(idm_get_provider_status(ctx, 0, NULL), -EINVAL);
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(connect_names_the_skip_reason)
{
	struct idm_conn_attr attr = unit_conn_attr("initfail");
	/* accept is never called */
	struct idm_portal_attr pattr =
		unit_portal_attr("initfail", (idm_accept_fn)1);
	idm_conn *conn;
	idm_portal *p;
	idm_ctx *ctx;

	unit_use_providers("initfail:good", ALL_FAKES);
	ctx = unit_ctx();
	ck_assert_int_eq(idm_conn_connect(ctx, "127.0.0.1", "3260", &attr, &conn),
			 -ENODEV);
	ck_assert_ptr_null(conn);
	ck_assert_msg(strstr(idm_last_error(), "provider initfail not usable here: "
					       "no fake device here"),
		      "%s", idm_last_error());
	ck_assert_int_eq(idm_portal_create(ctx, "127.0.0.1", "0", &pattr, &p), -ENODEV);
	ck_assert_ptr_nonnull(strstr(idm_last_error(), "no fake device here"));

	/* a success clears it */
	attr.provider = "fake";
	ck_assert_int_eq(idm_conn_connect(ctx, "127.0.0.1", "3260", &attr, &conn), 0);
	ck_assert_str_eq(idm_last_error(), "");
	idm_conn_destroy(conn);

	/* no such file at all */
	attr.provider = "nosuch";
	ck_assert_int_eq(idm_conn_connect(ctx, "127.0.0.1", "3260", &attr, &conn),
			 -ENOENT);
	ck_assert_msg(strstr(idm_last_error(), "no provider \"nosuch\""), "%s",
		      idm_last_error());
	/* what to do about it comes before the directories searched, which
	 * a 255-byte detail may cut */
	ck_assert_msg(strstr(idm_last_error(), "(set IDM_PROVIDER_PATH to the directory "
					       "of libidm-nosuch.so); searched /"),
		      "%s", idm_last_error());
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(unresolvable_host_gives_resolver_message)
{
	struct idm_conn_attr attr = unit_conn_attr("fake");
	struct idm_portal_attr pattr =
		unit_portal_attr("fake", (idm_accept_fn)1);
	idm_conn *conn;
	idm_portal *p;
	idm_ctx *ctx;

	unit_use_providers("good", ALL_FAKES);
	ctx = unit_ctx();
	/* ".invalid" never resolves (RFC 6761), with or without a network */
	ck_assert_int_eq(idm_conn_connect(ctx, "no-such-host.invalid", "3260", &attr,
					  &conn),
			 -EHOSTUNREACH);
	ck_assert_msg(strstr(idm_last_error(), "cannot resolve no-such-host.invalid:3260: "),
		      "%s", idm_last_error());
	/* the resolver's words, not ours */
	ck_assert_msg(strlen(idm_last_error()) >
			      strlen("cannot resolve no-such-host.invalid:3260: "),
		      "%s", idm_last_error());
	ck_assert_int_eq(idm_portal_create(ctx, "no-such-host.invalid", "0", &pattr, &p),
			 -EADDRNOTAVAIL);
	ck_assert_ptr_nonnull(strstr(idm_last_error(), "cannot resolve no-such-host.invalid"));
	idm_ctx_destroy(ctx);
}
END_TEST

/* true if the kernel shows an RDMA device */
static bool host_has_rdma(void)
{
	DIR *d = opendir("/sys/class/infiniband");
	struct dirent *e;
	bool any = false;

	if (!d)
		return false;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			any = true;
	closedir(d);
	return any;
}

START_TEST(iser_without_rdma_device)
{
	struct idm_conn_attr attr = unit_conn_attr("iser");
	const struct idm_provider_info *list;
	struct idm_provider_status st;
	const char *name;
	char path[4096];
	idm_conn *conn;
	idm_ctx *ctx;
	size_t n;
	bool have_iser = false;

	if (host_has_rdma()) {
		fprintf(stderr, "SKIP iser_without_rdma_device: this host has an RDMA device\n");
		return;
	}
	snprintf(path, sizeof(path), "%s", PROVIDER_BUILD_PATH);
	setenv("IDM_PROVIDER_PATH", path, 1);
	unsetenv("IDM_PROVIDERS");
	ctx = unit_ctx();
	for (size_t i = 0;; i++) {
		st = (struct idm_provider_status){.size = sizeof(st)};
		if (idm_get_provider_status(ctx, i, &st) < 0)
			break;
		if (!strcmp(st.name, "iser")) {
			have_iser = true;
			break;
		}
	}
	if (!have_iser) {
		fprintf(stderr, "SKIP iser_without_rdma_device: iser provider not built\n");
		idm_ctx_destroy(ctx);
		return;
	}
	ck_assert_int_eq(st.state, IDM_PROVIDER_SKIPPED);
	ck_assert_int_eq(st.error, -ENODEV);
	ck_assert_str_eq(st.reason, "no RDMA device");
	/* and not listed as usable */
	ck_assert_int_eq(idm_get_providers(ctx, &list, &n), 0);
	for (size_t i = 0; i < n; i++)
		ck_assert_str_ne(list[i].name, "iser");
	ck_assert_int_eq(idm_conn_connect(ctx, "127.0.0.1", "3260", &attr, &conn),
			 -ENODEV);
	ck_assert_msg(strstr(idm_last_error(), "provider iser not usable here: no RDMA device"),
		      "%s", idm_last_error());
	/* an iser:// URL says the same: the loader kept the schemes iser's
	 * table declared before its init() failed */
	ck_assert_int_eq(idm_provider_for_scheme(ctx, "iser", &name), -ENODEV);
	ck_assert_ptr_null(name);
	ck_assert_msg(strstr(idm_last_error(), "provider iser not usable here: no RDMA device"),
		      "%s", idm_last_error());
	idm_ctx_destroy(ctx);
}
END_TEST

/* A URL scheme whose only provider was left out gets that provider's
 * reason, as a connect naming it would; an unknown scheme, -ENOENT. */
START_TEST(scheme_of_a_skipped_provider)
{
	const char *name = "x";
	idm_ctx *ctx;

	unit_use_providers("initfail", ALL_FAKES);
	ctx = unit_ctx();
	ck_assert_int_eq(idm_provider_for_scheme(ctx, "fake", &name), -ENODEV);
	ck_assert_ptr_null(name);
	ck_assert_msg(strstr(idm_last_error(), "provider initfail not usable here: "
					       "no fake device here"),
		      "%s", idm_last_error());
	ck_assert_int_eq(idm_provider_for_scheme(ctx, "nosuch", &name), -ENOENT);
	ck_assert_str_eq(idm_last_error(), "no provider serves URL scheme \"nosuch\"");
	idm_ctx_destroy(ctx);

	/* a loaded provider of the scheme wins, and clears the error */
	unit_use_providers("initfail:good", ALL_FAKES);
	ctx = unit_ctx();
	ck_assert_int_eq(idm_provider_for_scheme(ctx, "fake", &name), 0);
	ck_assert_str_eq(name, "fake");
	ck_assert_str_eq(idm_last_error(), "");
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(provider_dir_and_version)
{
	ck_assert_ptr_nonnull(idm_provider_dir());
	ck_assert_uint_gt(strlen(idm_provider_dir()), 0);
	ck_assert_int_eq(idm_provider_dir()[0], '/');
	ck_assert_ptr_nonnull(idm_last_error());
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { loaded_and_skipped_are_described,
				       shadowed_and_filtered,
				       shorter_struct_gets_its_part,
				       connect_names_the_skip_reason,
				       unresolvable_host_gives_resolver_message,
				       iser_without_rdma_device,
				       scheme_of_a_skipped_provider,
				       provider_dir_and_version,
				       NULL };

	return test_suite_run_case("status", "status", 0, tests);
}
