#include <stdio.h>
#include <string.h>

#include <tokentrace/analysis.h>
#include <tokentrace/run.h>

int main(int argc, char **argv)
{
	struct tt_run *run;
	struct tt_report *rep;
	struct tt_error err;

	if (argc != 2)
		return 2;
	if (tt_run_open(argv[1], &run, &err) || tt_analyze(run, NULL, &rep, &err) > TT_WARN) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	printf("tokentrace %s: %zu cells, first %s\n", tt_version(), rep->n_cells,
	       tt_status_name(rep->cells[0].status));
	tt_report_free(rep);
	tt_run_free(run);
	return 0;
}
