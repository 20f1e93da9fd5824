/* fix.c — FIX tag=value framing, checking, reading and writing; see fix.h.
 * Every index is checked against the length before it is read: the bytes
 * come from network peers and captures. */
#include "fix/fix.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/nstime.h"

static const char *const fix_error_names[] = {
	[FIX_OK] = "ok",
	[FIX_E_BEGIN] = "does not start with 8=",
	[FIX_E_BODYLENGTH] = "bad BodyLength (9)",
	[FIX_E_TOO_LONG] = "message over the size limit",
	[FIX_E_CHECKSUM] = "bad CheckSum (10)",
	[FIX_E_FIELD] = "malformed field",
	[FIX_E_MSGTYPE] = "MsgType (35) missing or not third",
	[FIX_E_TOO_MANY] = "too many fields",
};

const char *fix_error_name(enum fix_error e)
{
	return (unsigned)e < sizeof(fix_error_names) / sizeof(fix_error_names[0]) ?
	       fix_error_names[e] : "?";
}

/* Bytes to drop so buf starts at the next "8=" that could begin a message
 * (after position 0); keeps a trailing "8" that may be one cut short. */
static size_t fix_resync(const char *buf, size_t len)
{
	for (size_t i = 1; i < len; i++) {
		if (buf[i] != '8')
			continue;
		if (i + 1 == len || buf[i + 1] == '=')
			return i;
	}
	return len;
}

/* More digits than any BodyLength needs (leading zeros included). */
#define FIX_BODYLENGTH_DIGITS 20

static int fix_bad(const char *buf, size_t len, size_t *skip,
		   enum fix_error *why, enum fix_error e)
{
	*skip = fix_resync(buf, len);
	*why = e;
	return -EBADMSG;
}

int fix_frame(const char *buf, size_t len, size_t max_len, size_t *skip,
	      enum fix_error *why)
{
	size_t i, body, body_len = 0, total, digits;

	*skip = 0;
	*why = FIX_OK;
	if (len < 2)
		return len == 0 || buf[0] == '8' ? 0 :
		       fix_bad(buf, len, skip, why, FIX_E_BEGIN);
	if (buf[0] != '8' || buf[1] != '=')
		return fix_bad(buf, len, skip, why, FIX_E_BEGIN);
	/* BeginString: short ("FIX.4.4", "FIXT.1.1"). */
	for (i = 2; i < len && buf[i] != FIX_SOH; i++)
		if (i > 16)
			return fix_bad(buf, len, skip, why, FIX_E_BEGIN);
	if (i + 3 > len)
		return 0;
	if (buf[i + 1] != '9' || buf[i + 2] != '=')
		return fix_bad(buf, len, skip, why, FIX_E_BODYLENGTH);
	/* A number too big is over the size limit, something not a number is
	 * malformed: a peer declaring 999999999 is told the former. The
	 * value saturates past the limit (no overflow however many digits);
	 * a run of more digits than any length needs is decided without
	 * waiting for its end. */
	for (i += 3, digits = 0; i < len && buf[i] != FIX_SOH; i++, digits++) {
		if (buf[i] < '0' || buf[i] > '9')
			return fix_bad(buf, len, skip, why, FIX_E_BODYLENGTH);
		if (body_len <= max_len)
			body_len = body_len * 10 + (size_t)(buf[i] - '0');
		if (digits >= FIX_BODYLENGTH_DIGITS)
			return fix_bad(buf, len, skip, why, body_len > max_len ?
				       FIX_E_TOO_LONG : FIX_E_BODYLENGTH);
	}
	if (i == len)
		return 0;
	body = i + 1;
	if (!digits)
		return fix_bad(buf, len, skip, why, FIX_E_BODYLENGTH);
	if (body_len > max_len)
		return fix_bad(buf, len, skip, why, FIX_E_TOO_LONG);
	/* The body, then "10=NNN" SOH. */
	total = body + body_len + 7;
	if (len < total)
		return 0;
	if (memcmp(buf + body + body_len, "10=", 3) || buf[total - 1] != FIX_SOH ||
	    (body_len && buf[body + body_len - 1] != FIX_SOH))
		return fix_bad(buf, len, skip, why, FIX_E_BODYLENGTH);
	return (int)total;
}

/* The sum of n bytes, eight at a time: the correlator checks the checksum
 * of every message it reads, so this is its hottest loop. Bytes are added
 * in 16-bit lanes, folded before a lane could overflow. */
static unsigned fix_sum(const char *buf, size_t n)
{
	const uint64_t lo = 0x00ff00ff00ff00ffULL;
	unsigned sum = 0;
	size_t k = 0;

	while (n - k >= 8) {
		uint64_t acc = 0, x;
		/* 128 words add at most 128 * 2 * 255 to a lane: < 65536. */
		size_t stop = k + 8 * 128 < n - 7 ? k + 8 * 128 : n - 7;

		for (; k < stop; k += 8) {
			memcpy(&x, buf + k, 8);
			acc += (x & lo) + ((x >> 8) & lo);
		}
		acc = (acc & 0x0000ffff0000ffffULL) + ((acc >> 16) & 0x0000ffff0000ffffULL);
		sum += (unsigned)((acc & 0xffffffffULL) + (acc >> 32));
	}
	for (; k < n; k++)
		sum += (unsigned char)buf[k];
	return sum;
}

/* The next SOH at or after v, or len: eight bytes a word (a byte of x is
 * zero where x ^ 0x01.. has it; the classic has-zero-byte test). Values are
 * a few bytes long, too short for memchr's call to pay. */
static size_t fix_soh(const char *buf, size_t v, size_t len)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint64_t ones = 0x0101010101010101ULL;

	for (; len - v >= 8; v += 8) {
		uint64_t x, t;

		memcpy(&x, buf + v, 8);
		x ^= ones * (unsigned char)FIX_SOH;
		t = (x - ones) & ~x & (ones << 7);
		if (t)
			return v + ((unsigned)__builtin_ctzll(t) >> 3);
	}
#endif
	while (v < len && buf[v] != FIX_SOH)
		v++;
	return v;
}

int fix_parse(struct fix_msg *m, const char *buf, size_t len,
	      enum fix_error *why)
{
	unsigned sum = 0, want = 0;
	size_t skip, i = 0;
	int n = fix_frame(buf, len, len, &skip, why);

	if (n <= 0 || (size_t)n != len) {
		if (*why == FIX_OK)
			*why = FIX_E_BODYLENGTH;
		return -EBADMSG;
	}
	sum = fix_sum(buf, len - 7);
	for (size_t k = len - 4; k < len - 1; k++) {
		if (buf[k] < '0' || buf[k] > '9') {
			*why = FIX_E_CHECKSUM;
			return -EBADMSG;
		}
		want = want * 10 + (unsigned)(buf[k] - '0');
	}
	if (sum % 256 != want) {
		*why = FIX_E_CHECKSUM;
		return -EBADMSG;
	}

	m->buf = buf;
	m->len = (uint32_t)len;
	m->nfields = 0;
	while (i < len) {
		uint32_t tag = 0;
		size_t v;

		if (m->nfields == FIX_MAX_FIELDS) {
			*why = FIX_E_TOO_MANY;
			return -EBADMSG;
		}
		for (v = i; v < len && buf[v] != '='; v++) {
			if (buf[v] < '0' || buf[v] > '9' || v - i > 9) {
				*why = FIX_E_FIELD;
				return -EBADMSG;
			}
			tag = tag * 10 + (uint32_t)(buf[v] - '0');
		}
		if (v == i || v == len || !tag) {
			*why = FIX_E_FIELD;
			return -EBADMSG;
		}
		v++;
		m->f[m->nfields].tag = tag;
		m->f[m->nfields].off = (uint32_t)v;
		v = fix_soh(buf, v, len);
		m->f[m->nfields].len = (uint32_t)(v - m->f[m->nfields].off);
		m->nfields++;
		i = v + 1;
	}
	if (m->nfields < 4 || m->f[2].tag != 35 || !m->f[2].len) {
		*why = FIX_E_MSGTYPE;
		return -EBADMSG;
	}
	*why = FIX_OK;
	return 0;
}

const char *fix_next(const struct fix_msg *m, uint32_t tag, int *pos,
		     size_t *len)
{
	for (int i = *pos + 1; i < (int)m->nfields; i++) {
		if (m->f[i].tag == tag) {
			*pos = i;
			if (len)
				*len = m->f[i].len;
			return m->buf + m->f[i].off;
		}
	}
	*pos = (int)m->nfields;
	return NULL;
}

const char *fix_get(const struct fix_msg *m, uint32_t tag, size_t *len)
{
	int pos = -1;

	return fix_next(m, tag, &pos, len);
}

int fix_get_int(const struct fix_msg *m, uint32_t tag, int64_t *v)
{
	size_t len, i = 0;
	const char *s = fix_get(m, tag, &len);
	bool neg;
	int64_t x = 0;

	if (!s || !len)
		return -EINVAL;
	neg = s[0] == '-';
	if (neg && len == 1)
		return -EINVAL;
	for (i = neg; i < len; i++) {
		if (s[i] < '0' || s[i] > '9' || x > (INT64_MAX - 9) / 10)
			return -EINVAL;
		x = x * 10 + (s[i] - '0');
	}
	*v = neg ? -x : x;
	return 0;
}

int fix_is(const struct fix_msg *m, uint32_t tag, const char *s)
{
	size_t len;
	const char *v = fix_get(m, tag, &len);

	return v && len == strlen(s) && !memcmp(v, s, len);
}

/* ---- writing -------------------------------------------------------- */

static void fix_put(struct fix_writer *w, const char *s, size_t n)
{
	if (w->overflow || w->pos + n > w->cap) {
		w->overflow = 1;
		return;
	}
	memcpy(w->buf + w->pos, s, n);
	w->pos += n;
}

/* Decimal digits of v, right-aligned ending at end; returns the first.
 * The writer runs once per field of every message sent: printf's
 * machinery was a tenth of the venue's time at 100,000 messages/s. */
static char *fix_utoa(uint64_t v, char *end)
{
	do
		*--end = (char)('0' + v % 10);
	while (v /= 10);
	return end;
}

void fix_add(struct fix_writer *w, uint32_t tag, const char *value, size_t len)
{
	char t[16], *p = fix_utoa(tag, t + sizeof(t) - 1);

	t[sizeof(t) - 1] = '=';
	fix_put(w, p, (size_t)(t + sizeof(t) - p));
	fix_put(w, value, len);
	fix_put(w, "\x01", 1);
}

void fix_add_str(struct fix_writer *w, uint32_t tag, const char *value)
{
	fix_add(w, tag, value, strlen(value));
}

void fix_add_int(struct fix_writer *w, uint32_t tag, int64_t value)
{
	char v[24], *p;
	uint64_t mag = value < 0 ? (uint64_t)0 - (uint64_t)value : (uint64_t)value;

	p = fix_utoa(mag, v + sizeof(v));
	if (value < 0)
		*--p = '-';
	fix_add(w, tag, p, (size_t)(v + sizeof(v) - p));
}

void fix_add_fixed(struct fix_writer *w, uint32_t tag, int64_t units,
		   unsigned decimals)
{
	uint64_t mag = units < 0 ? (uint64_t)0 - (uint64_t)units : (uint64_t)units;
	uint64_t scale = 1;
	char v[48], *p = v + sizeof(v);

	if (decimals > 18)
		decimals = 18;
	for (unsigned i = 0; i < decimals; i++)
		scale *= 10;
	if (decimals) {
		uint64_t frac = mag % scale;

		for (unsigned i = 0; i < decimals; i++, frac /= 10)
			*--p = (char)('0' + frac % 10);
		*--p = '.';
	}
	p = fix_utoa(mag / scale, p);
	if (units < 0)
		*--p = '-';
	fix_add(w, tag, p, (size_t)(v + sizeof(v) - p));
}

void fix_begin(struct fix_writer *w, char *buf, size_t cap,
	       const char *begin_string, const char *msg_type)
{
	w->buf = buf;
	w->cap = cap;
	w->start = 0;
	w->pos = FIX_HEADER_ROOM;
	w->overflow = cap < FIX_HEADER_ROOM || strlen(begin_string) > 12;
	w->begin = begin_string;
	fix_add_str(w, 35, msg_type);
}

const char *fix_end(struct fix_writer *w, size_t *len)
{
	char head[FIX_HEADER_ROOM + 1], tail[8];
	unsigned sum = 0;
	int hl;

	if (w->overflow)
		return NULL;
	hl = snprintf(head, sizeof(head), "8=%s\x01" "9=%zu\x01", w->begin,
		      w->pos - FIX_HEADER_ROOM);
	if (hl < 0 || hl > FIX_HEADER_ROOM)
		return NULL;
	w->start = FIX_HEADER_ROOM - (size_t)hl;
	memcpy(w->buf + w->start, head, (size_t)hl);
	for (size_t i = w->start; i < w->pos; i++)
		sum += (unsigned char)w->buf[i];
	snprintf(tail, sizeof(tail), "10=%03u\x01", sum % 256);
	fix_put(w, tail, 7);
	if (w->overflow)
		return NULL;
	*len = w->pos - w->start;
	return w->buf + w->start;
}

void fix_utc_cache_init(struct fix_utc_cache *c)
{
	c->sec = INT64_MIN;
	c->text[0] = 0;
}

const char *fix_utc_time(struct fix_utc_cache *c, int64_t real_ns,
			 char out[FIX_UTC_LEN])
{
	return fix_utc_time_digits(c, real_ns, 3, out);
}

const char *fix_utc_time_digits(struct fix_utc_cache *c, int64_t real_ns,
				unsigned digits, char out[FIX_UTC_LEN])
{
	int64_t sec = real_ns / NS_PER_S - (real_ns % NS_PER_S < 0);
	int64_t frac = real_ns - sec * NS_PER_S;
	size_t n;

	if (sec != c->sec) {
		time_t t = (time_t)sec;
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(c->text, sizeof(c->text), "%Y%m%d-%H:%M:%S", &tm);
		c->sec = sec;
	}
	n = strlen(c->text);
	memcpy(out, c->text, n);
	out[n++] = '.';
	if (digits != 6 && digits != 9)
		digits = 3;
	/* The digits of the second, cut (not rounded) to their count. */
	for (unsigned i = 9; i > digits; i--)
		frac /= 10;
	for (unsigned i = digits; i > 0; i--) {
		out[n + i - 1] = (char)('0' + frac % 10);
		frac /= 10;
	}
	out[n + digits] = 0;
	return out;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian). */
static int64_t fix_days(int64_t y, unsigned m, unsigned d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = y / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* n digits at p as a number, or -1 when one is not a digit. */
static int64_t fix_digits(const char *p, unsigned n)
{
	int64_t v = 0;

	for (unsigned i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		v = v * 10 + (p[i] - '0');
	}
	return v;
}

int fix_utc_parse(const char *v, size_t len, int64_t *ns, unsigned *digits)
{
	static const unsigned mdays[12] = {
		31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31,
	};
	int64_t y, mo, d, h, mi, s, frac = 0;
	unsigned n = 0;

	if (len < 17 || v[8] != '-' || v[11] != ':' || v[14] != ':')
		return -EINVAL;
	y = fix_digits(v, 4);
	mo = fix_digits(v + 4, 2);
	d = fix_digits(v + 6, 2);
	h = fix_digits(v + 9, 2);
	mi = fix_digits(v + 12, 2);
	s = fix_digits(v + 15, 2);
	/* 2262-04-11 is past what 64-bit nanoseconds since 1970 hold. */
	if (y < 1970 || y > 2261 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] ||
	    (mo == 2 && d == 29 && (y % 4 || (y % 100 == 0 && y % 400))) ||
	    h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 60)
		return -EINVAL;
	if (len > 17) {
		n = (unsigned)(len - 18);
		if (v[17] != '.' || n < 1 || n > 9 ||
		    (frac = fix_digits(v + 18, n)) < 0)
			return -EINVAL;
		for (unsigned i = n; i < 9; i++)
			frac *= 10;
	}
	*ns = ((fix_days(y, (unsigned)mo, (unsigned)d) * 24 + h) * 60 + mi) *
	      60 * NS_PER_S + s * NS_PER_S + frac;
	*digits = n;
	return 0;
}
