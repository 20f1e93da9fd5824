/* fuzz_alert — libFuzzer target for alert rules (alert_add()), the text
 * a user types after tapless correlate --alert. Any bytes either parse or
 * are refused with a one-line, printable message naming a character of
 * the rule; a rule that parses writes back a text that parses to the same
 * rule, and evaluating it never changes state more often than it has
 * values. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "corr/alert.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The value of every rule in an interval: from the input's bytes. */
struct feed {
	const uint8_t *p;
	size_t n, k;
};

static bool fuzz_value(void *arg, const char *subject, enum alert_stat st,
		       double *value)
{
	struct feed *f = arg;
	uint8_t b;

	if (!subject || !*subject || (unsigned)st >= ALERT_NSTATS)
		__builtin_trap();
	if (!f->n)
		return false;
	b = f->p[f->k++ % f->n];
	if (b == 0xff)
		return false;		/* no value this interval */
	*value = b == 0xfe ? NAN : (double)b * 1000;
	return true;
}

static void fuzz_event(void *arg, const struct alert_event *ev)
{
	unsigned *n = arg;

	if (ev->rule != 0 || isnan(ev->value))
		__builtin_trap();
	(*n)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[2 * ALERT_TEXT_MAX], err[ALERT_ERRBUF];
	struct alert_set *a, *b;
	size_t n = size < sizeof(text) - 1 ? size : sizeof(text) - 1;
	struct feed f = { data, size, 0 };
	unsigned events = 0;
	int rc;

	memcpy(text, data, n);
	text[n] = 0;
	if (alert_set_create(&a, 1 + (n & 1), 1 + (n & 3)) ||
	    alert_set_create(&b, 1, 3))
		__builtin_trap();
	err[0] = 0;
	rc = alert_add(a, text, err);
	if (rc) {
		if (rc != -EINVAL || alert_count(a) || err[0] != '\'' ||
		    !strstr(err, "', character "))
			__builtin_trap();
		for (const char *p = err; *p; p++)
			if (*p < 0x20 || *p >= 0x7f)
				__builtin_trap();
		goto out;
	}
	if (alert_count(a) != 1 || strlen(alert_text(a, 0)) > ALERT_TEXT_MAX + 2 ||
	    !*alert_subject(a, 0) || !(alert_threshold(a, 0) >= 0))
		__builtin_trap();
	/* Written back, it is the same rule; given again, a duplicate. */
	if (alert_add(b, alert_text(a, 0), err) ||
	    strcmp(alert_text(b, 0), alert_text(a, 0)) ||
	    strcmp(alert_subject(b, 0), alert_subject(a, 0)) ||
	    alert_stat_of(b, 0) != alert_stat_of(a, 0) ||
	    alert_threshold(b, 0) != alert_threshold(a, 0) ||
	    alert_add(a, text, err) != -EEXIST || alert_count(a) != 1)
		__builtin_trap();
	for (unsigned k = 0; k < 64; k++)
		alert_eval(a, k, fuzz_value, &f, fuzz_event, &events);
	if (events != alert_transitions(a, 0) ||
	    events > alert_intervals(a, 0) || alert_intervals(a, 0) > 64 ||
	    alert_firing(a, 0) != (events & 1))
		__builtin_trap();
out:
	alert_set_destroy(a);
	alert_set_destroy(b);
	return 0;
}
