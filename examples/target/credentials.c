/* SPDX-License-Identifier: BSD-2-Clause */
/* The credentials file of idm-target: see credentials.h. */
#include "credentials.h"
#include "config.h"
#include "target.h"
#include "ex_chap.h"
#include "ex_log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* "USER:SECRET" split in place into *user, *secret. The messages never
 * quote `arg`: it holds the secret. */
static int split_cred(char *arg, const char *where, const char *name, const char **user,
		      const char **secret)
{
	char *colon = strchr(arg, ':');

	if (!colon || colon == arg || !colon[1]) {
		ex_err("%s: %s needs USER:SECRET", where, name);
		return -1;
	}
	*colon = '\0';
	if (strlen(colon + 1) > EX_CHAP_SECRET_MAX || strlen(arg) > 255) {
		ex_err("%s: %s: the user name may have 255 bytes, the secret %d",
		       where, name, EX_CHAP_SECRET_MAX);
		return -1;
	}
	*user = arg;
	*secret = colon + 1;
	return 0;
}

int credentials_set_chap(char *arg, const char *where)
{
	return split_cred(arg, where, "chap", &g_tgt.chap_user, &g_tgt.chap_secret);
}

/* "initiator-chap = IQN USER:SECRET" */
static int set_initiator_chap(char *value, const char *where)
{
	struct tgt_chap_cred *cr;
	char *sp = strpbrk(value, " \t");

	if (!sp || sp == value) {
		ex_err("%s: initiator-chap needs INITIATOR-NAME USER:SECRET", where);
		return -1;
	}
	*sp++ = '\0';
	while (*sp == ' ' || *sp == '\t')
		sp++;
	for (int i = 0; i < g_tgt.nchap_initiators; i++)
		if (!strcmp(g_tgt.chap_initiators[i].iname, value)) {
			ex_err("%s: a second initiator-chap for %s", where, value);
			return -1;
		}
	if (g_tgt.nchap_initiators == TGT_MAX_CHAP_INITIATORS) {
		ex_err("%s: too many initiator-chap lines (max %d)", where,
		       TGT_MAX_CHAP_INITIATORS);
		return -1;
	}
	cr = &g_tgt.chap_initiators[g_tgt.nchap_initiators];
	if (split_cred(sp, where, "initiator-chap", &cr->user, &cr->secret) < 0)
		return -1;
	cr->iname = value;
	g_tgt.nchap_initiators++;
	return 0;
}

/* One line of the file. Only secrets belong here: the other settings go
 * to the config file, which anyone may read. */
static int credentials_setting(const char *name, char *value, const char *where, void *arg)
{
	(void)arg;
	if (!strcmp(name, "chap"))
		return credentials_set_chap(value, where);
	if (!strcmp(name, "initiator-chap"))
		return set_initiator_chap(value, where);
	if (!strcmp(name, "mutual-chap"))
		return split_cred(value, where, name, &g_tgt.mutual_user, &g_tgt.mutual_secret);
	if (!strcmp(name, "discovery-chap"))
		return split_cred(value, where, name, &g_tgt.disc_user, &g_tgt.disc_secret);
	ex_err("%s: unknown setting '%s' (a credentials file holds: chap, "
	       "initiator-chap, mutual-chap, discovery-chap)", where, name);
	return -1;
}

int credentials_check(void)
{
	const char *ms = g_tgt.mutual_secret;
	bool same = false;

	/* RFC 7143 12.1.3: a secret that authenticates initiators must not
	 * authenticate the target, or a man in the middle reflects it */
	if (!ms)
		return 0;
	same = (g_tgt.chap_secret && !strcmp(ms, g_tgt.chap_secret)) ||
	       (g_tgt.disc_secret && !strcmp(ms, g_tgt.disc_secret));
	for (int i = 0; i < g_tgt.nchap_initiators; i++)
		same |= !strcmp(ms, g_tgt.chap_initiators[i].secret);
	if (same) {
		ex_err("credentials: the mutual-chap secret is also an initiator's: "
		       "the target must prove itself with a secret of its own");
		return -1;
	}
	return 0;
}

int credentials_load(const char *path)
{
	return config_load_private(path, "credentials file", credentials_setting, NULL);
}

int credentials_load_systemd(void)
{
	const char *dir = getenv("CREDENTIALS_DIRECTORY");
	char path[4096];
	int r;

	if (!dir || !*dir)
		return 0;
	r = snprintf(path, sizeof(path), "%s/%s", dir, CREDENTIALS_NAME);
	if (r < 0 || (size_t)r >= sizeof(path)) {
		ex_err("CREDENTIALS_DIRECTORY is too long");
		return -1;
	}
	/* LoadCredential= skips a credential it does not find: no file,
	 * no CHAP, the same as without systemd */
	if (access(path, F_OK) < 0 && errno == ENOENT)
		return 0;
	if (credentials_load(path) < 0)
		return -1;
	ex_info("credentials: read %s (systemd credential %s)", path, CREDENTIALS_NAME);
	return 0;
}
