/* missing.h — kernel constants newer than Debian 12's 6.1 headers.
 *
 * Defining them here lets one binary use them where the running kernel has
 * them. Nothing may assume the kernel accepts them: every use is probed at run
 * time (setsockopt returns EINVAL for unknown SOF_ flags) and falls back.
 */
#ifndef TAPLESS_MISSING_H
#define TAPLESS_MISSING_H

#include <linux/net_tstamp.h>

/* Linux 6.2: OPT_ID counts TCP bytes from write_seq, not snd_una, so the key
 * of the next send does not depend on how much is still unacknowledged. The
 * enum in older headers has no macro to test, so test a version macro of ours. */
#ifndef TAPLESS_HAVE_OPT_ID_TCP
#define TAPLESS_SOF_OPT_ID_TCP (1 << 16)
#endif

/* Linux 6.9: report only the RX stamps the device filter asked for. */
#define TAPLESS_SOF_OPT_RX_FILTER (1 << 17)

/* Linux 5.1 names; present in 6.1 but guarded for older build hosts. */
#ifndef SO_TIMESTAMPING_NEW
#define SO_TIMESTAMPING_NEW 65
#endif
#ifndef SCM_TIMESTAMPING_NEW
#define SCM_TIMESTAMPING_NEW SO_TIMESTAMPING_NEW
#endif
#ifndef SO_TIMESTAMPING_OLD
#define SO_TIMESTAMPING_OLD 37
#endif
#ifndef SCM_TIMESTAMPING_OLD
#define SCM_TIMESTAMPING_OLD SO_TIMESTAMPING_OLD
#endif
#ifndef SCM_TIMESTAMPING_PKTINFO
#define SCM_TIMESTAMPING_PKTINFO 58
#endif

#endif
