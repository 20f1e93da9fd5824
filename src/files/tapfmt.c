/* tapfmt.c — the tap and switch stamp formats: their table, names, and
 * detection by content (tapfmt.h). The formats themselves are in
 * tap_*.c, one each. */
#include "files/tapfmt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "base/errbuf.h"
#include "base/xalloc.h"

static const struct tapfmt_ops *const tapfmt_table[TAPFMT_COUNT] = {
	[TAPFMT_METAWATCH] = &tapfmt_metawatch_ops,
	[TAPFMT_ARISTA] = &tapfmt_arista_ops,
	[TAPFMT_EXABLAZE] = &tapfmt_exablaze_ops,
	[TAPFMT_EXALINK] = &tapfmt_exalink_ops,
	[TAPFMT_IXIA] = &tapfmt_ixia_ops,
};

void tapfmt_why(char why[TAPFMT_WHYBUF], const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errbuf_vset(why, TAPFMT_WHYBUF, 0, fmt, ap);
	va_end(ap);
}

int64_t tapfmt_floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b < 0);
}

const struct tapfmt_ops *tapfmt_ops(enum tapfmt_kind kind)
{
	return kind > TAPFMT_NONE && kind < TAPFMT_COUNT ? tapfmt_table[kind]
							 : NULL;
}

const char *tapfmt_name(enum tapfmt_kind kind)
{
	if (kind == TAPFMT_AUTO)
		return "auto";
	if (kind == TAPFMT_NONE)
		return "none";
	return tapfmt_ops(kind) ? tapfmt_ops(kind)->name : "?";
}

int tapfmt_parse(const char *name, enum tapfmt_kind *kind)
{
	for (int k = TAPFMT_AUTO; k < TAPFMT_COUNT; k++)
		if (!strcmp(name, tapfmt_name(k))) {
			*kind = k;
			return 0;
		}
	return -EINVAL;
}

const char *tapfmt_names(void)
{
	return "auto none metawatch arista exablaze exalink ixia";
}

/* Past the IP datagram: Ethernet, up to two VLAN tags, IPv4's total
 * length or IPv6's payload length. A frame that is not IP (ARP, LLDP, a
 * device's own) does not say where its payload ends: from just past its
 * Ethernet header, so that a trailer is still looked for from its end. */
uint32_t tapfmt_trailer_off(const uint8_t *data, uint32_t caplen)
{
	uint32_t off = 12, end;
	uint16_t type;

	if (caplen < 14)
		return caplen;
	type = bytes_get_be16(data + off);
	for (int tags = 0; tags < 2 && (type == 0x8100 || type == 0x88a8); tags++) {
		off += 4;
		if (caplen < off + 2)
			return caplen;
		type = bytes_get_be16(data + off);
	}
	off += 2;
	if (type == 0x0800 && caplen >= off + 4 && (data[off] >> 4) == 4)
		end = off + bytes_get_be16(data + off + 2);
	else if (type == 0x86dd && caplen >= off + 6 && (data[off] >> 4) == 6)
		end = off + 40 + bytes_get_be16(data + off + 4);
	else
		return off;
	return end < caplen ? end : caplen;
}

/* ---- detection ---- */

struct tapfmt_detect {
	unsigned frames;
	struct {
		void *state;
		unsigned matched;
		unsigned first;		/* frames fed before its first match */
		bool seen;
	} k[TAPFMT_COUNT];
};

struct tapfmt_detect *tapfmt_detect_new(void)
{
	struct tapfmt_detect *d = xcalloc(1, sizeof(*d));

	for (int k = TAPFMT_NONE + 1; k < TAPFMT_COUNT; k++)
		if (tapfmt_table[k]->state_size)
			d->k[k].state = xcalloc(1, tapfmt_table[k]->state_size);
	return d;
}

void tapfmt_detect_feed(struct tapfmt_detect *d, const struct tapfmt_frame *f)
{
	for (int k = TAPFMT_NONE + 1; k < TAPFMT_COUNT; k++) {
		struct tapfmt_stamp s;
		char why[TAPFMT_WHYBUF];
		int rc;

		memset(&s, 0, sizeof(s));
		rc = tapfmt_table[k]->decode(d->k[k].state, f, &s, why);
		/* A stamp that cannot be right is still the format's bytes:
		 * the file is read as such, and the frame named. */
		if (rc != TAPFMT_STAMPED && rc != TAPFMT_CONSUMED && rc != -EBADMSG)
			continue;
		if (!d->k[k].seen) {
			d->k[k].seen = true;
			d->k[k].first = d->frames;
		}
		d->k[k].matched++;
	}
	d->frames++;
}

enum tapfmt_kind tapfmt_detect_result(const struct tapfmt_detect *d)
{
	enum tapfmt_kind best = TAPFMT_NONE;
	unsigned best_n = 0, need = d->frames < 4 ? d->frames : 4;

	for (int k = TAPFMT_NONE + 1; k < TAPFMT_COUNT; k++) {
		unsigned n = d->k[k].matched, span;

		if (!d->k[k].seen || n < need || !n)
			continue;
		span = d->frames - d->k[k].first;
		if (4ull * n < 3ull * span || n <= best_n)
			continue;
		best = k;
		best_n = n;
	}
	return best;
}

enum tapfmt_kind tapfmt_detect_hint(const struct tapfmt_detect *d,
				   unsigned *matched, unsigned *frames)
{
	enum tapfmt_kind best = TAPFMT_NONE;

	*matched = 0;
	*frames = d->frames;
	for (int k = TAPFMT_NONE + 1; k < TAPFMT_COUNT; k++)
		if (d->k[k].matched > *matched) {
			best = k;
			*matched = d->k[k].matched;
		}
	return best;
}

void tapfmt_detect_free(struct tapfmt_detect *d)
{
	if (!d)
		return;
	for (int k = 0; k < TAPFMT_COUNT; k++)
		free(d->k[k].state);
	free(d);
}
