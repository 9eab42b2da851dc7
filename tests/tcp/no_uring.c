/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * no_uring PROGRAM [ARGS...]: run PROGRAM where io_uring_setup fails
 * with EPERM, as under the seccomp profiles of container runtimes that
 * refuse io_uring. The TCP provider must fall back to epoll, say so once,
 * and move data all the same (uring_fallback.sh).
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425 /* the same number on every architecture */
#endif

#if defined(__x86_64__)
#define AUDIT_ARCH_HERE AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define AUDIT_ARCH_HERE AUDIT_ARCH_AARCH64
#endif

/* io_uring_setup -> EPERM; everything else allowed. */
static int deny_io_uring(void)
{
	struct sock_filter f[] = {
#ifdef AUDIT_ARCH_HERE
		/* another ABI (x32, compat) has other numbers: let it be */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_HERE, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
#endif
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = (unsigned short)(sizeof(f) / sizeof(f[0])),
		.filter = f,
	};

	/* no privilege needed for a filter with no_new_privs set */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s PROGRAM [ARGS...]\n", argv[0]);
		return 2;
	}
	if (deny_io_uring() < 0) {
		fprintf(stderr, "no_uring: seccomp: %s\n", strerror(errno));
		return 77; /* cannot set up the refusal: skip */
	}
	if (syscall(__NR_io_uring_setup, 1, NULL) != -1 || errno != EPERM) {
		fprintf(stderr, "no_uring: io_uring_setup not refused\n");
		return 99;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "no_uring: %s: %s\n", argv[1], strerror(errno));
	return 127;
}
