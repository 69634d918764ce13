/* Prometheus text exposition parser: see protocol/prom.h and
 * formats/prometheus-subset.md.
 *
 * The text is copied once and cut up in place (names, labels and values are
 * NUL-terminated inside the copy), so a scrape of a few thousand series costs
 * one allocation for the text and one for the sample array. */
#include "protocol/prom.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int is_name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}

static int is_name_char(char c)
{
	return is_name_start(c) || (c >= '0' && c <= '9');
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);
	return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* Value token (NUL-terminated) to double; 0 when it is not a number. */
static int parse_value(const char *tok, double *out)
{
	char *end = NULL;

	if (strcasecmp(tok, "nan") == 0) {
		*out = NAN;
		return 1;
	}
	if (strcasecmp(tok, "+inf") == 0 || strcasecmp(tok, "inf") == 0) {
		*out = INFINITY;
		return 1;
	}
	if (strcasecmp(tok, "-inf") == 0) {
		*out = -INFINITY;
		return 1;
	}
	/* strtod would take hex floats and "infinity"; Prometheus writes neither,
	 * but accepting them does no harm.  An empty token is not a value. */
	if (!*tok)
		return 0;
	*out = strtod(tok, &end);
	return end && *end == '\0';
}

/* Parse one line (NUL-terminated, in place).  Returns 1 and fills *s for a
 * sample, 0 for a line to skip silently, -1 for a bad line. */
static int parse_line(char *line, struct tt_sample *s)
{
	static const char empty[] = "";
	char *p = line, *name, *labels = NULL, *value;
	size_t name_len;

	while (is_blank(*p))
		p++;
	if (*p == '\0' || *p == '#')
		return 0;
	if (!is_name_start(*p))
		return -1;
	name = p;
	while (is_name_char(*p))
		p++;
	name_len = (size_t)(p - name);
	if (*p == '{') {
		int in_quote = 0;
		*p++ = '\0';
		labels = p;
		/* Find the closing brace outside quoted values; a quote inside a
		 * value is escaped as \" and a backslash as \\. */
		for (; *p; p++) {
			if (in_quote) {
				if (*p == '\\' && p[1])
					p++;
				else if (*p == '"')
					in_quote = 0;
			} else if (*p == '"') {
				in_quote = 1;
			} else if (*p == '}') {
				break;
			}
		}
		if (*p != '}')
			return -1;
		*p++ = '\0';
	} else if (is_blank(*p)) {
		*p++ = '\0';
	} else {
		return -1;
	}
	while (is_blank(*p))
		p++;
	value = p;
	while (*p && !is_blank(*p))
		p++;
	if (*p)
		*p++ = '\0';
	/* An optional timestamp may follow; it is the scrape time on the server
	 * and of no use next to our own arrival time. */
	if (!parse_value(value, &s->value))
		return -1;
	if (ends_with(name, name_len, "_created"))
		return 0;
	s->name = name;
	s->labels = labels ? labels : empty;
	return 1;
}

enum tt_code tt_prom_parse(const char *text, size_t len, struct tt_prom **out,
			   struct tt_error *err)
{
	struct tt_prom *p = NULL;
	enum tt_code rc = TT_OK;
	size_t cap = 0, line_no = 0, first_bad = 0;
	char *line, *end;

	if (!out || (!text && len))
		return tt_error_set(err, TT_EARG, "prometheus parse: no text");
	p = calloc(1, sizeof *p);
	if (!p)
		goto nomem;
	p->store_ = malloc(len + 1);
	if (!p->store_)
		goto nomem;
	if (len)
		memcpy(p->store_, text, len);
	p->store_[len] = '\0';
	line = p->store_;
	end = p->store_ + len;
	while (line < end) {
		char *nl = memchr(line, '\n', (size_t)(end - line));
		char *next = nl ? nl + 1 : end;
		struct tt_sample s;
		int r;

		line_no++;
		if (nl) {
			*nl = '\0';
			if (nl > line && nl[-1] == '\r')
				nl[-1] = '\0';
		}
		/* A NUL inside the text ends the line early: the rest is junk. */
		r = parse_line(line, &s);
		if (r < 0) {
			if (!p->n_bad_lines)
				first_bad = line_no;
			p->n_bad_lines++;
		} else if (r > 0) {
			if (p->n_samples == cap) {
				size_t ncap = cap ? cap * 2 : 64;
				struct tt_sample *ns = realloc(p->samples, ncap * sizeof *ns);
				if (!ns)
					goto nomem;
				p->samples = ns;
				cap = ncap;
			}
			p->samples[p->n_samples++] = s;
		}
		line = next;
	}
	if (p->n_bad_lines)
		rc = tt_error_setv(err, TT_WARN, TT_EFORMAT,
				  "metrics: %zu line(s) did not parse, first at line %zu",
				  p->n_bad_lines, first_bad);
	*out = p;
	return rc;
nomem:
	tt_prom_free(p);
	return tt_error_set(err, TT_ENOMEM, "metrics: out of memory parsing %zu bytes", len);
}

void tt_prom_free(struct tt_prom *p)
{
	if (!p)
		return;
	free(p->samples);
	free(p->store_);
	free(p);
}

double tt_prom_sum(const struct tt_sample *samples, size_t n, const char *name)
{
	double sum = 0;
	int found = 0;

	for (size_t i = 0; i < n; i++) {
		if (strcmp(samples[i].name, name) != 0)
			continue;
		found = 1;
		if (!isnan(samples[i].value))
			sum += samples[i].value;
	}
	return found ? sum : NAN;
}

const struct tt_sample *tt_prom_find(const struct tt_sample *samples, size_t n,
				     const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(samples[i].name, name) == 0)
			return &samples[i];
	return NULL;
}

int tt_prom_label(const char *labels, const char *key, char *buf, size_t len)
{
	const char *p = labels;
	size_t klen = strlen(key), o = 0;

	if (buf && len)
		buf[0] = '\0';
	if (!p)
		return 0;
	while (*p) {
		const char *k;
		size_t kl;
		int match;

		while (*p == ',' || is_blank(*p))
			p++;
		k = p;
		while (is_name_char(*p))
			p++;
		kl = (size_t)(p - k);
		while (is_blank(*p))
			p++;
		if (kl == 0 || *p != '=')
			return 0;
		p++;
		while (is_blank(*p))
			p++;
		if (*p != '"')
			return 0;
		p++;
		match = kl == klen && memcmp(k, key, kl) == 0;
		for (; *p && *p != '"'; p++) {
			char c = *p;
			if (c == '\\' && p[1]) {
				p++;
				c = *p == 'n' ? '\n' : *p;
			}
			if (match && buf && o + 1 < len)
				buf[o++] = c;
		}
		if (*p != '"')
			return 0;
		p++;
		if (match) {
			if (buf && len)
				buf[o] = '\0';
			return 1;
		}
	}
	return 0;
}
