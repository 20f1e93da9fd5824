/* hwsim_lib.h — what the parts of libtapless-hwsim.so share. */
#ifndef TAPLESS_HWSIM_LIB_H
#define TAPLESS_HWSIM_LIB_H

struct hwsim_host;

/* The program's simulated host, or NULL when it runs on the real clocks
 * (no TAPLESS_HWSIM_HOST). */
struct hwsim_host *hwsim_host(void);

#endif
