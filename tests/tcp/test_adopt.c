/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Sockets the caller set up itself. idm_conn_adopt_fd() refuses what is
 * not a connected TCP socket and leaves a refused descriptor as it was;
 * a connection the test accepted or connected itself and handed over at
 * login start logs in and moves verified data, on either side; so does
 * one handed over in full feature phase after the test logged in over
 * the raw socket (with digests, which must carry over through the keys);
 * and a portal on a listening socket the test bound
 * (idm_portal_create_fd(), as under systemd socket activation) serves a
 * login and I/O.
 */
#include "harness.h"
#include "harness_priv.h"
#include "raw_peer.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define SLOT (1u << 20)

static const struct h_io ios[] = {
	{ false, 1 },     { true, 1 },       { true, 65537 }, { false, 65537 },
	{ true, 262144 }, { false, 262144 }, { true, SLOT },  { false, SLOT },
};
#define N_IOS (sizeof(ios) / sizeof(ios[0]))

static void run_io(struct h *h)
{
	int rc = h_run_io(h, ios, N_IOS, 4, 30000);

	h_assert_io_clean(h, rc);
}

/* ---- refusals ------------------------------------------------------ */

static struct idm_conn_attr attr_of(struct h *h, const char *provider)
{
	struct idm_conn_attr ca = {
		.size = sizeof(ca),
		.provider = provider,
		.cbs = &h_t_cbs,
		.arg = h,
	};
	return ca;
}

/* adopt fd and expect err; fd must come back open with its flags. */
static void refused(struct h *h, int fd, const char *provider, int err,
		    const char *what)
{
	struct idm_conn_attr ca = attr_of(h, provider);
	int fl = fcntl(fd, F_GETFL), fdfl = fcntl(fd, F_GETFD);
	idm_conn *c = (idm_conn *)&ca;
	int rc = idm_conn_adopt_fd(h->ctx, fd, IDM_ROLE_TARGET, &ca, &c);

	ck_assert_msg(rc == err, "%s: %d (%s), expected %d", what, rc,
		      idm_strerror(rc), err);
	ck_assert_msg(c == NULL, "%s: *out not cleared", what);
	ck_assert_msg(fcntl(fd, F_GETFL) == fl && fcntl(fd, F_GETFD) == fdfl,
		      "%s: the descriptor's flags changed", what);
}

static int tcp_socket(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_int_ge(fd, 0);
	return fd;
}

static int connect_to(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int fd = tcp_socket();

	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_msg(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0,
		      "connect: %s", strerror(errno));
	return fd;
}

START_TEST(test_refusals)
{
	struct h h;
	struct idm_conn_attr ca;
	struct idm_portal_attr pa = { .size = sizeof(pa),
				      .accept = h_target_accept };
	idm_conn *c = NULL;
	idm_portal *pt = NULL;
	int pfd[2], sp[2], fd, lfd, port = 0, closed_fd;

	ck_assert_msg(h_init(&h, 4096, 1) == 0, "h_init: %s", h.err);
	ca = attr_of(&h, "tcp");
	pa.arg = &h;

	ck_assert_int_eq(pipe(pfd), 0);
	refused(&h, pfd[0], "tcp", -ENOTSOCK, "a pipe");
	close(pfd[0]);
	close(pfd[1]);

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	refused(&h, fd, "tcp", -EINVAL, "a UDP socket");
	close(fd);

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	refused(&h, sp[0], "tcp", -EAFNOSUPPORT, "a UNIX-domain socket");
	close(sp[0]);
	close(sp[1]);

	fd = tcp_socket();
	refused(&h, fd, "tcp", -ENOTCONN, "an unconnected TCP socket");
	ck_assert_int_eq(idm_portal_create_fd(h.ctx, fd, &pa, &pt), -EINVAL);
	close(fd);

	lfd = h_raw_listen(&port);
	ck_assert_int_ge(lfd, 0);
	refused(&h, lfd, "tcp", -EINVAL, "a listening socket");

	closed_fd = dup(lfd);
	close(closed_fd);
	refused(&h, closed_fd, "tcp", -EBADF, "a closed descriptor");
	ck_assert_int_eq(idm_conn_adopt_fd(h.ctx, -1, IDM_ROLE_TARGET, &ca, &c),
			 -EBADF);

	/* a connected socket, refused for other reasons */
	fd = connect_to(h.port);
	ck_assert_int_eq(idm_portal_create_fd(h.ctx, fd, &pa, &pt), -EINVAL);
	ck_assert_ptr_null(pt);
	ck_assert_int_eq(idm_conn_adopt_fd(h.ctx, fd, (enum idm_role)0, &ca, &c),
			 -EINVAL);
	ck_assert_int_eq(idm_conn_adopt_fd(h.ctx, fd, IDM_ROLE_TARGET, NULL, &c),
			 -EINVAL);
	refused(&h, fd, "no-such-provider", -ENOENT, "an unknown provider");
	{
		/* a bad key value fails before libidm takes the socket */
		static const char bad[] = "MaxBurstLength=banana";
		int fl = fcntl(fd, F_GETFL);

		ck_assert_int_eq(idm_conn_adopt_fd_ffp(h.ctx, fd, IDM_ROLE_TARGET,
						       &ca, bad, sizeof(bad), &c),
				 -EINVAL);
		ck_assert_ptr_null(c);
		ck_assert_int_eq(fcntl(fd, F_GETFL), fl);
	}
	/* accepted by the harness portal meanwhile: let it go */
	close(fd);
	h_progress_for(&h, 50);
	close(lfd);
	h_fini(&h);
}
END_TEST

/* ---- adopted at login start ---------------------------------------- */

/* The test listens and accepts itself; the libidm target takes the
 * accepted socket and the harness initiator logs in through it. */
START_TEST(test_target_login)
{
	struct h h;
	struct h_params p;
	struct h_raw r = { .fd = -1 };
	int lfd, port = 0, rc;

	h_params_default(&p);
	p.header_digest = true;
	ck_assert_msg(h_init(&h, SLOT, 4) == 0, "h_init: %s", h.err);
	lfd = h_raw_listen(&port);
	ck_assert_int_ge(lfd, 0);
	ck_assert_msg(h_connect_start(&h, &p, port, 5000) == 0, "%s", h.err);
	rc = h_raw_accept(&h, lfd, &r, 5000);
	close(lfd);
	ck_assert_msg(rc == 0, "accept: %d", rc);
	/* a receive low-water mark of the caller's own: the provider, which
	 * sets the mark while a large payload comes, must know it is there
	 * and set it back before waiting for a header, or never wake */
	ck_assert_int_eq(setsockopt(r.fd, SOL_SOCKET, SO_RCVLOWAT,
				    &(int){ 1 << 20 }, sizeof(int)), 0);
	ck_assert_msg(h_adopt_target(&h, r.fd) == 0, "%s", h.err);
	ck_assert_str_eq(idm_conn_provider(h.t.conn), "tcp");
	ck_assert_int_eq(idm_conn_role(h.t.conn), IDM_ROLE_TARGET);
	ck_assert_msg(strstr(idm_conn_peer_name(h.t.conn), "127.0.0.1:") != NULL,
		      "peer name %s", idm_conn_peer_name(h.t.conn));
	ck_assert_msg((fcntl(r.fd, F_GETFL) & O_NONBLOCK) &&
			      (fcntl(r.fd, F_GETFD) & FD_CLOEXEC),
		      "O_NONBLOCK and FD_CLOEXEC not set");
	r.fd = -1; /* libidm's now */
	rc = h_login_wait(&h, 5000);
	ck_assert_msg(rc == 0, "login: %s", h.err);
	run_io(&h);
	h_fini(&h); /* also: the adopted socket was closed */
}
END_TEST

/* The test connects itself; the libidm initiator takes the socket and
 * logs in to the harness target. */
START_TEST(test_initiator_login)
{
	struct h h;
	struct h_params p;
	int fd;

	h_params_default(&p);
	p.data_digest = true;
	p.immediate_data = true;
	p.initial_r2t = false;
	ck_assert_msg(h_init(&h, SLOT, 4) == 0, "h_init: %s", h.err);
	fd = connect_to(h.port);
	ck_assert_msg(h_adopt_initiator(&h, &p, fd) == 0, "%s", h.err);
	ck_assert_int_eq(idm_conn_role(h.i.conn), IDM_ROLE_INITIATOR);
	ck_assert_msg(h_login_wait(&h, 5000) == 0, "login: %s", h.err);
	run_io(&h);
	h_fini(&h);
}
END_TEST

/* ---- adopted in full feature phase --------------------------------- */

/* The test logs in as the initiator over the raw socket, then hands it
 * over: libidm sends the commands and moves the data from there. */
START_TEST(test_initiator_ffp)
{
	struct h h;
	struct h_params p;
	struct h_raw r = { .fd = -1 };
	int rc;

	h_params_default(&p);
	p.header_digest = p.data_digest = true;
	p.ini_mrdsl = 16384;
	p.max_burst = 131072;
	p.first_burst = 65536;
	ck_assert_msg(h_init(&h, SLOT, 4) == 0, "h_init: %s", h.err);
	h.p = p;
	rc = h_raw_connect(&h, &r);
	ck_assert_msg(rc == 0, "raw connect: %d", rc);
	rc = h_raw_login_initiator(&h, &r, &p);
	ck_assert_msg(rc == 0, "raw login: %d (%s)", rc, h.err);
	rc = h_progress_until(&h, h_target_in_ffp, 3000);
	ck_assert_msg(rc == 0 && h.t.ffp, "target not in full feature phase");
	/* the sequence state is the caller's: carry it over */
	h.cmdsn = r.cmdsn;
	h.exp_statsn = r.statsn + 1;
	ck_assert_msg(h_adopt_ffp(&h, IDM_ROLE_INITIATOR, r.fd) == 0, "%s", h.err);
	r.fd = -1;
	run_io(&h);
	h_fini(&h);
}
END_TEST

/* The test answers the libidm initiator's login on the raw socket, then
 * hands the socket to a libidm target in full feature phase. */
START_TEST(test_target_ffp)
{
	struct h h;
	struct h_params p;
	struct h_raw r = { .fd = -1 };
	int lfd, port = 0, rc;

	h_params_default(&p);
	p.header_digest = p.data_digest = true;
	p.tgt_mrdsl = 32768;
	ck_assert_msg(h_init(&h, SLOT, 4) == 0, "h_init: %s", h.err);
	lfd = h_raw_listen(&port);
	ck_assert_int_ge(lfd, 0);
	ck_assert_msg(h_connect_start(&h, &p, port, 5000) == 0, "%s", h.err);
	rc = h_raw_accept(&h, lfd, &r, 5000);
	close(lfd);
	ck_assert_msg(rc == 0, "accept: %d", rc);
	r.statsn = 0x2000;
	rc = h_raw_login_target(&h, &r, &p);
	ck_assert_msg(rc == 0, "raw target login: %d", rc);
	rc = h_progress_until(&h, h_initiator_in_ffp, 3000);
	ck_assert_msg(rc == 0 && h.i.ffp, "initiator not in FFP: %s", h.err);
	/* what the raw target negotiated and where its numbers stand */
	h.tneg = h.ineg;
	h.t_ini_mrdsl = h.ineg.ini_mrdsl;
	h.t_statsn = r.statsn;
	h.t_expcmdsn = r.cmdsn;
	ck_assert_msg(h_adopt_ffp(&h, IDM_ROLE_TARGET, r.fd) == 0, "%s", h.err);
	r.fd = -1;
	run_io(&h);
	h_fini(&h);
}
END_TEST

/* ---- a portal on the caller's listening socket --------------------- */

START_TEST(test_portal_fd)
{
	struct h h;
	struct h_params p;
	struct idm_portal_attr pa = { .size = sizeof(pa),
				      .accept = h_target_accept };
	idm_portal *pt = NULL;
	int lfd, port = 0, rc;

	h_params_default(&p);
	ck_assert_msg(h_init(&h, SLOT, 4) == 0, "h_init: %s", h.err);
	pa.arg = &h;
	lfd = h_raw_listen(&port);
	ck_assert_int_ge(lfd, 0);
	rc = idm_portal_create_fd(h.ctx, lfd, &pa, &pt);
	ck_assert_msg(rc == 0, "idm_portal_create_fd: %s", idm_strerror(rc));
	ck_assert_int_eq(idm_portal_port(pt), port);
	ck_assert_msg(h_connect_start(&h, &p, port, 5000) == 0, "%s", h.err);
	ck_assert_msg(h_login_wait(&h, 5000) == 0, "login: %s", h.err);
	run_io(&h);
	idm_portal_destroy(pt); /* closes lfd: h_fini counts descriptors */
	ck_assert_int_eq(fcntl(lfd, F_GETFD), -1);
	h_fini(&h);
}
END_TEST

int main(int argc, char **argv)
{
	const TTest *const tests[] = { test_refusals,
				       test_target_login,
				       test_initiator_login,
				       test_initiator_ffp,
				       test_target_ffp,
				       test_portal_fd,
				       NULL };

	(void)argc;
	return h_main(argv[0], 300, "adopt", "adopt", 60, tests);
}
