/* Helpers shared by the tokentrace subcommands. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokentrace/error.h"
#include "tokentrace/import.h"
#include "tokentrace/run.h"
#include "tokentrace/slo.h"
#include "tokentrace/units.h"

#include "commands.h"

/* Messages quote names from runs and archives: a control character (an
 * escape sequence retitling or clearing the terminal, C1 controls as
 * UTF-8) is shown as '?', never sent to the terminal. */
static void put_clean(const char *s, FILE *f)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p; p++) {
		if (*p < 0x20 || *p == 0x7F)
			fputc('?', f);
		else if (*p == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F) {
			fputc('?', f);
			p++;
		} else
			fputc(*p, f);
	}
}

static void report_line(const char *level, const char *fmt, va_list ap)
{
	char msg[4096];

	vsnprintf(msg, sizeof msg, fmt, ap);
	fprintf(stderr, "tokentrace: %s: ", level);
	put_clean(msg, stderr);
	fputc('\n', stderr);
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report_line("error", fmt, ap);
	va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report_line("warning", fmt, ap);
	va_end(ap);
}

/* SIGINT, SIGTERM, SIGHUP: the directories an import is writing or holds
 * are removed (the library installs no handler: it offers the hook), then
 * the signal ends the program as it would have. */
static void on_stop_signal(int sig)
{
	tt_import_abandon();
	signal(sig, SIG_DFL);
	raise(sig);
}

void cli_import_signals(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
		struct sigaction old;
		/* A signal the shell ignores (nohup, a background job) stays so. */
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaction(sigs[i], &sa, NULL);
	}
}

int cli_open_run(const char *path, const char *what, struct tt_run **out, int *warned)
{
	struct tt_error err;
	enum tt_code rc;

	tt_error_clear(&err);
	*out = NULL;
	rc = tt_import_open(path, NULL, out, &err);
	if (tt_failed(rc)) {
		if (what)
			cli_error("%s '%s': %s", what, path, err.msg);
		else
			cli_error("%s", err.msg);
		return -1;
	}
	if (rc == TT_WARN) {
		if (what)
			cli_warn("%s '%s': %s", what, path, err.msg);
		else
			cli_warn("%s", err.msg);
		if (warned)
			*warned = 1;
	}
	return 0;
}

int cli_write_out(const char *path, const char *data, size_t len)
{
	FILE *f = path ? fopen(path, "wb") : stdout;

	if (!f) {
		cli_error("cannot create '%s': %s", path, strerror(errno));
		return -1;
	}
	if (fwrite(data, 1, len, f) != len || (path ? fclose(f) : fflush(f)) != 0) {
		cli_error("cannot write '%s'", path ? path : "standard output");
		return -1;
	}
	return 0;
}

int cli_number(const char *opt, const char *v, double lo, double hi, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (end == v || *end || errno || !(d >= lo && d <= hi)) {
		cli_error("option '%s': '%s' is not a number from %g to %g", opt, v, lo, hi);
		return -1;
	}
	*out = d;
	return 0;
}

int cli_duration(const char *opt, const char *v, const char *example, double *out)
{
	double d = tt_parse_duration(v);

	if (d < 0) {
		cli_error("%s: '%s' is not a duration (e.g. %s)", opt, v, example);
		return -1;
	}
	*out = d;
	return 0;
}

int cli_slo(const char *v, struct tt_slo *slo)
{
	struct tt_error err;

	tt_error_clear(&err);
	if (tt_failed(tt_slo_parse(v, slo, &err))) {
		cli_error("--slo: %s", err.msg);
		return -1;
	}
	return 0;
}

/* "5%", "5", "2.5 %" -> 5, 2.5; -1 when not a percentage >= 0. */
double cli_pct(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || !(v >= 0) || !isfinite(v))
		return -1;
	while (*end == ' ')
		end++;
	if (*end == '%')
		end++;
	return *end ? -1 : v;
}
