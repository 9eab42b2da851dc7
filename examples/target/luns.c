/* SPDX-License-Identifier: BSD-2-Clause */
/* LUN list of idm-target: start-up and SIGHUP reload. */
#include "target.h"
#include "luns.h"
#include "ex_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* LUNs removed by a reload while commands may still use them. */
static struct lun *retired[4 * TGT_MAX_LUNS];
static int nretired;

/* "N=SPEC" or "SPEC": the LUN number (or `next`) and the spec. */
static int split_spec(const char *arg, int next, int *id, const char **spec)
{
	const char *eq = strchr(arg, '=');

	*id = next;
	*spec = arg;
	if (eq && strncmp(arg, "ram:", 4) && strncmp(arg, "file:", 5)) {
		char *end;
		long v = strtol(arg, &end, 10);

		if (end != eq || end == arg || v < 0 || v > 16383) {
			ex_err("bad LUN number in '%s' (0 to 16383)", arg);
			return -1;
		}
		*id = (int)v;
		*spec = eq + 1;
	}
	return 0;
}

static bool same_spec(const struct lun *l, const char *spec)
{
	size_t n = strlen(spec);
	bool ro = n > 3 && !strcmp(spec + n - 3, ",ro");

	return ro == l->ro && strlen(l->spec) == (ro ? n - 3 : n) &&
	       !strncmp(l->spec, spec, ro ? n - 3 : n) && !l->ro_forced;
}

/* Open `specs` into `out`, reusing from `old` the LUNs that did not
 * change (those are removed from `old`). */
/* A LUN of the old list with this id and spec: taken out of `old` to be
 * kept as it is */
static struct lun *take_old(struct lun **old, int nold, int id, const char *spec)
{
	for (int j = 0; j < nold; j++)
		if (old[j] && old[j]->id == id && same_spec(old[j], spec)) {
			struct lun *l = old[j];

			old[j] = NULL;
			return l;
		}
	return NULL;
}

/* Open a LUN (and register its memory with this loop's context if
 * `attach`). NULL: it failed, said why. */
static struct lun *open_new(const char *spec, int id, uint32_t bs, bool attach)
{
	struct lun *l = NULL;
	char why[512];
	bool forced_ro;
	int r = lun_open_ex(spec, id, bs, &l, &forced_ro, why, sizeof(why));

	if (r < 0) {
		ex_err("LUN %d: %s", id, why);
		return NULL;
	}
	l->ro_forced = forced_ro;
	if (attach && (r = lun_attach_ctx(l, g_loop->ctx)) < 0) {
		ex_err("LUN %d: idm_buf_create: %s", id, idm_strerror(r));
		lun_close(l);
		return NULL;
	}
	if (forced_ro)
		ex_warn("LUN %d: %s is read-only for us: served write "
			"protected", id, l->spec + 5);
	return l;
}

static bool id_taken(struct lun *const *out, int cnt, int id)
{
	for (int j = 0; j < cnt; j++)
		if (out[j]->id == id) {
			ex_err("LUN %d given twice", id);
			return true;
		}
	return false;
}

static int build(char *const *specs, int n, uint32_t bs, struct lun **old, int nold,
		 struct lun **out, int *nout, bool attach)
{
	bool reused[TGT_MAX_LUNS] = { false };
	int cnt = 0;

	if (n > TGT_MAX_LUNS) {
		ex_err("too many LUNs (max %d)", TGT_MAX_LUNS);
		return -1;
	}
	for (int i = 0, next = 1; i < n; i++) {
		const char *spec;
		struct lun *l;
		int id;

		if (split_spec(specs[i], next, &id, &spec) < 0 || id_taken(out, cnt, id))
			goto fail;
		l = take_old(old, nold, id, spec);
		reused[cnt] = l != NULL;
		if (!l && !(l = open_new(spec, id, bs, attach)))
			goto fail;
		out[cnt++] = l;
		next = id + 1;
	}
	*nout = cnt;
	return 0;
fail:
	/* close the LUNs opened here; reused ones belong to the caller,
	 * whose list is unchanged */
	for (int j = 0; j < cnt; j++)
		if (!reused[j])
			lun_close(out[j]);
	return -1;
}

static void log_lun(const struct lun *l, const char *what)
{
	ex_info("LUN %d%s: %s, %llu blocks of %u bytes%s", l->id, what, l->spec,
		(unsigned long long)l->nblocks, l->bs, l->ro ? ", write protected" : "");
}

int luns_open_all(char *const *specs, int n, uint32_t bs)
{
	if (build(specs, n, bs, NULL, 0, g_tgt.luns, &g_tgt.nluns, false) < 0)
		return -1;
	return 0;
}

int luns_reload(char *const *specs, int n, uint32_t bs)
{
	struct lun *old[TGT_MAX_LUNS], *nl[TGT_MAX_LUNS];
	int nold = g_tgt.nluns, nnew = 0, kept = 0;

	luns_reap();
	/* one reload retires at most TGT_MAX_LUNS: keep room for it */
	if (nretired > 3 * TGT_MAX_LUNS) {
		ex_err("reload refused: %d removed LUNs still have commands in flight",
		       nretired);
		return -1;
	}
	memcpy(old, g_tgt.luns, sizeof(old[0]) * (size_t)nold);
	/* build() takes the reused entries out of `old` (a copy): what is
	 * left afterwards was removed */
	if (build(specs, n, bs, old, nold, nl, &nnew, true) < 0) {
		ex_err("reload failed: LUN list unchanged");
		return -1;
	}
	for (int i = 0; i < nold; i++) {
		if (!old[i]) {
			kept++;
			continue;
		}
		ex_info("LUN %d removed: %s", old[i]->id, old[i]->spec);
		/* session.c / tmf.c state that points at it is per LUN
		 * object, so nothing else refers to it once retired */
		retired[nretired++] = old[i];
	}
	for (int i = 0; i < nnew; i++) {
		bool was = false;

		for (int j = 0; j < nold; j++)
			if (g_tgt.luns[j] == nl[i])
				was = true;
		if (!was)
			log_lun(nl[i], " added");
	}
	memcpy(g_tgt.luns, nl, sizeof(nl[0]) * (size_t)nnew);
	g_tgt.nluns = nnew;
	ex_info("reload: %d LUNs (%d unchanged)", nnew, kept);
	luns_reap();
	return 0;
}

static bool lun_in_use(const struct lun *l)
{
	for (struct tconn *c = g_loop->conns; c; c = c->next)
		for (struct ttask *t = c->tasks; t; t = t->cnext)
			if (t->state != TS_QUEUED && t->sc.lun == l) /* started */
				return true;
	/* calls in flight, from any loop, also of tasks whose connection
	 * has ended */
	return lun_busy(l);
}

bool luns_retired(void)
{
	return nretired != 0;
}

void luns_reap(void)
{
	for (int i = 0; i < nretired;) {
		if (lun_in_use(retired[i])) {
			i++;
			continue;
		}
		ex_dbg("LUN %d closed", retired[i]->id);
		lun_close(retired[i]);
		retired[i] = retired[--nretired];
	}
}

void luns_close_all(void)
{
	for (int i = 0; i < nretired; i++)
		lun_close(retired[i]);
	nretired = 0;
	for (int i = 0; i < g_tgt.nluns; i++)
		lun_close(g_tgt.luns[i]);
	g_tgt.nluns = 0;
}
