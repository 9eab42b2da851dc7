/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Provider loading: a good module loads; a module of the wrong ABI, with a
 * mandatory op missing, without the entry symbol, with a short ops table,
 * calling itself by another name, or whose init fails is refused with a
 * logged reason and does not stop the others; missing files and
 * directories are harmless; IDM_PROVIDERS filters; the first directory in
 * the search path wins.
 */
#include "unit.h"

#include <dlfcn.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Every fake; the filter keeps installed providers out of the picture. */
#define ALL_FAKES "fake,badabi,noop,noentry,small,misname,other,initfail,ghost,oldentry,oldnode"

static size_t load(idm_ctx *ctx, const struct idm_provider_info **list)
{
	size_t n = 99;

	ck_assert_int_eq(idm_get_providers(ctx, list, &n), 0);
	ck_assert_uint_le(n, 8);
	return n;
}

static const struct idm_provider_info *find(const struct idm_provider_info *list,
					    size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(list[i].name, name))
			return &list[i];
	return NULL;
}

START_TEST(good_provider_loads)
{
	const struct idm_provider_info *list, *p;
	idm_ctx *ctx;
	size_t n;

	unit_use_providers("good", ALL_FAKES);
	ctx = unit_ctx();
	n = load(ctx, &list);
	ck_assert_uint_eq(n, 1);
	p = find(list, n, "fake");
	ck_assert_ptr_nonnull(p);
	ck_assert_str_eq(p->description, "fake provider for the unit tests");
	ck_assert_uint_eq(p->abi_version, IDM_PROV_ABI);
	ck_assert(p->caps & IDM_CAP_INITIATOR);
	ck_assert(p->caps & IDM_CAP_TARGET);
	ck_assert_str_eq(p->path, FAKES_DIR "/good/libidm-fake.so");
	ck_assert_int_eq(unit_fake_stats()->init, 1);
	/* asking again returns the same list and loads nothing twice */
	ck_assert_uint_eq(load(ctx, &list), 1);
	ck_assert_int_eq(unit_fake_stats()->init, 1);
	idm_ctx_destroy(ctx);
}
END_TEST

static void refused(const char *dir, const char *why)
{
	const struct idm_provider_info *list;
	idm_ctx *ctx;

	unit_use_providers(dir, ALL_FAKES);
	ctx = unit_ctx();
	ck_assert_uint_eq(load(ctx, &list), 0);
	ck_assert_msg(unit_log_has(why), "log lacks \"%s\":\n%s", why, unit_log());
	idm_ctx_destroy(ctx);
}

START_TEST(loading_is_lazy)
{
	const struct idm_provider_info *list;
	idm_ctx *ctx;

	unit_use_providers("good", ALL_FAKES);
	ctx = unit_ctx();
	/* creating a context opens no module */
	ck_assert_ptr_null(dlopen(FAKES_DIR "/good/libidm-fake.so", RTLD_NOW | RTLD_NOLOAD));
	ck_assert_uint_eq(load(ctx, &list), 1);
	ck_assert_int_eq(unit_fake_stats()->init, 1);
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(wrong_abi_refused)
{
	char why[64];

	/* the bad fake declares the ABI after libidm's */
	snprintf(why, sizeof(why), "ABI %d, libidm needs %d", IDM_PROV_ABI + 1,
		 IDM_PROV_ABI);
	refused("badabi", why);
}
END_TEST

START_TEST(missing_op_refused)
{
	refused("noop", "mandatory op put_data missing");
}
END_TEST

START_TEST(missing_entry_refused)
{
	refused("noentry", "no " IDM_PROV_ENTRY_NAME " symbol: not a libidm provider");
}
END_TEST

/* Built against the previous IDM_PROV_ABI: refused whichever way the
 * mismatch shows, with the ABI it was built for and what to do. */
static void old_sdk_refused(const char *dir)
{
	char why[128];

	snprintf(why, sizeof(why), "built for provider ABI %d, this libidm has provider "
		 "ABI %d: rebuild it against this libidm", IDM_PROV_ABI - 1, IDM_PROV_ABI);
	refused(dir, why);
}

START_TEST(old_sdk_entry_refused)
{
	old_sdk_refused("oldentry");
}
END_TEST

START_TEST(old_sdk_node_refused)
{
	old_sdk_refused("oldnode");
}
END_TEST

START_TEST(short_ops_refused)
{
	refused("small", "ops table of");
}
END_TEST

/* A provider built against the first IDM_PROV_ABI 2 SDK, whose table
 * ends before the optional ops added later, loads; those ops read NULL. */
START_TEST(older_sdk_table_loads)
{
	const struct idm_provider_info *list;
	struct idm_conn_stats st = { .size = sizeof(st) };
	idm_conn *conn;
	struct idm_conn_attr attr = { .size = sizeof(attr), .provider = "older",
				     .cbs = &unit_cbs };
	idm_ctx *ctx;

	unit_use_providers("older", "older");
	ctx = unit_ctx();
	ck_assert_uint_eq(load(ctx, &list), 1);
	ck_assert_str_eq(list[0].name, "older");
	ck_assert_int_eq(idm_conn_connect(ctx, "127.0.0.1", "3260", &attr, &conn), 0);
	ck_assert_int_eq(idm_conn_get_stats(conn, &st), 0);
	ck_assert_uint_eq(st.sendq_entries, 0); /* no conn_stats op */
	idm_conn_destroy(conn);
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(misnamed_refused)
{
	refused("misname", "calls itself \"other\"");
}
END_TEST

START_TEST(init_failure_left_out)
{
	refused("initfail", "not usable here");
}
END_TEST

START_TEST(missing_directory_harmless)
{
	const struct idm_provider_info *list;
	idm_ctx *ctx;

	unit_use_providers("/nonexistent/libidm-test:good:/also/missing", ALL_FAKES);
	ctx = unit_ctx();
	ck_assert_uint_eq(load(ctx, &list), 1);
	ck_assert_str_eq(list[0].name, "fake");
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(not_a_module_refused)
{
	char dir[] = "/tmp/libidm-unit-XXXXXX";
	char path[64], dirs[64], ghost[64];
	const struct idm_provider_info *list;
	idm_ctx *ctx;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/libidm-fake.so", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("not an ELF file\n", f);
	fclose(f);
	/* and a provider file that is missing: a dangling symlink */
	snprintf(ghost, sizeof(ghost), "%s/libidm-ghost.so", dir);
	ck_assert_int_eq(symlink("/nonexistent/libidm-ghost.so", ghost), 0);
	/* the broken file comes first, the good one after it still loads */
	snprintf(dirs, sizeof(dirs), "%s:good", dir);
	unit_use_providers(dirs, ALL_FAKES);
	ctx = unit_ctx();
	ck_assert_uint_eq(load(ctx, &list), 1);
	ck_assert_str_eq(list[0].path, FAKES_DIR "/good/libidm-fake.so");
	ck_assert_msg(unit_log_has(path), "no log line for %s:\n%s", path, unit_log());
	ck_assert_msg(unit_log_has(ghost), "no log line for %s:\n%s", ghost, unit_log());
	idm_ctx_destroy(ctx);
	unlink(ghost);
	unlink(path);
	rmdir(dir);
}
END_TEST

START_TEST(all_bad_ones_do_not_stop_the_good_one)
{
	const struct idm_provider_info *list;
	idm_ctx *ctx;

	unit_use_providers("badabi:noop:noentry:small:misname:initfail:good", ALL_FAKES);
	ctx = unit_ctx();
	ck_assert_uint_eq(load(ctx, &list), 1);
	ck_assert_str_eq(list[0].name, "fake");
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(filter_selects)
{
	const struct idm_provider_info *list;
	idm_ctx *ctx;

	/* filter names a provider absent from the path: nothing loads */
	unit_use_providers("good", "tcp");
	ctx = unit_ctx();
	ck_assert_uint_eq(load(ctx, &list), 0);
	ck_assert(unit_log_has("no provider found"));
	/* the way out, and where it looked: the variable's directories */
	ck_assert(unit_log_has("set IDM_PROVIDER_PATH"));
	ck_assert(unit_log_has("(IDM_PROVIDER_PATH), then "));
	idm_ctx_destroy(ctx);

	/* a list: a name in it loads */
	unit_use_providers("good", "iser,fake");
	ctx = unit_ctx();
	ck_assert_uint_eq(load(ctx, &list), 1);
	idm_ctx_destroy(ctx);

	/* prefixes do not match */
	unit_use_providers("good", "fak,fakes");
	ctx = unit_ctx();
	ck_assert_uint_eq(load(ctx, &list), 0);
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(filter_with_real_providers)
{
	const struct idm_provider_info *list;
	idm_ctx *ctx;
	char path[4096];
	size_t n;

	/* the real tcp provider from the build tree next to the fake */
	snprintf(path, sizeof(path), "%s:%s", PROVIDER_BUILD_PATH, FAKES_DIR "/good");
	setenv("IDM_PROVIDER_PATH", path, 1);
	setenv("IDM_PROVIDERS", "tcp", 1);
	ctx = unit_ctx();
	n = load(ctx, &list);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(list[0].name, "tcp");
	ck_assert(list[0].caps & IDM_CAP_INITIATOR);
	ck_assert(list[0].caps & IDM_CAP_TARGET);
	idm_ctx_destroy(ctx);

	setenv("IDM_PROVIDERS", "tcp,fake", 1);
	ctx = unit_ctx();
	n = load(ctx, &list);
	ck_assert_uint_eq(n, 2);
	ck_assert_ptr_nonnull(find(list, n, "tcp"));
	ck_assert_ptr_nonnull(find(list, n, "fake"));
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(first_directory_wins)
{
	const struct idm_provider_info *list;
	idm_ctx *ctx;

	unit_use_providers("second:good", ALL_FAKES);
	ctx = unit_ctx();
	ck_assert_uint_eq(load(ctx, &list), 1);
	ck_assert_str_eq(list[0].description, "second fake");
	idm_ctx_destroy(ctx);

	unit_use_providers("good:second", ALL_FAKES);
	ctx = unit_ctx();
	ck_assert_uint_eq(load(ctx, &list), 1);
	ck_assert_str_eq(list[0].description, "fake provider for the unit tests");
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(unknown_provider_by_name)
{
	struct idm_conn_attr attr = unit_conn_attr("nosuch");
	idm_conn *conn = (idm_conn *)&attr;
	idm_ctx *ctx;

	unit_use_providers("good", ALL_FAKES);
	ctx = unit_ctx();
	ck_assert_int_eq(idm_conn_connect(ctx, "127.0.0.1", "3260", &attr, &conn), -ENOENT);
	ck_assert_ptr_null(conn);
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(contexts_are_independent)
{
	const struct idm_provider_info *list;
	idm_ctx *a, *b;

	unit_use_providers("good", ALL_FAKES);
	a = unit_ctx();
	b = unit_ctx();
	ck_assert_uint_eq(load(a, &list), 1);
	ck_assert_uint_eq(load(b, &list), 1);
	idm_ctx_destroy(a);
	/* b still works after a unloaded its copy */
	ck_assert_uint_eq(load(b, &list), 1);
	ck_assert_str_eq(list[0].name, "fake");
	idm_ctx_destroy(b);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = {
		good_provider_loads,	  loading_is_lazy,
		wrong_abi_refused,	  missing_op_refused,
		missing_entry_refused,	  old_sdk_entry_refused,
		old_sdk_node_refused,	  short_ops_refused,
		older_sdk_table_loads,	  misnamed_refused,
		init_failure_left_out,	  missing_directory_harmless,
		not_a_module_refused,	  all_bad_ones_do_not_stop_the_good_one,
		filter_selects,		  filter_with_real_providers,
		first_directory_wins,	  unknown_provider_by_name,
		contexts_are_independent, NULL
	};

	return test_suite_run_case("loader", "loader", 0, tests);
}
