/* fuzz_fixsess — libFuzzer target for the FIX session layer: the input is
 * what a peer sends on an order session after our Logon went out, handed
 * over in reads of a size the first byte picks. Whatever it is, the session
 * must end cleanly (active, closed with an error, or waiting for more),
 * never read out of bounds, and never hand the application a message that
 * did not pass the checks. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "fix/fix.h"
#include "fix/fixsess.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct feed {
	const uint8_t *p;
	size_t left, step;
};

static ssize_t fz_send(void *ctx, const void *buf, size_t len)
{
	(void)ctx;
	(void)buf;
	return (ssize_t)len;	/* our replies go nowhere */
}

static ssize_t fz_recv(void *ctx, void *buf, size_t len)
{
	struct feed *f = ctx;
	size_t n = f->left < f->step ? f->left : f->step;

	if (!f->left)
		return 0;	/* EOF */
	if (n > len)
		n = len;
	memcpy(buf, f->p, n);
	f->p += n;
	f->left -= n;
	return (ssize_t)n;
}

static int on_app(void *arg, struct fixsess *s, const struct fix_msg *m,
		  int64_t now)
{
	size_t len;

	(void)s;
	(void)now;
	/* The session checked these before handing the message over. */
	if (!fix_is(m, 49, "VENUE") || !fix_is(m, 56, "ALGO") ||
	    !fix_get(m, 34, &len))
		__builtin_trap();
	(*(size_t *)arg)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct feed f = { data, size, 1 };
	struct fixsess_io io = { fz_send, fz_recv, NULL, &f };
	struct fixsess_config c = { .sender = "ALGO", .target = "VENUE",
				    .initiator = true, .max_msg = 1024 };
	struct fixsess *s;
	size_t apps = 0;
	int rc;

	if (size) {
		f.step = data[0] % 64 + 1;
		f.p++;
		f.left--;
	}
	if (fixsess_create(&s, &c, &io))
		__builtin_trap();
	fixsess_logon(s, 0);
	do
		rc = fixsess_read(s, 0, on_app, &apps);
	while (!rc && f.left && fixsess_state(s) != FIXSESS_CLOSED);
	if (rc && rc != -EPROTO && rc != -ECONNRESET)
		__builtin_trap();
	if (rc == -EPROTO && (fixsess_state(s) != FIXSESS_CLOSED ||
			      !*fixsess_error(s)))
		__builtin_trap();
	fixsess_tick(s, 100000000000LL);
	fixsess_destroy(s);
	return 0;
}
