/* hwsim_env.h — what tapless-hwsim passes to libtapless-hwsim.so in the
 * environment. */
#ifndef TAPLESS_HWSIM_ENV_H
#define TAPLESS_HWSIM_ENV_H

#define HWSIM_ENV_HOST "TAPLESS_HWSIM_HOST"
#define HWSIM_ENV_DIR "TAPLESS_HWSIM_DIR"
#define HWSIM_DEFAULT_DIR "/run/tapless-hwsim"
#define HWSIM_LIB_NAME "libtapless-hwsim.so"

#endif
