/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Where providers are looked for besides IDM_PROVIDER_PATH: the install
 * directory, and, for the copy of libidm in its own build tree only, the
 * provider directories of that build tree.
 *
 * Programs run from a build tree (build/tools/idm_info,
 * build/examples/target/idm-target) load build/lib/libidm.so.1 through
 * their build RUNPATH. They should find build/providers/<name>/ as they do
 * under `meson devenv`, with no environment variable. The build compiles
 * in two strings: the directory it puts libidm in (IDM_BUILD_LIBDIR, made
 * absolute and free of symbolic links by meson) and its provider
 * directories (IDM_BUILD_PROVIDER_PATH). libidm asks the dynamic loader
 * (dladdr()) which file it was loaded from. Only when that file's
 * directory is IDM_BUILD_LIBDIR are the build tree's provider directories
 * used, and then only in place of an unset IDM_PROVIDER_PATH, exactly what
 * `meson devenv` sets: an explicit IDM_PROVIDER_PATH (every test sets one)
 * means what it always meant.
 *
 * Why an installed libidm never searches a build tree, even one deleted
 * and re-created at the same path by someone else: the decision rests on
 * where this library's own file was loaded from, as the loader found it
 * through its own search (RUNPATH, ld.so.cache, LD_LIBRARY_PATH), with
 * that directory resolved by realpath(). The compiled-in build path is
 * only compared against; it is never opened or resolved, so a symbolic
 * link or a hard link planted at it cannot make an installed copy match.
 * For the two to match, the library file itself must lie in the build
 * directory, and whoever can write there can replace the library anyway:
 * its sibling provider directories add no trust. A setuid program
 * (AT_SECURE) never uses them, as it ignores IDM_PROVIDER_PATH.
 *
 * The installed library still carries the build path as a string; it
 * costs nothing but makes the binary depend on where it was built.
 */
#include "core.h"
#include "provider_dirs.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#ifndef IDM_PROVIDER_DIR
#define IDM_PROVIDER_DIR "/usr/local/lib/libidm-1"
#endif
#ifndef IDM_BUILD_LIBDIR
#define IDM_BUILD_LIBDIR ""
#endif
#ifndef IDM_BUILD_PROVIDER_PATH
#define IDM_BUILD_PROVIDER_PATH ""
#endif

/* an address inside this library's own mapping, for dladdr() */
static const char build_libdir[] = IDM_BUILD_LIBDIR;

static pthread_once_t build_once = PTHREAD_ONCE_INIT;
static const char *build_path; /* NULL: not the build tree's copy */

static void find_build_path(void)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *slash;
	Dl_info info;
	size_t n;

	if (!build_libdir[0] || !IDM_BUILD_PROVIDER_PATH[0] || getauxval(AT_SECURE))
		return;
	/* a relative name depends on the current directory, which may have
	 * changed since the library was loaded: not trusted */
	if (!dladdr(build_libdir, &info) || !info.dli_fname || info.dli_fname[0] != '/')
		return;
	slash = strrchr(info.dli_fname, '/');
	n = (size_t)(slash - info.dli_fname);
	if (n == 0 || n >= sizeof(dir))
		return;
	memcpy(dir, info.dli_fname, n);
	dir[n] = '\0';
	if (realpath(dir, real) && !strcmp(real, build_libdir))
		build_path = IDM_BUILD_PROVIDER_PATH;
}

const char *idmp_build_provider_path(void)
{
	pthread_once(&build_once, find_build_path);
	return build_path;
}

void idmp_provider_search(struct idmp_provider_search *s)
{
	const char *env = secure_getenv("IDM_PROVIDER_PATH");

	if (env && *env) {
		s->path = env;
		s->from = "IDM_PROVIDER_PATH";
	} else {
		s->path = idmp_build_provider_path();
		s->from = s->path ? "build tree" : NULL;
	}
	s->install_dir = IDM_PROVIDER_DIR;
}

void idmp_provider_search_describe(const struct idmp_provider_search *s, char *buf,
				   size_t len)
{
	if (s->path)
		snprintf(buf, len, "%s (%s), then %s (install directory)", s->path,
			 s->from, s->install_dir);
	else
		snprintf(buf, len, "%s (install directory; IDM_PROVIDER_PATH not set)",
			 s->install_dir);
}

IDM_API const char *idm_provider_build_path(void)
{
	return idmp_build_provider_path();
}

IDM_API const char *idm_provider_dir(void)
{
	return IDM_PROVIDER_DIR;
}
