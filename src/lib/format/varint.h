/* Internal: LEB128 varints and zigzag, as formats/run-v1.md section 3.2 defines. */
#ifndef TT_VARINT_H
#define TT_VARINT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline size_t tt_put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

static inline uint64_t tt_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t tt_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Cursor over a record payload; ok turns 0 on overrun and stays 0. */
struct tt_cursor {
	const uint8_t *p, *end;
	int ok;
};

#if defined(__GNUC__)
#define TT_ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define TT_ALWAYS_INLINE inline
#endif

/* Slow path: multi-byte values and overrun checks. */
static uint64_t tt_get_varint_slow(struct tt_cursor *c)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (c->p < c->end) {
		uint8_t b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
		shift += 7;
		if (shift >= 70)
			break;
	}
	c->ok = 0;
	c->p = c->end;
	return 0;
}

/* Per-chunk hot path: most values fit in one, two or three bytes (a gap
 * of up to 2 s in microseconds); the rest, and the last bytes of a
 * payload, take the slow path, which decodes them the same. */
static TT_ALWAYS_INLINE uint64_t tt_get_varint(struct tt_cursor *c)
{
	const uint8_t *p = c->p;

	if (c->end - p >= 3) {
		uint64_t v = p[0];
		if (v < 0x80) {
			c->p = p + 1;
			return v;
		}
		v = (v & 0x7f) | (uint64_t)(p[1] & 0x7f) << 7;
		if (p[1] < 0x80) {
			c->p = p + 2;
			return v;
		}
		if (p[2] < 0x80) {
			c->p = p + 3;
			return v | (uint64_t)p[2] << 14;
		}
	}
	return tt_get_varint_slow(c);
}

static inline int64_t tt_get_svarint(struct tt_cursor *c)
{
	return tt_unzigzag(tt_get_varint(c));
}

static inline uint8_t tt_get_u8(struct tt_cursor *c)
{
	if (c->p >= c->end) {
		c->ok = 0;
		return 0;
	}
	return *c->p++;
}

static inline double tt_get_f64(struct tt_cursor *c)
{
	uint64_t u = 0;
	double d;

	if (c->end - c->p < 8) {
		c->ok = 0;
		c->p = c->end;
		return 0;
	}
	for (int i = 7; i >= 0; i--)
		u = (u << 8) | c->p[i];
	c->p += 8;
	memcpy(&d, &u, sizeof d);
	return d;
}

/* A str field: returns a pointer into the payload (not NUL-terminated). */
static inline const uint8_t *tt_get_str(struct tt_cursor *c, size_t *len)
{
	uint64_t n = tt_get_varint(c);
	const uint8_t *s = c->p;

	if (!c->ok || n > (uint64_t)(c->end - c->p)) {
		c->ok = 0;
		c->p = c->end;
		*len = 0;
		return NULL;
	}
	c->p += n;
	*len = (size_t)n;
	return s;
}

#endif
