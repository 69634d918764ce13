/* tokentrace subcommands: one file each, int cmd_x(int argc, char **argv). */
#ifndef TT_CLI_COMMANDS_H
#define TT_CLI_COMMANDS_H

int cmd_report(int argc, char **argv);
int cmd_synth(int argc, char **argv);
int cmd_chart(int argc, char **argv);
int cmd_dump(int argc, char **argv);

/* Shared helpers (cli_util.c). */
void cli_error(const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 1, 2)))
#endif
	;

#endif
