/* shim_hand.c — the hand-over of keyed stamps to capd, safe in a signal
 * handler.
 *
 * Any thread, and a signal handler interrupting any thread, may read
 * stamps and hand them over. So nothing here waits for anyone: records
 * go into a bounded lock-free queue (one cell per record, each with a
 * sequence number: Vyukov's bounded queue), and whoever then takes the
 * drainer flag (test-and-set, never waited for) writes the queue to
 * capd's socket. A caller that finds the flag taken — another thread, or
 * the very code its handler interrupted — leaves its records queued: the
 * holder looks at the queue again after letting the flag go, so nothing
 * is stranded. A full queue drops the record, counted, as a full socket
 * buffer does.
 *
 * The writer is the reaper thread (shim_reaper.c), SHIM_HAND_MS after
 * records come or at once past SHIM_HAND_HIGH of them, not the program's
 * send: a write to capd took 0.75 us at p50 and 13 us at p99 in the
 * send path of bench/stamp-cgroup.sh's sockperf client, most of the p99
 * the shim added. The program's own thread writes only when there is no
 * reaper thread (it could not start), and at exit and exec
 * (shim_hand_flush). Records reach capd in the order they were queued;
 * at most SHIM_HAND_MS late, well inside capd's --reorder-ms (100 ms by
 * default).
 *
 * The client (its 1 MB buffer) is allocated at start-up: no allocation
 * ever happens here. The connection's descriptor is kept high (see
 * shim_own_high()) and out of the program's reach.
 */
#include "shim/shim.h"

#include <errno.h>
#include <sched.h>
#include <string.h>

#include "live/txsock.h"

#define QCAP 4096u		/* records waiting for the drainer: twice
				 * SHIM_HAND_HIGH, room for what comes while
				 * the reaper, woken at the mark, gets to
				 * write (200 000 stamps a second stay below
				 * the mark for SHIM_HAND_MS) */
#define DRAIN_BATCH 64

struct cell {
	_Atomic size_t seq;
	struct txsock_rec rec;
};

static struct cell q[QCAP];
static _Atomic size_t q_in, q_out;	/* q_out: the drainer's alone */
static atomic_flag drainer = ATOMIC_FLAG_INIT;
static struct txsock_client *client;	/* the drainer's alone */
static atomic_bool client_lost;		/* its descriptor went to the
					 * program (dup2 onto it) */
static _Atomic uint64_t q_dropped;	/* the queue was full: told to the
					 * client, which tells capd */
static bool client_bad;

static void q_reset(void)
{
	for (size_t i = 0; i < QCAP; i++)
		atomic_store_explicit(&q[i].seq, i, memory_order_relaxed);
	atomic_store(&q_in, 0);
	atomic_store(&q_out, 0);
}

static bool q_put(const struct txsock_rec *r)
{
	size_t pos = atomic_load_explicit(&q_in, memory_order_relaxed);
	struct cell *c;

	for (;;) {
		size_t seq;
		intptr_t dif;

		c = &q[pos & (QCAP - 1)];
		seq = atomic_load_explicit(&c->seq, memory_order_acquire);
		dif = (intptr_t)seq - (intptr_t)pos;
		if (dif == 0) {
			if (atomic_compare_exchange_weak_explicit(&q_in, &pos,
					pos + 1, memory_order_relaxed,
					memory_order_relaxed))
				break;
		} else if (dif < 0) {
			return false;	/* full */
		} else {
			pos = atomic_load_explicit(&q_in, memory_order_relaxed);
		}
	}
	c->rec = *r;
	atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
	return true;
}

/* The next record, if one is complete (a producer interrupted between
 * taking its cell and filling it holds the ones after it back: it kicks
 * the drainer itself once done). */
static bool q_get(struct txsock_rec *r)
{
	size_t pos = atomic_load_explicit(&q_out, memory_order_relaxed);
	struct cell *c = &q[pos & (QCAP - 1)];

	if (atomic_load_explicit(&c->seq, memory_order_acquire) != pos + 1)
		return false;
	*r = c->rec;
	atomic_store_explicit(&c->seq, pos + QCAP, memory_order_release);
	atomic_store_explicit(&q_out, pos + 1, memory_order_relaxed);
	return true;
}

static bool q_ready(void)
{
	size_t pos = atomic_load_explicit(&q_out, memory_order_relaxed);

	return atomic_load_explicit(&q[pos & (QCAP - 1)].seq,
				    memory_order_acquire) == pos + 1;
}

/* With the drainer flag held. */
static void drain(void)
{
	struct txsock_rec b[DRAIN_BATCH];
	size_t n;

	if (atomic_exchange(&client_lost, false) && client)
		txsock_forget(client);
	if (client && atomic_load_explicit(&q_dropped, memory_order_relaxed))
		txsock_client_add_dropped(client, atomic_exchange(&q_dropped, 0));
	do {
		size_t queued = 0;

		for (n = 0; n < DRAIN_BATCH && q_get(&b[n]); n++)
			;
		if (!n)
			break;
		if (client)
			queued = txsock_send_batch(client, b, n);
		shim_own_set(SHIM_OWN_CLIENT, client ? txsock_client_fd(client) : -1);
		atomic_fetch_add(&shim_stats.handed, queued);
		if (queued < n) {
			atomic_fetch_add(&shim_stats.dropped, n - queued);
			/* No connection: most often capd listening elsewhere,
			 * a mistake the user must see at once, not at exit. */
			if (!client || txsock_client_fd(client) < 0)
				shim_log_once(LOG_WARNING, "no tapless-capd at "
					      "%s: is it running with "
					      "--tx-socket %s? Dropping stamps, "
					      "counted; reconnecting at most once "
					      "a second", shim_conf.tx_socket,
					      shim_conf.tx_socket);
			else
				shim_log_once(LOG_NOTICE, "tapless-capd is not "
					      "taking stamps at %s fast enough: "
					      "dropping them, counted",
					      shim_conf.tx_socket);
		}
	} while (n == DRAIN_BATCH);
}

/* Drain if no one else is; look again after letting go. */
static void kick(void)
{
	while (!atomic_flag_test_and_set_explicit(&drainer,
						  memory_order_acquire)) {
		drain();
		atomic_flag_clear_explicit(&drainer, memory_order_release);
		if (!q_ready())
			break;
	}
}

size_t shim_hand_queued(void)
{
	size_t in = atomic_load(&q_in), out = atomic_load(&q_out);

	return in - out <= QCAP ? in - out : 0;
}

void shim_hand(const struct txsock_rec *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!q_put(&r[i])) {
			SHIM_COUNT(dropped);
			atomic_fetch_add_explicit(&q_dropped, 1,
						  memory_order_relaxed);
		}
	if (n && !shim_reaper_hand(shim_hand_queued() >= SHIM_HAND_HIGH))
		kick();
}

void shim_hand_write(void)
{
	kick();
}

void shim_hand_init(void)
{
	int err;

	q_reset();
	err = txsock_client_new(&client, shim_conf.tx_socket);
	if (err) {
		client = NULL;
		client_bad = true;
		shim_log(LOG_WARNING, "tx socket %s: %s: stamps are dropped",
			 shim_conf.tx_socket, strerror(-err));
	}
}

void shim_hand_lost(void)
{
	atomic_store(&client_lost, true);
}

int shim_hand_flush(int timeout_ms)
{
	int r = 0;

	/* Exit and exec: a short wait for a drainer in another thread. */
	for (int i = 0; atomic_flag_test_and_set_explicit(&drainer,
							   memory_order_acquire); i++) {
		if (i == 1000)
			return -EBUSY;
		sched_yield();
	}
	drain();
	if (client && !client_bad)
		r = txsock_flush(client, timeout_ms);
	atomic_flag_clear_explicit(&drainer, memory_order_release);
	return r;
}

void shim_hand_after_fork(void)
{
	/* The parent's connection is the parent's: our copy of it closed,
	 * our copy of its queue dropped; the next hand-over connects. */
	atomic_flag_clear(&drainer);
	q_reset();
	atomic_store(&q_dropped, 0);
	if (client)
		txsock_reset(client);
	shim_own_set(SHIM_OWN_CLIENT, -1);
}
