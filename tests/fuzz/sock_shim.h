/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Connection setup without TCP for the tcp harnesses (sock_shim.c).
 *
 * A new 127.0.0.1 TCP connection per input costs a handshake, a FIN
 * exchange and half a dozen socket options in the kernel: most of an
 * execution's time, none of it in the code under test. The shim hands
 * the tcp provider one end of a socketpair instead, at the one place it
 * gets a connected socket (accept4() of its listener, connect() of an
 * initiator connection); from there on the provider's own send and
 * receive paths run unchanged on a real stream socket. The harness
 * executable defines accept4, connect, getsockname and getpeername, so
 * the dlopen'd provider's calls reach these first; every call the shim
 * does not claim goes to the kernel as before.
 */
#ifndef IDM_FUZZ_SOCK_SHIM_H
#define IDM_FUZZ_SOCK_SHIM_H

#include <stdint.h>

/* The provider's listening socket bound to 127.0.0.1:port: find it, and
 * keep it readable (one real connection, never accepted) so that the
 * provider's epoll watch calls accept4() whenever the context progresses.
 * Returns 0 or a negative errno. */
int shim_listener(int port);

/* The next accept4() on that listener returns fd (then EAGAIN again). */
void shim_accept_next(int fd);

/* The next connect() to 127.0.0.1:port puts fd in place of the socket
 * being connected (dup2) and succeeds at once; fd stays the caller's. */
void shim_connect_next(uint16_t port, int fd);

#endif
