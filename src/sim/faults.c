/* Fault injection: `--fault KIND[:SECONDS]@WHEN[,after=N]` (docs/sim.md). */
#include "faults.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name;
	enum fault_kind kind;
	int needs_seconds, mid_stream;
} kinds[] = {
	{"500", FAULT_HTTP500, 0, 0},
	{"429", FAULT_HTTP429, 0, 0},
	{"503", FAULT_HTTP503, 0, 0},
	{"reset", FAULT_RESET, 0, 1},
	{"stall", FAULT_STALL, 1, 1},
	{"malformed", FAULT_MALFORMED, 0, 1},
	{"error", FAULT_ERROR_EVENT, 0, 1},
	{"slowheaders", FAULT_SLOW_HEADERS, 1, 0},
	{"nodone", FAULT_NO_DONE, 0, 0},
};

/* xorshift64*: deterministic per --seed, so a rate fault hits the same
 * request numbers on every run with the same arrival order. */
static uint64_t sim_rand(uint64_t *state)
{
	uint64_t x = *state ? *state : 0x9E3779B97F4A7C15ULL;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	if (!*s || *s == '-')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end || errno)
		return -1;
	*out = v;
	return 0;
}

int fault_parse(const char *spec, struct fault_spec *out, char *err, size_t errlen)
{
	char buf[256], *at, *kind, *colon, *when, *save = NULL;
	size_t k;

	memset(out, 0, sizeof *out);
	out->after = 2;
	if (strlen(spec) >= sizeof buf) {
		snprintf(err, errlen, "fault spec too long");
		return -1;
	}
	strcpy(buf, spec);
	at = strchr(buf, '@');
	if (!at) {
		snprintf(err, errlen, "'%s': expected KIND[:SECONDS]@WHEN, e.g. 500@rate=0.05 "
			 "or reset@req=7", spec);
		return -1;
	}
	*at = '\0';
	kind = buf;
	when = at + 1;
	colon = strchr(kind, ':');
	if (colon)
		*colon++ = '\0';
	for (k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
		if (!strcmp(kind, kinds[k].name))
			break;
	if (k == sizeof kinds / sizeof kinds[0]) {
		snprintf(err, errlen, "'%s': unknown fault kind '%s' (one of 500, 429, 503, reset, "
			 "stall:S, malformed, error, slowheaders:S, nodone)", spec, kind);
		return -1;
	}
	out->kind = kinds[k].kind;
	if (kinds[k].needs_seconds) {
		char *end;
		if (!colon || !*colon) {
			snprintf(err, errlen, "'%s': fault '%s' needs a duration, e.g. %s:2",
				 spec, kind, kind);
			return -1;
		}
		out->seconds = strtod(colon, &end);
		if (*end || !(out->seconds >= 0) || out->seconds > 3600) {
			snprintf(err, errlen, "'%s': '%s' is not a duration in seconds (0..3600)",
				 spec, colon);
			return -1;
		}
	} else if (colon) {
		snprintf(err, errlen, "'%s': fault '%s' takes no ':' argument", spec, kind);
		return -1;
	}
	int have_when = 0;
	for (char *item = strtok_r(when, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');
		if (!eq) {
			snprintf(err, errlen, "'%s': '%s' is not key=value", spec, item);
			return -1;
		}
		*eq++ = '\0';
		if (!strcmp(item, "rate")) {
			char *end;
			out->rate = strtod(eq, &end);
			if (*end || !*eq || !(out->rate > 0) || out->rate > 1) {
				snprintf(err, errlen, "'%s': rate '%s' is not a probability in (0, 1]",
					 spec, eq);
				return -1;
			}
			have_when = 1;
		} else if (!strcmp(item, "req")) {
			if (parse_u64(eq, &out->req) || !out->req) {
				snprintf(err, errlen, "'%s': req '%s' is not a request number >= 1",
					 spec, eq);
				return -1;
			}
			have_when = 1;
		} else if (!strcmp(item, "every")) {
			if (parse_u64(eq, &out->every) || !out->every) {
				snprintf(err, errlen, "'%s': every '%s' is not a number >= 1", spec, eq);
				return -1;
			}
			have_when = 1;
		} else if (!strcmp(item, "after")) {
			uint64_t a;
			if (parse_u64(eq, &a) || a > 1000000000) {
				snprintf(err, errlen, "'%s': after '%s' is not a token count", spec, eq);
				return -1;
			}
			out->after = (int64_t)a;
		} else {
			snprintf(err, errlen, "'%s': unknown key '%s' (rate, req, every, after)",
				 spec, item);
			return -1;
		}
	}
	if (!have_when) {
		snprintf(err, errlen, "'%s': say when: rate=P, req=N or every=N", spec);
		return -1;
	}
	return 0;
}

struct fault_spec fault_pick(const struct fault_spec *faults, int n, uint64_t *rng,
			     uint64_t req_no)
{
	struct fault_spec pick;
	int picked = 0;
	memset(&pick, 0, sizeof pick);
	for (int i = 0; i < n; i++) {
		const struct fault_spec *f = &faults[i];
		int hit = 0;
		if (f->req && f->req == req_no)
			hit = 1;
		if (f->every && req_no % f->every == 0)
			hit = 1;
		/* draw for every rate fault on every request so the stream of
		 * draws, and so the victims, depend only on the seed */
		if (f->rate > 0) {
			double u = (double)(sim_rand(rng) >> 11) / 9007199254740992.0;
			if (u < f->rate)
				hit = 1;
		}
		if (hit && !picked) {
			pick = *f;
			picked = 1;
		}
	}
	return pick;
}
