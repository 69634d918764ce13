/* tokentrace subcommands: one file each, int cmd_x(int argc, char **argv). */
#ifndef TT_CLI_COMMANDS_H
#define TT_CLI_COMMANDS_H

int cmd_report(int argc, char **argv);
int cmd_synth(int argc, char **argv);
int cmd_chart(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_trend(int argc, char **argv);

/* Shared helpers (cli_util.c). */
struct tt_run;
#include "tokentrace/error.h"
/* Opens what the user named as a run: every command that reads runs goes
 * through here, so a new kind of input (an imported file of another tool)
 * is accepted by all of them at once, and a warning is handled the same way
 * by all: a foreign file of a newer schema imports with TT_WARN, which is a
 * success (the run is open; the warning is printed and *warned set, for exit
 * status 3 where the command has one).  On failure the error is printed
 * (prefixed "WHAT 'PATH': " when what is not NULL), *out is NULL and -1 is
 * returned. */
int cli_open_run(const char *path, const char *what, struct tt_run **out, int *warned);

/* Write data to path (standard output when NULL); -1 with the error
 * printed. */
int cli_write_out(const char *path, const char *data, size_t len);
/* Option values: -1 with the error printed (naming opt) when v is not a
 * number in [lo, hi], a duration (example: "5s"), or an SLO list. */
int cli_number(const char *opt, const char *v, double lo, double hi, double *out);
/* "5%", "5", "2.5 %" -> 5, 2.5; -1 when not a percentage >= 0. */
double cli_pct(const char *s);
int cli_duration(const char *opt, const char *v, const char *example, double *out);
struct tt_slo;
int cli_slo(const char *v, struct tt_slo *slo);
/* Install SIGINT/SIGTERM/SIGHUP handlers that remove what imports are
 * writing (tt_import_abandon), then end the program by the signal;
 * main() calls it once, before any command. */
void cli_import_signals(void);

void cli_error(const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 1, 2)))
#endif
	;
/* "tokentrace: warning: ...", control characters shown as '?'. */
void cli_warn(const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 1, 2)))
#endif
	;

#endif
