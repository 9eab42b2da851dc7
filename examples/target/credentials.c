/* SPDX-License-Identifier: BSD-2-Clause */
/* The credentials file of idm-target: see credentials.h. */
#include "credentials.h"
#include "config.h"
#include "target.h"
#include "ex_log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int credentials_set_chap(char *arg, const char *where)
{
	char *colon = strchr(arg, ':');

	/* the message never quotes `arg`: it holds the secret */
	if (!colon || colon == arg || !colon[1]) {
		ex_err("%s: chap needs USER:SECRET", where);
		return -1;
	}
	*colon = '\0';
	g_tgt.chap_user = arg;
	g_tgt.chap_secret = colon + 1;
	return 0;
}

/* One line of the file. Only secrets belong here: the other settings go
 * to the config file, which anyone may read. */
static int credentials_setting(const char *name, char *value, const char *where, void *arg)
{
	(void)arg;
	if (!strcmp(name, "chap"))
		return credentials_set_chap(value, where);
	ex_err("%s: unknown setting '%s' (a credentials file holds: chap)", where, name);
	return -1;
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
