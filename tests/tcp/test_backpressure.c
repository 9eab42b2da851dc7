/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Backpressure of the TCP provider (issue #12): a raw initiator sends
 * NOP-Outs, each asking for a NOP-In, and does not read. The libidm
 * target must stop reading the connection once its send queue is over
 * half of its bound (idm_conn_set_send_limits), leaving the rest in the
 * kernel, instead of queueing answers without limit; once the initiator
 * reads again, it must resume and answer every ping, none lost.
 * tests/interop/target/nop_flood.sh does the same against idm-target
 * with 10 million pings and checks its resident memory.
 */
#include "raw_peer.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* More pings than the target's socket send buffer can hold answers for
 * (tcp_wmem's maximum, 4 MiB by default, is 87,000 NOP-Ins): the rest
 * must wait in its receive buffer, unread. */
#define PINGS 250000u
#define SQ_ENTRIES 64u

static long ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* The target's end of the raw peer's connection: in this process too. */
static int target_fd(const struct h *h, const struct h_raw *r)
{
	struct sockaddr_in me, lo, pe;
	socklen_t len = sizeof(me);
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int found = -1;

	if (!d || getsockname(r->fd, (struct sockaddr *)&me, &len) < 0) {
		if (d)
			closedir(d);
		return -1;
	}
	while ((e = readdir(d)) && found < 0) {
		int fd = atoi(e->d_name);
		socklen_t l1 = sizeof(lo), l2 = sizeof(pe);

		if (fd <= 2 || fd == r->fd ||
		    getsockname(fd, (struct sockaddr *)&lo, &l1) < 0 ||
		    getpeername(fd, (struct sockaddr *)&pe, &l2) < 0 ||
		    lo.sin_family != AF_INET)
			continue;
		if (ntohs(lo.sin_port) == h->port && pe.sin_port == me.sin_port)
			found = fd;
	}
	closedir(d);
	return found;
}

static uint8_t *ping_batch(size_t n)
{
	uint8_t *b = malloc(n * 48);

	ck_assert(b);
	for (size_t i = 0; i < n; i++)
		h_build_nop_out(b + i * 48, (uint32_t)i + 1, 1);
	return b;
}

START_TEST(limits_args)
{
	struct h h;
	struct h_raw r;
	struct h_params p;

	h_params_default(&p);
	h_raw_evil_initiator(&h, &r, &p, 4096);
	ck_assert_int_eq(idm_conn_set_send_limits(NULL, 0, 0), -EINVAL);
	ck_assert_int_eq(idm_conn_set_send_limits(h.t.conn, 15, 0), -EINVAL);
	ck_assert_int_eq(idm_conn_set_send_limits(h.t.conn, 0, 4095), -EINVAL);
	ck_assert_int_eq(idm_conn_set_send_limits(h.t.conn, 16, 4096), 0);
	ck_assert_int_eq(idm_conn_set_send_limits(h.t.conn, 0, 0), 0);
	idm_connection_terminate(h.t.conn);
	h.t.terminated_by_us = true;
	ck_assert_int_eq(idm_conn_set_send_limits(h.t.conn, 0, 0), -ENOTCONN);
	h_raw_end(&h, &r);
}
END_TEST

START_TEST(ping_flood_stops_input_then_resumes)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t *pings = ping_batch(PINGS), sink[65536];
	size_t total = (size_t)PINGS * 48, sent = 0, got = 0;
	long last, end;
	int tfd, unread = 0, small = 4096, c0, c1, refused = 0;

	h_params_default(&p);
	p.header_digest = p.data_digest = false; /* NOP-Ins of 48 bytes */
	h_raw_evil_initiator(&h, &r, &p, 4096);
	ck_assert_int_eq(idm_conn_set_send_limits(h.t.conn, SQ_ENTRIES, 0), 0);
	/* keep the answers in the target's buffers, not ours */
	setsockopt(r.fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	ck_assert_int_ge(fcntl(r.fd, F_SETFL, fcntl(r.fd, F_GETFL) | O_NONBLOCK), 0);
	tfd = target_fd(&h, &r);
	ck_assert_msg(tfd >= 0, "the target's socket not found");

	/* 1. ping, never read, until the writes stall for a second: every
	 * send refused (EAGAIN) for that long, and at least 100 times, so
	 * that a second in which this thread got no CPU (a loaded machine)
	 * is not taken for a stall while the target still reads */
	c0 = h.t.control_count; /* the login */
	last = ms_now();
	while (sent < total && (ms_now() - last < 1000 || refused < 100)) {
		ssize_t n = send(r.fd, pings + sent, total - sent, MSG_NOSIGNAL);

		if (n > 0) {
			sent += (size_t)n;
			last = ms_now();
			refused = 0;
		} else if (n < 0 && errno == EAGAIN) {
			refused++;
		} else if (n < 0) {
			break; /* the connection failed: the checks below say so */
		}
		(void)idm_ctx_progress(h.ctx, n > 0 ? 0 : 5);
	}
	c1 = h.t.control_count - c0;
	for (end = ms_now() + 300; ms_now() < end;)
		(void)idm_ctx_progress(h.ctx, 10);
	ck_assert_int_eq(h.t.terminate_count, 0);
	ck_assert_int_eq(ioctl(tfd, FIONREAD, &unread), 0);
	fprintf(stderr, "flood: %zu of %u pings sent, %d handed to the target, "
		"%d bytes left unread in its socket\n", sent / 48, PINGS, c1, unread);
	ck_assert_msg(sent < total, "all %u pings went out: the target kept reading",
		      PINGS);
	ck_assert_msg(h.t.control_count - c0 == c1,
		      "the target still reads (%d -> %d pings) with its send "
		      "queue full", c1, h.t.control_count - c0);
	ck_assert_msg(unread > 0, "nothing waits in the target's socket");
	ck_assert_msg((unsigned)c1 < PINGS, "%d pings handed up", c1);

	/* 2. read the answers: the target resumes and answers every ping
	 * (with a receive buffer of normal size again: a window of a few
	 * KiB on the loopback crawls) */
	small = 1 << 20;
	setsockopt(r.fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	end = ms_now() + 60000;
	while (got < total && ms_now() < end) {
		ssize_t n = recv(r.fd, sink, sizeof(sink), 0);

		if (n > 0)
			got += (size_t)n;
		else
			ck_assert_msg(n < 0 && errno == EAGAIN,
				      "the target closed the connection");
		if (sent < total) {
			n = send(r.fd, pings + sent, total - sent, MSG_NOSIGNAL);
			if (n > 0)
				sent += (size_t)n;
		}
		(void)idm_ctx_progress(h.ctx, n > 0 ? 0 : 1);
	}
	ck_assert_msg(got == total, "%zu of %u NOP-Ins came back", got / 48, PINGS);
	ck_assert_int_eq(h.t.control_count - c0, (int)PINGS);
	ck_assert_int_eq(h.t.terminate_count, 0);
	ck_assert_msg(h.t.unexpected == 0, "%s", h.t.why);
	free(pings);
	h_raw_end(&h, &r);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { limits_args,
				       ping_flood_stops_input_then_resumes,
				       NULL };

	return h_main("test_backpressure", 110, "tcp_backpressure",
		      "send_queue_bound", 90, tests);
}
