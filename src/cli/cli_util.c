/* Helpers shared by the tokentrace subcommands. */
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokentrace/error.h"
#include "tokentrace/import.h"
#include "tokentrace/run.h"

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

enum tt_code cli_open_run(const char *path, struct tt_run **out, struct tt_error *err)
{
	cli_import_signals();
	return tt_import_open(path, NULL, out, err);
}
