/* Numbers as text in the "C" locale, whatever locale the program chose.
 *
 * Our files and reports (formats/) write and read '.' as the decimal point.
 * printf's %f/%g and strtod follow LC_NUMERIC, which is "C" until a program
 * calls setlocale(LC_ALL, ""); a program that embeds the library in Germany
 * then gets "1,5".  These switch the calling thread to a "C" locale object
 * (uselocale) for the one call, so other threads and the caller's locale are
 * untouched.  cJSON needs none of this: it swaps the locale's decimal point
 * for '.' itself, printing and parsing. */
#ifndef TT_CORE_C_LOCALE_H
#define TT_CORE_C_LOCALE_H

#include <stddef.h>

/* snprintf with '.' as the decimal point. */
int tt__snprintf_c(char *buf, size_t len, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;
/* strtod reading '.' as the decimal point (and not the locale's). */
double tt__strtod_c(const char *s, char **end);

#endif
