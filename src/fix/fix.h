/* fix.h — FIX tag=value messages (FIX 4.x, as FIX 4.4 frames them):
 * finding message boundaries in a byte stream, checking BodyLength (9) and
 * CheckSum (10), reading fields by tag, and writing messages.
 *
 * No allocation anywhere: a parsed message is an index of (tag, offset,
 * length) over the caller's bytes, and the writer fills the caller's buffer.
 * Shared by the probes (which speak FIX) and the correlator (which reads it
 * off captures), so both see a message the same way.
 *
 * A message is: 8=BeginString SOH 9=BodyLength SOH 35=MsgType SOH ... SOH
 * 10=CheckSum SOH, where BodyLength counts the bytes from the one after the
 * SOH ending 9= up to and including the SOH before 10=, and CheckSum is the
 * sum of every byte before "10=", modulo 256, as three digits.
 */
#ifndef TAPLESS_FIX_H
#define TAPLESS_FIX_H

#include <stddef.h>
#include <stdint.h>

#define FIX_SOH '\x01'
#define FIX_MAX_FIELDS 512	/* fields indexed per message */

enum fix_error {
	FIX_OK,
	FIX_E_BEGIN,		/* does not start with 8= */
	FIX_E_BODYLENGTH,	/* 9= missing, not a number, or wrong */
	FIX_E_TOO_LONG,		/* declared length over the caller's limit */
	FIX_E_CHECKSUM,		/* 10= missing, malformed, or wrong */
	FIX_E_FIELD,		/* a field without '=' or a tag not a number */
	FIX_E_MSGTYPE,		/* 35= missing or not third */
	FIX_E_TOO_MANY,		/* more than FIX_MAX_FIELDS fields */
};

struct fix_field {
	uint32_t tag;
	uint32_t off;		/* of the value, in the message */
	uint32_t len;		/* of the value */
};

struct fix_msg {
	const char *buf;	/* the whole message, 8= to the final SOH */
	uint32_t len;
	uint32_t nfields;
	struct fix_field f[FIX_MAX_FIELDS];
};

/* Where the first message in buf[0..len) ends. Returns its length when it is
 * all there, 0 when more bytes are needed, or -EBADMSG when buf does not
 * start a message (or declares a body longer than max_len): then *skip is
 * how many bytes to drop to reach the next "8=" that could start one, and
 * *why says what was wrong. Checks framing only, not the checksum. */
int fix_frame(const char *buf, size_t len, size_t max_len, size_t *skip,
	      enum fix_error *why);

/* Index one whole message (as fix_frame() delimited it) and check its
 * BodyLength and CheckSum. Returns 0 or -EBADMSG with *why set. */
int fix_parse(struct fix_msg *m, const char *buf, size_t len,
	      enum fix_error *why);

/* The first value of tag: a pointer into the message (not NUL-terminated)
 * and its length, or NULL. */
const char *fix_get(const struct fix_msg *m, uint32_t tag, size_t *len);

/* The next occurrence of tag after field index *pos (start with *pos = -1):
 * the way through a repeating group (268 NoMDEntries, then 269/270/55 per
 * entry). Returns the value or NULL; *pos is its index. */
const char *fix_next(const struct fix_msg *m, uint32_t tag, int *pos,
		     size_t *len);

/* A value as a signed integer; 0 or -EINVAL (absent, empty, not a number,
 * overflow). */
int fix_get_int(const struct fix_msg *m, uint32_t tag, int64_t *v);

/* Value equals the NUL-terminated string s. */
int fix_is(const struct fix_msg *m, uint32_t tag, const char *s);

const char *fix_error_name(enum fix_error e);

/* Writing: fix_begin(), fields, fix_end(). The body is written after room
 * kept for the header, which fix_end() writes in front of it once the body
 * length is known. */
struct fix_writer {
	char *buf;
	size_t cap;
	size_t start;		/* where the message starts, after fix_end() */
	size_t pos;		/* next byte */
	int overflow;
	const char *begin;	/* BeginString */
};

#define FIX_HEADER_ROOM 32	/* "8=FIX.4.4|9=NNNNNNN|" and more */

void fix_begin(struct fix_writer *w, char *buf, size_t cap,
	       const char *begin_string, const char *msg_type);
void fix_add(struct fix_writer *w, uint32_t tag, const char *value,
	     size_t len);
void fix_add_str(struct fix_writer *w, uint32_t tag, const char *value);
void fix_add_int(struct fix_writer *w, uint32_t tag, int64_t value);
/* A price with decimals digits after the point, from an integer count of
 * 10^-decimals units (FIX prices without floating-point rounding). */
void fix_add_fixed(struct fix_writer *w, uint32_t tag, int64_t units,
		   unsigned decimals);

/* Close the message: header and checksum. Returns the message (a pointer
 * into buf) and its length in *len, or NULL when it did not fit. */
const char *fix_end(struct fix_writer *w, size_t *len);

/* A UTCTimestamp, YYYYMMDD-HH:MM:SS.sss with 3 (ms), 6 (us) or 9 (ns)
 * digits of the second, as SendingTime (52) and TransactTime (60) carry
 * it. Formatting the date and time of day costs more than the rest of a
 * message, so the text of the last whole second is kept in a cache; set
 * cache->sec to INT64_MIN before first use (fix_utc_cache_init). */
#define FIX_UTC_LEN 28			/* with 9 digits and the NUL */
struct fix_utc_cache {
	int64_t sec;
	char text[24];
};

void fix_utc_cache_init(struct fix_utc_cache *c);

/* real_ns is nanoseconds since the epoch, UTC; before 1970 it rounds down
 * (cut, as a clock read to ms is). With milliseconds; fix_utc_time_digits
 * with digits 3, 6 or 9. Returns out. */
const char *fix_utc_time(struct fix_utc_cache *c, int64_t real_ns,
			 char out[FIX_UTC_LEN]);
const char *fix_utc_time_digits(struct fix_utc_cache *c, int64_t real_ns,
				unsigned digits, char out[FIX_UTC_LEN]);

/* A UTCTimestamp's value (len bytes at v, not NUL-terminated): *ns since
 * the epoch, UTC, and *digits of the second it gave (0 to 9). Returns 0,
 * or -EINVAL when it is not YYYYMMDD-HH:MM:SS[.d...] with a real date
 * (years 1970 to 2261, what 64-bit nanoseconds hold; a leap second, :60, is taken as the next second's
 * start, as a UTC clock cannot say it). */
int fix_utc_parse(const char *v, size_t len, int64_t *ns, unsigned *digits);

#endif
