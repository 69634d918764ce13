/* See c_locale.h. */
#include "core/c_locale.h"

#include <errno.h>
#include <locale.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static locale_t c_loc = (locale_t)0;
static pthread_once_t c_once = PTHREAD_ONCE_INIT;

/* Made once and kept for the life of the process.  Should newlocale fail
 * (out of memory), calls run in the thread's current locale. */
static void make_c_locale(void)
{
	c_loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

static locale_t enter_c(void)
{
	pthread_once(&c_once, make_c_locale);
	return c_loc ? uselocale(c_loc) : (locale_t)0;
}

static void leave_c(locale_t old)
{
	if (old)
		uselocale(old);
}

int tt__snprintf_c(char *buf, size_t len, const char *fmt, ...)
{
	locale_t old = enter_c();
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	leave_c(old);
	return n;
}

double tt__strtod_c(const char *s, char **end)
{
	locale_t old = enter_c();
	double v = strtod(s, end);
	int e = errno; /* ERANGE is the caller's to see */

	leave_c(old);
	errno = e;
	return v;
}
