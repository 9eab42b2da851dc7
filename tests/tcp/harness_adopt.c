/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Harness sides on sockets the test set up itself: the test accepts or
 * connects, maybe logs in over the raw socket, and hands the socket to
 * libidm with idm_conn_adopt_fd() / idm_conn_adopt_fd_ffp(). From there
 * the harness's own callbacks run the side as if libidm had accepted or
 * connected it.
 */
#include "harness.h"
#include "harness_priv.h"

#include <errno.h>
#include <string.h>

static int adopt(struct h *h, enum idm_role role, int fd, bool ffp,
		 idm_conn **out)
{
	struct idm_conn_attr ca = {
		.size = sizeof(ca),
		.provider = "tcp",
		.cbs = role == IDM_ROLE_TARGET ? &h_t_cbs : &h_i_cbs,
		.arg = h,
	};
	char nk[512];
	size_t nlen = ffp ? h_notice_keys(&h->tneg, nk, sizeof(nk)) : 0;
	int rc;

	if (ffp)
		rc = idm_conn_adopt_fd_ffp(h->ctx, fd, role, &ca, nk, nlen, out);
	else
		rc = idm_conn_adopt_fd(h->ctx, fd, role, &ca, out);
	if (rc < 0)
		h_set_err(h, "idm_conn_adopt_fd%s(%s): %s", ffp ? "_ffp" : "",
			  role == IDM_ROLE_TARGET ? "target" : "initiator",
			  idm_strerror(rc));
	return rc;
}

int h_adopt_target(struct h *h, int fd)
{
	return adopt(h, IDM_ROLE_TARGET, fd, false, &h->t.conn);
}

int h_adopt_initiator(struct h *h, const struct h_params *p, int fd)
{
	int rc;

	h->p = *p;
	rc = adopt(h, IDM_ROLE_INITIATOR, fd, false, &h->i.conn);
	if (rc < 0)
		return rc;
	/* connected already: no `connected` callback comes, log in now */
	h->connected = true;
	h_ini_send_login(h, h->i.conn);
	return h->login_failed ? -EPROTO : 0;
}

int h_adopt_ffp(struct h *h, enum idm_role role, int fd)
{
	bool tgt = role == IDM_ROLE_TARGET;
	int rc = adopt(h, role, fd, true, tgt ? &h->t.conn : &h->i.conn);

	if (rc < 0)
		return rc;
	if (tgt) {
		h->t.ffp = true;
	} else {
		h->connected = true;
		h->ineg = h->tneg;
		h->i.ffp = true;
	}
	return 0;
}
