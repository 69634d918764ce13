/* Command-line options from one table per command (cli_opts.h). */
#include "cli_opts.h"

#include <string.h>

#include "commands.h"

void cli_iter_init(struct cli_iter *it, int argc, char **argv)
{
	memset(it, 0, sizeof *it);
	it->i = 1;
	it->argc = argc;
	it->argv = argv;
}

static void print_names(const struct cli_opt *o, char *buf, size_t n)
{
	if (o->shrt)
		snprintf(buf, n, "-%c, --%s%s%s", o->shrt, o->lng, o->arg ? " " : "",
			 o->arg ? o->arg : "");
	else
		snprintf(buf, n, "--%s%s%s", o->lng, o->arg ? " " : "", o->arg ? o->arg : "");
}

void cli_print_help(const struct cli_cmd *c, FILE *f)
{
	if (c->head)
		fputs(c->head, f);
	else
		c->print_head(f);
	for (size_t i = 0; i < c->n_opts; i++) {
		const struct cli_opt *o = &c->opts[i];
		const char *h = o->help, *nl;
		char names[128];
		int w;

		print_names(o, names, sizeof names);
		w = fprintf(f, "  %s", names);
		/* a name wider than the column: two spaces, then the help */
		fprintf(f, "%*s", w + 2 <= c->col ? c->col - w : 2, "");
		for (;;) {
			nl = strchr(h, '\n');
			fprintf(f, "%.*s\n", (int)(nl ? nl - h : (long)strlen(h)), h);
			if (!nl)
				break;
			h = nl + 1;
			fprintf(f, "%*s", c->col, "");
		}
	}
	if (c->tail)
		fputs(c->tail, f);
}

/* Edit distance with adjacent transpositions (optimal string alignment:
 * "waht" is one edit from "what"), bounded inputs. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), d[64][64];

	if (la >= 63 || lb >= 63)
		return 99;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

const struct cli_opt *cli_suggest(const struct cli_cmd *c, const char *typed)
{
	const struct cli_opt *best = NULL;
	size_t best_d = 99, len;
	char name[64];

	while (*typed == '-')
		typed++;
	len = strcspn(typed, "=");
	if (len == 0 || len >= sizeof name)
		return NULL;
	memcpy(name, typed, len);
	name[len] = '\0';
	for (size_t i = 0; i < c->n_opts; i++) {
		size_t d = distance(name, c->opts[i].lng);
		/* a prefix of one option counts as near: --skip for --skip-first */
		if (strncmp(c->opts[i].lng, name, len) == 0)
			d = 1;
		if (d < best_d) {
			best_d = d;
			best = &c->opts[i];
		}
	}
	/* near enough: at most 2 edits, and fewer than half the letters */
	return best && best_d <= 2 && best_d * 2 < len ? best : NULL;
}

static int unknown(const struct cli_cmd *c, const char *a)
{
	const struct cli_opt *s = cli_suggest(c, a);

	if (s)
		cli_error("%s: unknown option '%s'; did you mean '--%s'? (see 'tokentrace %s "
			  "--help')", c->name, a, s->lng, c->name);
	else
		cli_error("%s: unknown option '%s' (see 'tokentrace %s --help')", c->name, a,
			  c->name);
	return CLI_BAD;
}

int cli_next(const struct cli_cmd *c, struct cli_iter *it, const char **val)
{
	const struct cli_opt *o = NULL;
	const char *a, *eq = NULL;

	*val = NULL;
	for (;;) {
		if (it->i >= it->argc)
			return CLI_END;
		a = it->argv[it->i++];
		if (!it->only_args && strcmp(a, "--") == 0) {
			it->only_args = 1;
			continue;
		}
		break;
	}
	it->opt = a;
	if (it->only_args || a[0] != '-' || a[1] == '\0') {
		*val = a;
		return CLI_ARG;
	}
	if (a[1] == '-') {
		size_t len;
		eq = strchr(a + 2, '=');
		len = eq ? (size_t)(eq - (a + 2)) : strlen(a + 2);
		for (size_t i = 0; i < c->n_opts && !o; i++)
			if (strlen(c->opts[i].lng) == len && strncmp(c->opts[i].lng, a + 2, len) == 0)
				o = &c->opts[i];
	} else if (a[2] == '\0') {
		for (size_t i = 0; i < c->n_opts && !o; i++)
			if (c->opts[i].shrt == a[1])
				o = &c->opts[i];
	}
	if (!o)
		return unknown(c, a);
	if (o->id == CLI_OPT_HELP) {
		cli_print_help(c, stdout);
		return CLI_HELP;
	}
	if (!o->arg || (o->flags & CLI_LIST)) {
		if (eq) {
			cli_error("option '--%s' takes no value", o->lng);
			return CLI_BAD;
		}
		return o->id;
	}
	if (eq) {
		*val = eq + 1;
	} else if (it->i < it->argc) {
		*val = it->argv[it->i++];
	} else {
		cli_error("option '%s' needs a value", a);
		return CLI_BAD;
	}
	return o->id;
}
