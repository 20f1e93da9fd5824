/* nlerr.c — see nlerr.h. */
#include "stamp/nlerr.h"

#include <errno.h>
#include <netlink/errno.h>

int nlerr_errno(int nlerr)
{
	switch (nlerr < 0 ? -nlerr : nlerr) {
	case NLE_INTR:
	case NLE_DUMP_INTR:
		return -EINTR;
	case NLE_BAD_SOCK:
		return -EBADF;
	case NLE_AGAIN:
		return -EAGAIN;
	case NLE_NOMEM:
		return -ENOMEM;
	case NLE_EXIST:
		return -EEXIST;
	case NLE_INVAL:
		return -EINVAL;
	case NLE_RANGE:
		return -ERANGE;
	case NLE_MSGSIZE:
		return -EMSGSIZE;
	case NLE_OPNOTSUPP:
		return -EOPNOTSUPP;
	case NLE_AF_NOSUPPORT:
		return -EAFNOSUPPORT;
	case NLE_OBJ_NOTFOUND:
		return -ENOENT;
	case NLE_NOATTR:
	case NLE_MISSING_ATTR:
	case NLE_MSG_OVERFLOW:
	case NLE_MSG_TRUNC:
	case NLE_MSG_TOOSHORT:
	case NLE_PARSE_ERR:
	case NLE_ATTRSIZE:
		return -EBADMSG;
	case NLE_SEQ_MISMATCH:
		return -EPROTO;
	case NLE_BUSY:
		return -EBUSY;
	case NLE_PROTO_MISMATCH:
		return -EPROTONOSUPPORT;
	case NLE_NOACCESS:
		return -EACCES;
	case NLE_PERM:
		return -EPERM;
	case NLE_NODEV:
		return -ENODEV;
	default:
		return -EIO;
	}
}
