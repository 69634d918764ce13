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

/* Shared helpers (cli_util.c). */
struct tt_run;
#include "tokentrace/error.h"
/* Opens what the user named as a run: every command that reads runs goes
 * through here, so a new kind of input (an imported file of another tool)
 * is accepted by all of them at once. */
enum tt_code cli_open_run(const char *path, struct tt_run **out, struct tt_error *err);
/* Install SIGINT/SIGTERM/SIGHUP handlers that remove what imports are
 * writing (tt_import_abandon), then end the program by the signal. */
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
