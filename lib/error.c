/* SPDX-License-Identifier: BSD-2-Clause */
#include "idm_internal.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

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

IDM_API const char *idm_version(void)
{
	return "1.1.0";
}
