/* bytes.h — integers in a given byte order at any address.
 *
 * bytes_get_be32(p) reads the 4 bytes at p as a big-endian (network order)
 * number; bytes_put_be32(p, v) writes v there so. le: little-endian (pcapng
 * sections written on x86, txsock records, linuxptp's PORT_STATS_NP).
 * p needs no alignment; the host's own byte order does not matter. Each
 * call touches exactly its 2, 4 or 8 bytes. Signed values: cast (the bits
 * are kept).
 */
#ifndef TAPLESS_BASE_BYTES_H
#define TAPLESS_BASE_BYTES_H

#include <stdint.h>

static inline uint16_t bytes_get_be16(const void *p)
{
	const uint8_t *b = p;

	return (uint16_t)(b[0] << 8 | b[1]);
}

static inline uint32_t bytes_get_be32(const void *p)
{
	const uint8_t *b = p;

	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	       (uint32_t)b[2] << 8 | b[3];
}

static inline uint64_t bytes_get_be64(const void *p)
{
	const uint8_t *b = p;

	return (uint64_t)bytes_get_be32(b) << 32 | bytes_get_be32(b + 4);
}

static inline uint16_t bytes_get_le16(const void *p)
{
	const uint8_t *b = p;

	return (uint16_t)(b[0] | b[1] << 8);
}

static inline uint32_t bytes_get_le32(const void *p)
{
	const uint8_t *b = p;

	return (uint32_t)b[0] | (uint32_t)b[1] << 8 |
	       (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static inline uint64_t bytes_get_le64(const void *p)
{
	const uint8_t *b = p;

	return (uint64_t)bytes_get_le32(b) | (uint64_t)bytes_get_le32(b + 4) << 32;
}

static inline void bytes_put_be16(void *p, uint16_t v)
{
	uint8_t *b = p;

	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

static inline void bytes_put_be32(void *p, uint32_t v)
{
	uint8_t *b = p;

	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
}

static inline void bytes_put_be64(void *p, uint64_t v)
{
	uint8_t *b = p;

	bytes_put_be32(b, (uint32_t)(v >> 32));
	bytes_put_be32(b + 4, (uint32_t)v);
}

static inline void bytes_put_le16(void *p, uint16_t v)
{
	uint8_t *b = p;

	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
}

static inline void bytes_put_le32(void *p, uint32_t v)
{
	uint8_t *b = p;

	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)(v >> 16);
	b[3] = (uint8_t)(v >> 24);
}

static inline void bytes_put_le64(void *p, uint64_t v)
{
	uint8_t *b = p;

	bytes_put_le32(b, (uint32_t)v);
	bytes_put_le32(b + 4, (uint32_t)(v >> 32));
}

#endif
