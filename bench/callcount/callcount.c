// SPDX-License-Identifier: BSD-2-Clause
/*
 * An rtld-audit module (LD_AUDIT, rtld-audit(7)) that counts the calls a
 * provider module (libidm-*.so, loaded by libidm with dlopen) makes into
 * libidm, by symbol, and writes the counts when the process exits.
 *
 *   IDM_CALLCOUNT_OUT=calls.txt LD_AUDIT=build/bench/callcount/libidm-callcount.so prog
 *
 * libidm loads providers with RTLD_NOW, so la_pltenter never runs for
 * them: instead, la_symbind64 (called for every PLT binding, lazy or
 * not, since glibc 2.35) hands the provider the address of a counting
 * trampoline (callcount_tramp.S) that bumps the symbol's counter and
 * jumps to the real function with every register untouched, varargs
 * included. Calls that libidm makes to itself, and calls through
 * function pointers, are not counted: only what crosses from a provider
 * into the library.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CALLCOUNT_SLOTS 512

/* Shared with the trampolines: slot i counts into callcount_counts[i]
 * and jumps to callcount_targets[i]. */
__attribute__((visibility("hidden"))) unsigned long callcount_counts[CALLCOUNT_SLOTS];
__attribute__((visibility("hidden"))) uintptr_t callcount_targets[CALLCOUNT_SLOTS];
extern char callcount_tramps[] __attribute__((visibility("hidden")));
#define CALLCOUNT_TRAMP_SIZE 16

static const char *slot_names[CALLCOUNT_SLOTS];
static unsigned slots_used;

enum object_kind { OBJ_OTHER, OBJ_PROVIDER, OBJ_LIBIDM };

unsigned int la_version(unsigned int version)
{
	return version < LAV_CURRENT ? version : LAV_CURRENT;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* libidm itself is libidm.so.N; its provider modules are libidm-NAME.so. */
static enum object_kind kind_of(const char *path)
{
	const char *base = base_name(path);

	if (!strncmp(base, "libidm.so", 9))
		return OBJ_LIBIDM;
	if (!strncmp(base, "libidm-", 7) && strstr(base, ".so") &&
	    strncmp(base, "libidm-callcount", 16))
		return OBJ_PROVIDER;
	return OBJ_OTHER;
}

unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
	enum object_kind kind = kind_of(map->l_name);

	(void)lmid;
	*cookie = kind;
	if (kind == OBJ_PROVIDER)
		return LA_FLG_BINDFROM;
	if (kind == OBJ_LIBIDM)
		return LA_FLG_BINDTO;
	return 0;
}

/* The slot of a symbol: one per name, shared by all providers. Binding
 * runs under the loader's lock, so no other binding races this. */
static int slot_of(const char *name)
{
	for (unsigned i = 0; i < slots_used; i++)
		if (!strcmp(slot_names[i], name))
			return (int)i;
	if (slots_used == CALLCOUNT_SLOTS)
		return -1;
	slot_names[slots_used] = name;
	return (int)slots_used++;
}

uintptr_t la_symbind64(Elf64_Sym *sym, unsigned int ndx, uintptr_t *refcook,
		       uintptr_t *defcook, unsigned int *flags,
		       const char *symname)
{
	int slot;

	(void)ndx;
	*flags |= LA_SYMB_NOPLTENTER | LA_SYMB_NOPLTEXIT;
	if (*refcook != OBJ_PROVIDER || *defcook != OBJ_LIBIDM ||
	    ELF64_ST_TYPE(sym->st_info) != STT_FUNC)
		return sym->st_value;
	slot = slot_of(symname);
	if (slot < 0)
		return sym->st_value;
	callcount_targets[slot] = sym->st_value;
	return (uintptr_t)(callcount_tramps + slot * CALLCOUNT_TRAMP_SIZE);
}

/* "symbol count" lines, written to a temporary name first so that a
 * reader never sees half a file. */
static void write_counts(void)
{
	const char *out = getenv("IDM_CALLCOUNT_OUT");
	char tmp[4096];
	FILE *f;

	if (!out || !*out)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	f = fopen(tmp, "w");
	if (!f)
		return;
	for (unsigned i = 0; i < slots_used; i++)
		fprintf(f, "%s %lu\n", slot_names[i],
			__atomic_load_n(&callcount_counts[i], __ATOMIC_RELAXED));
	if (fclose(f) == 0)
		rename(tmp, out);
}

/* The provider is about to go (dlclose at context teardown) or the
 * process exits: either way its counts are final. */
unsigned int la_objclose(uintptr_t *cookie)
{
	if (*cookie == OBJ_PROVIDER || *cookie == OBJ_LIBIDM)
		write_counts();
	return 0;
}

__attribute__((destructor)) static void callcount_fini(void)
{
	write_counts();
}
