/* SPDX-License-Identifier: BSD-2-Clause */
#include "core.h"

#include "last_error.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

/* Detail of the last failed call in this thread (see idm_last_error()):
 * thread-local so that concurrent callers never read each other's. */
static _Thread_local char last_error[256];

/*
 * Messages for the errno values libidm returns, worded for its context;
 * everything else falls back to the C library's description.
 */
IDM_API const char *idm_strerror(int err)
{
	if (err == INT_MIN)
		return "Unknown error";
	if (err < 0)
		err = -err;
	switch (err) {
	case 0:
		return "Success";
	case EPROTO:
		return "iSCSI protocol error from the peer";
	case EBADMSG:
		return "Digest (CRC32C) mismatch";
	case EMSGSIZE:
		return "PDU or data segment larger than negotiated";
	case ENOENT:
		return "No such provider, task or object";
	case ELIBBAD:
		return "Provider module is invalid or of the wrong ABI";
	case ENOTCONN:
		return "Connection is not in a state that allows this";
	case ECONNRESET:
		return "Connection reset by peer";
	case ECANCELED:
		return "Operation cancelled";
	case EEXIST:
		return "Task tag already in use on this connection";
	case ENOSYS:
		return "Operation not supported by this provider";
	case ENODEV:
		return "No usable device for this provider";
	case ETIMEDOUT:
		return "Timed out";
	case ERANGE:
		return "Offset or length outside the buffer";
	default:
		break;
	}
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
	{
		const char *s = strerrordesc_np(err);
		if (s)
			return s;
	}
#endif
	return "Unknown error";
}

#define IDMP_STR_(x) #x
#define IDMP_STR(x) IDMP_STR_(x)

IDM_API const char *idm_version(void)
{
	return IDMP_STR(IDM_VERSION_MAJOR) "." IDMP_STR(IDM_VERSION_MINOR) "." IDMP_STR(
		IDM_VERSION_PATCH);
}

void idmp_last_error_clear(void)
{
	last_error[0] = '\0';
}

void idmp_last_error_set(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
}

IDM_API const char *idm_last_error(void)
{
	return last_error;
}
