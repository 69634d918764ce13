/* Strings from outside made safe to show (text_clean.h). */
#include "core/text_clean.h"

#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at p (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF), 0 if invalid; *cp gets the code point. */
static size_t utf8_seq(const unsigned char *p, size_t avail, unsigned long *cp)
{
	unsigned char c = p[0];
	size_t n;
	unsigned long v, min;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xC2 && c <= 0xDF)
		n = 2, v = c & 0x1F, min = 0x80;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3, v = c & 0x0F, min = 0x800;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4, v = c & 0x07, min = 0x10000;
	else
		return 0;
	if (avail < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		v = v << 6 | (p[i] & 0x3F);
	}
	if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
		return 0;
	*cp = v;
	return n;
}

static int is_control(unsigned long cp, int keep_lines)
{
	if (keep_lines && (cp == '\n' || cp == '\t'))
		return 0;
	return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F);
}

int tt__text_is_clean(const char *src, size_t len, int keep_lines)
{
	const unsigned char *p = (const unsigned char *)src;
	size_t i = 0;

	while (i < len) {
		unsigned long cp;
		size_t n;
		if (p[i] >= 0x20 && p[i] < 0x7F) { /* the common case */
			i++;
			continue;
		}
		n = utf8_seq(p + i, len - i, &cp);
		if (!n || is_control(cp, keep_lines))
			return 0;
		i += n;
	}
	return 1;
}

char *tt__text_clean(const char *src, size_t len, size_t max, int keep_lines)
{
	static const char repl[] = "\xEF\xBF\xBD", cut[] = "...";
	const unsigned char *p = (const unsigned char *)src;
	size_t room = (len < max ? len : max), o = 0, i = 0;
	/* Each input byte becomes at most 3 output bytes. */
	char *out = malloc(room * 3 + sizeof cut + 1);

	if (!out)
		return NULL;
	while (i < len) {
		unsigned long cp;
		size_t n = utf8_seq(p + i, len - i, &cp);
		const char *add = src + i;
		size_t alen = n;
		if (!n || is_control(cp, keep_lines)) {
			add = repl;
			alen = 3;
			n = n ? n : 1;
		}
		if (o + alen > max) {
			memcpy(out + o, cut, sizeof cut - 1);
			o += sizeof cut - 1;
			break;
		}
		memcpy(out + o, add, alen);
		o += alen;
		i += n;
	}
	out[o] = '\0';
	return out;
}

void tt__text_scrub(char *s, size_t len)
{
	unsigned char *p = (unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		unsigned long cp;
		size_t n;
		if (p[i] >= 0x20 && p[i] < 0x7F) { /* the common case: kept */
			i++;
			continue;
		}
		n = utf8_seq(p + i, len - i, &cp);
		if (!n || is_control(cp, 0)) {
			/* a control in UTF-8 (C1) is two bytes: both go */
			size_t k = n ? n : 1;
			memset(p + i, '?', k);
			i += k;
			continue;
		}
		i += n;
	}
}
