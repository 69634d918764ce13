/* Axes: ranges and ticks at round values (1-2-2.5-5 steps, powers of two
 * for concurrency, 1-2-5 decades for latencies) and their labels with SI
 * suffixes, so a reader never sees 24316.7 on an axis. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "chart/chart_impl.h"

static void trim_zeros(char *s)
{
	char *dot = strchr(s, '.');
	char *end;
	if (!dot)
		return;
	end = s + strlen(s);
	while (end > dot + 1 && end[-1] == '0')
		*--end = '\0';
	if (end == dot + 1)
		*dot = '\0';
}

void tt__fmt_si(double v, char *buf, size_t len)
{
	static const struct {
		double f;
		const char *sfx;
	} si[] = {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "K"}};
	double a = fabs(v);
	char num[32];
	if (!isfinite(v)) {
		snprintf(buf, len, "—");
		return;
	}
	for (size_t i = 0; i < sizeof si / sizeof si[0]; i++) {
		if (a >= si[i].f * 0.9995) {
			snprintf(num, sizeof num, "%.2f", v / si[i].f);
			trim_zeros(num);
			snprintf(buf, len, "%s%s", num, si[i].sfx);
			return;
		}
	}
	if (a == 0)
		snprintf(num, sizeof num, "0");
	else if (a >= 100)
		snprintf(num, sizeof num, "%.0f", v);
	else if (a >= 1)
		snprintf(num, sizeof num, "%.2f", v);
	else
		snprintf(num, sizeof num, "%.3g", v);
	if (strchr(num, '.') && !strchr(num, 'e'))
		trim_zeros(num);
	snprintf(buf, len, "%s", num);
}

void tt__fmt_tokens(int64_t v, char *buf, size_t len)
{
	/* Contexts are written as the seed report writes them: K = 1024, and
	 * 128000 is "125K". */
	if (v >= 1048576 && v % 1048576 == 0)
		snprintf(buf, len, "%lldM", (long long)(v / 1048576));
	else if (v >= 1024 && v % 1024 == 0)
		snprintf(buf, len, "%lldK", (long long)(v / 1024));
	else if (v >= 1024 && (v * 10) % 1024 == 0)
		snprintf(buf, len, "%.1fK", (double)v / 1024);
	else
		snprintf(buf, len, "%lld", (long long)v);
}

static void fmt_number(double v, char *buf, size_t len)
{
	snprintf(buf, len, "%.3g", v);
	if (!strchr(buf, 'e'))
		trim_zeros(buf);
}

void tt__axis_format(enum axis_unit u, double v, char *buf, size_t len)
{
	char num[32];
	switch (u) {
	case UNIT_MS:
		if (fabs(v) >= 1000) {
			fmt_number(v / 1000, num, sizeof num);
			snprintf(buf, len, "%s s", num);
		} else {
			fmt_number(v, num, sizeof num);
			snprintf(buf, len, "%s ms", num);
		}
		return;
	case UNIT_TOKENS:
		tt__fmt_tokens((int64_t)llround(v), buf, len);
		return;
	case UNIT_PERCENT:
		fmt_number(v * 100, num, sizeof num);
		snprintf(buf, len, "%s %%", num);
		return;
	case UNIT_SECONDS:
		fmt_number(v, num, sizeof num);
		snprintf(buf, len, "%s s", num);
		return;
	case UNIT_PLAIN:
		if (fabs(v) < 1e4 && v == floor(v))
			snprintf(buf, len, "%.0f", v);
		else
			tt__fmt_si(v, buf, len);
		return;
	case UNIT_SI:
	default:
		tt__fmt_si(v, buf, len);
		return;
	}
}

static double nice_step(double span, int target)
{
	static const double mult[] = {1, 2, 2.5, 5, 10};
	double raw = span / target;
	double mag = pow(10, floor(log10(raw)));
	for (size_t i = 0; i < sizeof mult / sizeof mult[0]; i++)
		if (mult[i] * mag >= raw)
			return mult[i] * mag;
	return 10 * mag;
}

static void fit_linear(struct axis *a, double dmin, double dmax, int from_zero)
{
	double step, lo, hi;
	if (from_zero && dmin > 0)
		dmin = 0;
	if (dmax <= dmin)
		dmax = dmin + (dmin == 0 ? 1 : fabs(dmin) * 0.5);
	step = nice_step(dmax - dmin, 5);
	lo = floor(dmin / step + 1e-9) * step;
	hi = ceil(dmax / step - 1e-9) * step;
	/* Leave headroom so the highest point is not on the frame. */
	if (hi - dmax < step * 0.05)
		hi += step;
	a->lo = lo;
	a->hi = hi;
	a->n_ticks = 0;
	for (double t = lo; t <= hi + step * 1e-6 && a->n_ticks < AXIS_MAX_TICKS; t += step)
		a->ticks[a->n_ticks++] = fabs(t) < step * 1e-9 ? 0 : t;
}

static void fit_log2(struct axis *a, double dmin, double dmax)
{
	int e0, e1, every;
	if (!(dmin > 0))
		dmin = 1;
	if (dmax < dmin)
		dmax = dmin;
	e0 = (int)floor(log2(dmin) + 1e-9);
	e1 = (int)ceil(log2(dmax) - 1e-9);
	if (e1 == e0)
		e1 = e0 + 1;
	every = (e1 - e0) > 12 ? 2 : 1;
	a->n_ticks = 0;
	for (int e = e0; e <= e1 && a->n_ticks < AXIS_MAX_TICKS; e += every)
		a->ticks[a->n_ticks++] = ldexp(1, e);
	/* A little air on both sides keeps end markers off the frame. */
	a->lo = ldexp(1, e0) / pow(2, 0.25);
	a->hi = ldexp(1, e1) * pow(2, 0.25);
}

static void fit_log10(struct axis *a, double dmin, double dmax)
{
	static const double steps[] = {1, 2, 5};
	int d0, d1;
	if (!(dmin > 0))
		dmin = dmax > 0 ? dmax / 10 : 1;
	if (dmax < dmin)
		dmax = dmin;
	d0 = (int)floor(log10(dmin) + 1e-9);
	d1 = (int)ceil(log10(dmax) - 1e-9);
	if (d1 == d0)
		d1 = d0 + 1;
	/* Tighten to 1-2-5 bounds around the data so two decades of data do
	 * not get four decades of axis. */
	a->lo = pow(10, d0);
	for (size_t i = 0; i < 3; i++)
		if (steps[i] * pow(10, d0) <= dmin * (1 + 1e-9))
			a->lo = steps[i] * pow(10, d0);
	a->hi = pow(10, d1);
	for (int i = 2; i >= 0; i--)
		if (steps[i] * pow(10, d1 - 1) >= dmax * (1 - 1e-9))
			a->hi = steps[i] * pow(10, d1 - 1);
	/* A constant series on a 1-2-5 value (every TBT 0.02 ms) made lo ==
	 * hi, and the mapping divided by zero: NaN reached cairo, whose
	 * context then failed the whole PDF.  Widen to the values around. */
	if (!(a->hi > a->lo * (1 + 1e-9))) {
		a->lo /= 2;
		a->hi *= 2;
	}
	a->n_ticks = 0;
	a->n_minor = 0;
	for (int d = d0; d <= d1; d++) {
		for (int m = 1; m <= 9; m++) {
			double t = m * pow(10, d);
			int major = (d1 - d0 > 4) ? m == 1 : (m == 1 || m == 2 || m == 5);
			if (t < a->lo * (1 - 1e-9) || t > a->hi * (1 + 1e-9))
				continue;
			if (major && a->n_ticks < AXIS_MAX_TICKS)
				a->ticks[a->n_ticks++] = t;
			else if (!major && a->n_minor < AXIS_MAX_TICKS * 4)
				a->minor[a->n_minor++] = t;
		}
	}
	/* Same air as log2, in decades. */
	{
		double span = log10(a->hi) - log10(a->lo);
		a->lo /= pow(10, span * 0.03);
		a->hi *= pow(10, span * 0.03);
	}
}

void tt__axis_fit(struct axis *a, enum axis_scale s, enum axis_unit u, double dmin, double dmax,
	      int from_zero)
{
	double p0 = a->p0, p1 = a->p1;
	memset(a, 0, sizeof *a);
	a->p0 = p0;
	a->p1 = p1;
	a->scale = s;
	a->unit = u;
	if (!isfinite(dmin) || !isfinite(dmax)) {
		dmin = 0;
		dmax = 1;
	}
	switch (s) {
	case AXIS_LOG2:
		fit_log2(a, dmin, dmax);
		break;
	case AXIS_LOG10:
		fit_log10(a, dmin, dmax);
		break;
	case AXIS_LINEAR:
	default:
		fit_linear(a, dmin, dmax, from_zero);
		break;
	}
}

static double axis_f(const struct axis *a, double v)
{
	switch (a->scale) {
	case AXIS_LOG2:
		return log2(v);
	case AXIS_LOG10:
		return log10(v);
	case AXIS_LINEAR:
	default:
		return v;
	}
}

double tt__axis_map(const struct axis *a, double v)
{
	double f0 = axis_f(a, a->lo), f1 = axis_f(a, a->hi);
	if (a->scale != AXIS_LINEAR && !(v > 0))
		return NAN;
	if (!(f1 != f0)) /* a degenerate axis: the middle, never NaN */
		return (a->p0 + a->p1) / 2;
	return a->p0 + (axis_f(a, v) - f0) / (f1 - f0) * (a->p1 - a->p0);
}
