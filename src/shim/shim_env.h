/* shim_env.h — what tapless-stamp passes to its preload library: the
 * environment variables (the same settings as the wrapper's options, for
 * LD_PRELOAD=... PROGRAM and systemd drop-ins) and their defaults. */
#ifndef TAPLESS_SHIM_ENV_H
#define TAPLESS_SHIM_ENV_H

#define SHIM_ENV_TX_SOCKET "TAPLESS_STAMP_TX_SOCKET"
#define SHIM_ENV_PORTS "TAPLESS_STAMP_PORTS"
#define SHIM_ENV_PEERS "TAPLESS_STAMP_PEERS"
#define SHIM_ENV_MODE "TAPLESS_STAMP_MODE"
#define SHIM_ENV_LOG_LEVEL "TAPLESS_STAMP_LOG_LEVEL"
#define SHIM_ENV_LOG_FILE "TAPLESS_STAMP_LOG_FILE"
/* "kernel": UDP datagram ids counted by the kernel even where it takes
 * ours (SCM_TS_OPT_ID): how the library works before Linux 6.13, for
 * tests. */
#define SHIM_ENV_UDP_IDS "TAPLESS_STAMP_UDP_IDS"
/* "off": SOF_TIMESTAMPING_OPT_RX_FILTER never asked for, as on kernels
 * before Linux 6.9, for tests. */
#define SHIM_ENV_RX_FILTER "TAPLESS_STAMP_RX_FILTER"

/* tapless-capd has no default --tx-socket; the packaged unit,
 * tapless-capd@IFACE, gives it this one (CAPD_TX_SOCKET), so a program
 * run under tapless-stamp with no options reaches it. One path per host,
 * not per interface: a program hands all its stamps to one socket,
 * whichever interface each send leaves by (tapless-stamp(8)).
 * tests/system/test_deploy.sh checks the two agree. */
#define SHIM_DEFAULT_TX_SOCKET "/run/tapless/tx.sock"

/* The library's file name: next to tapless-stamp in a build (bin/),
 * below PREFIX/lib/tapless when installed. */
#define SHIM_LIB_NAME "libtapless-stamp.so"

#endif
