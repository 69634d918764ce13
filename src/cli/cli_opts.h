/* The tokentrace commands' options: each command declares one table
 * (struct cli_cmd) from which its command line is parsed and its --help is
 * printed, so that an option is written once; tests/cli/test_help_docs.sh
 * checks the man pages (docs/man) and docs pages against that --help.
 * Unknown options get a did-you-mean. */
#ifndef TT_CLI_OPTS_H
#define TT_CLI_OPTS_H

#include <stddef.h>
#include <stdio.h>

struct cli_opt {
	int id;           /* > 0, returned by cli_next; CLI_OPT_HELP for -h */
	char shrt;        /* 'f' for -f, or 0 */
	const char *lng;  /* "format" for --format */
	const char *arg;  /* the value's name in --help ("F"), NULL for a flag */
	const char *help; /* its lines in --help, separated by '\n' */
	unsigned flags;   /* CLI_LIST: arg is shown but not taken (the option
			   * starts a list of the positional arguments after it) */
};
#define CLI_LIST 1u

struct cli_cmd {
	const char *name;          /* "report": in messages */
	const char *head;          /* --help before the options (usage, what it does) */
	void (*print_head)(FILE *f); /* or this, when it is computed (head NULL) */
	const char *tail;          /* --help after them (exit status), or NULL */
	int col;                   /* the column where the options' help starts */
	const struct cli_opt *opts;
	size_t n_opts;
};

/* What cli_next returns besides an option's id. */
enum {
	CLI_END = 0,   /* no more arguments */
	CLI_ARG = -1,  /* a positional argument, in *val */
	CLI_HELP = -2, /* -h or --help: the help was printed; exit 0 */
	CLI_BAD = -3   /* wrong usage: the error was printed; exit 2 */
};
#define CLI_OPT_HELP 1000
#define CLI_HELP_ENTRY {CLI_OPT_HELP, 'h', "help", NULL, "show this help", 0}

struct cli_iter {
	int i, argc;
	char **argv;
	int only_args; /* after "--" */
	const char *opt; /* the option as written, for the caller's messages */
};

void cli_iter_init(struct cli_iter *it, int argc, char **argv);
/* The next option (its id, *val its value or NULL for a flag), positional
 * argument (CLI_ARG), CLI_END, CLI_HELP or CLI_BAD.  --name=value and
 * --name value are the same; "--" ends the options. */
int cli_next(const struct cli_cmd *c, struct cli_iter *it, const char **val);
/* The command's --help, generated from its table. */
void cli_print_help(const struct cli_cmd *c, FILE *f);
/* The option of the table nearest to what was typed (edit distance), or
 * NULL when none is near enough to suggest. */
const struct cli_opt *cli_suggest(const struct cli_cmd *c, const char *typed);

#endif
