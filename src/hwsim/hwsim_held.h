/* hwsim_held.h — the error-queue messages libtapless-hwsim.so has read
 * from the kernel for one socket and not yet given to the program: TX
 * stamps the simulated NIC delivers late (tapless-hwsim --fault tx-late),
 * and the messages read with them that are due at once.
 *
 * A ring of HWSIM_HELD_SLOTS messages, each with the time it is due, made
 * once per socket: nothing is allocated per message. A message comes out
 * once due, the earliest due first (of two due at one time, the one put
 * first), so a late stamp comes out after later ones, as on real hardware.
 * A message is kept with at most HWSIM_HELD_DATA bytes of its packet,
 * HWSIM_HELD_CTRL of control messages and HWSIM_HELD_NAME of address;
 * what did not fit is flagged (MSG_TRUNC, MSG_CTRUNC) as the kernel flags
 * a short buffer.
 *
 * Pure: no system call, no clock; the caller says what time it is.
 */
#ifndef TAPLESS_HWSIM_HELD_H
#define TAPLESS_HWSIM_HELD_H

#include <stdint.h>
#include <sys/types.h>

struct msghdr;

#define HWSIM_HELD_SLOTS 64
#define HWSIM_HELD_DATA 512
#define HWSIM_HELD_CTRL 256
#define HWSIM_HELD_NAME 128

struct hwsim_held_msg {
	int64_t due_ns;
	uint64_t order;		/* put order, set by hwsim_held_put() */
	uint32_t len;		/* the packet's length as the kernel gave it */
	uint16_t datalen, ctrllen;	/* bytes kept */
	uint8_t namelen;
	int flags;		/* msg_flags as the kernel gave them */
	unsigned char data[HWSIM_HELD_DATA];
	union {
		unsigned char b[HWSIM_HELD_CTRL];
		uint64_t align;
	} ctrl;
	unsigned char name[HWSIM_HELD_NAME];
};

struct hwsim_held {
	unsigned n;		/* messages in m[0..n) */
	uint64_t order;		/* the next one put */
	struct hwsim_held_msg m[HWSIM_HELD_SLOTS];
};

void hwsim_held_init(struct hwsim_held *h);
unsigned hwsim_held_count(const struct hwsim_held *h);

/* Keep a copy of *m (its order is set). 0, or -ENOSPC when full. */
int hwsim_held_put(struct hwsim_held *h, const struct hwsim_held_msg *m);

/* The earliest due of the messages, INT64_MAX when there is none. */
int64_t hwsim_held_next_due(const struct hwsim_held *h);

/* Take out the earliest due message due at now_ns (due_ns <= now_ns):
 * 1 with *out filled, 0 when none is due. */
int hwsim_held_take_due(struct hwsim_held *h, int64_t now_ns,
			struct hwsim_held_msg *out);

/* Take out the message put first, due or not (the ring is full and one
 * must go): 1 with *out filled, 0 when empty. */
int hwsim_held_take_oldest(struct hwsim_held *h, struct hwsim_held_msg *out);

/* A message as recvmsg() filled msg, n its return value, into *m (due
 * due_ns). */
void hwsim_held_from_msg(struct hwsim_held_msg *m, const struct msghdr *msg,
			 ssize_t n, int64_t due_ns);

/* *m into a program's msg as recvmsg() would: the packet into its
 * buffers, the control messages that fit whole, the address; msg_flags
 * with MSG_TRUNC or MSG_CTRUNC where they were short. Returns what
 * recvmsg() returns: the bytes copied (the packet's length with
 * MSG_TRUNC asked in flags). */
ssize_t hwsim_held_to_msg(const struct hwsim_held_msg *m, struct msghdr *msg,
			  int flags);

#endif
