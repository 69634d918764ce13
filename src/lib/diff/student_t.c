/* Student's t distribution: its upper tail and quantile, for the diff's
 * intervals and verdicts (docs/diff.md "Method"): the regularized
 * incomplete beta by Lentz's continued fraction (Numerical Recipes 6.4). */
#include "diff/diff_impl.h"

#include <math.h>

/* Continued fraction of the regularized incomplete beta (Lentz's method). */
static double betacf(double a, double b, double x)
{
	const double tiny = 1e-300;
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;

	d = 1 / (fabs(d) < tiny ? tiny : d);
	h = d;
	for (int m = 1; m <= 300; m++) {
		double m2 = 2.0 * m, aa, del;
		aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
		d = 1 + aa * d;
		c = 1 + aa / c;
		d = 1 / (fabs(d) < tiny ? tiny : d);
		c = fabs(c) < tiny ? tiny : c;
		h *= d * c;
		aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
		d = 1 + aa * d;
		c = 1 + aa / c;
		d = 1 / (fabs(d) < tiny ? tiny : d);
		c = fabs(c) < tiny ? tiny : c;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < 1e-14)
			break;
	}
	return h;
}

static double ibeta(double a, double b, double x)
{
	double bt;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	bt = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log(1 - x));
	if (x < (a + 1) / (a + b + 2))
		return bt * betacf(a, b, x) / a;
	return 1 - bt * betacf(b, a, 1 - x) / b;
}

/* P(T > t) for Student's t with df degrees of freedom, t >= 0 (the normal
 * beyond a million). */
double tt__t_upper(double t, double df)
{
	if (df > 1e6)
		return 0.5 * erfc(t / sqrt(2.0));
	return 0.5 * ibeta(df / 2, 0.5, df / (df + t * t));
}

/* x with P(T > x) = q, by bisection. */
double tt__t_quantile_upper(double q, double df)
{
	double lo = 0, hi = 1;

	while (tt__t_upper(hi, df) > q && hi < 1e12)
		hi *= 2;
	for (int i = 0; i < 200; i++) {
		double mid = (lo + hi) / 2;
		if (mid == lo || mid == hi)
			break; /* converged: further steps change nothing */
		if (tt__t_upper(mid, df) > q)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}
