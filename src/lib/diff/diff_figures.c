/* What a diff compares: its figures (names, keys, which way is better,
 * each read from a cell's figures by the metric it implements), verdict
 * and basis names (docs/diff.md "Figures compared"). */
#include "diff/diff_impl.h"

#include <math.h>
#include <string.h>

static const struct {
	const char *key, *name, *alias;
	int higher_better;
	enum tt_phase phase;
} figures[TT_DIFF_FIGURE_COUNT_] = {
	{"total_tok_s", "Total tok/s", "total", 1, TT_PHASE_DECODE},
	{"per_request_tok_s", "Per request tok/s", "per-request", 1, TT_PHASE_DECODE},
	{"ttft_p50_ms", "TTFT p50", "ttft", 0, TT_PHASE_DECODE},
	{"ttft_tail_ms", "TTFT tail", "ttft-tail", 0, TT_PHASE_DECODE},
	{"tbt_p50_ms", "TBT p50", "tbt", 0, TT_PHASE_DECODE},
	{"tbt_tail_ms", "TBT tail", "tbt-tail", 0, TT_PHASE_DECODE},
	{"prefill_tok_s", "Prompt tok/s", "prefill", 1, TT_PHASE_PREFILL},
};

const char *tt_diff_figure_key(enum tt_diff_figure f)
{
	return (unsigned)f < TT_DIFF_FIGURE_COUNT_ ? figures[f].key : "unknown";
}

const char *tt_diff_figure_name(enum tt_diff_figure f)
{
	return (unsigned)f < TT_DIFF_FIGURE_COUNT_ ? figures[f].name : "Unknown";
}

int tt_diff_figure_parse(const char *name)
{
	for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++)
		if (!strcmp(name, figures[f].key) || !strcmp(name, figures[f].alias))
			return f;
	return -1;
}

int tt_diff_figure_higher_better(enum tt_diff_figure f)
{
	return (unsigned)f < TT_DIFF_FIGURE_COUNT_ ? figures[f].higher_better : 1;
}

static const char *const verdict_names[] = {"no significant change", "faster", "slower",
					    "not judged", "within tolerance",
					    "beyond tolerance"};
static const char *const verdict_keys[] = {"same", "faster", "slower", "unjudged",
					   "within_tolerance", "beyond_tolerance"};

const char *tt_verdict_name(enum tt_verdict v)
{
	return (unsigned)v <= TT_VERDICT_BEYOND_TOL ? verdict_names[v] : "unknown";
}

const char *tt_verdict_key(enum tt_verdict v)
{
	return (unsigned)v <= TT_VERDICT_BEYOND_TOL ? verdict_keys[v] : "unknown";
}

static const char *const basis_keys[] = {"none", "samples", "replicates", "point"};

const char *tt_diff_basis_key(enum tt_diff_basis b)
{
	return (unsigned)b <= TT_BASIS_POINT ? basis_keys[b] : "unknown";
}

enum tt_phase tt__diff_figure_phase(enum tt_diff_figure f)
{
	return (unsigned)f < TT_DIFF_FIGURE_COUNT_ ? figures[f].phase : TT_PHASE_DECODE;
}

double tt__diff_figure_of(const struct tt_cell_figures *c, enum tt_diff_figure f, size_t tail_q)
{
	if (c->phase != figures[f].phase)
		return NAN;
	switch (f) {
	case TT_DIFF_TOTAL:
		return c->total_tok_s;                 /* M-total */
	case TT_DIFF_PER_REQUEST:
		return c->per_request_tok_s.p50;       /* M-per-request */
	case TT_DIFF_TTFT_P50:
		return c->ttft_ms.p50;                 /* M-ttft */
	case TT_DIFF_TTFT_TAIL:
		return tail_q < TT_MAX_QUANTILES ? c->ttft_ms.q[tail_q] : NAN;
	case TT_DIFF_TBT_P50:
		return c->tbt_ms.p50;                  /* M-tbt */
	case TT_DIFF_TBT_TAIL:
		return tail_q < TT_MAX_QUANTILES ? c->tbt_ms.q[tail_q] : NAN;
	case TT_DIFF_PREFILL:
		return c->total_tok_s;                 /* M-prefill: the prompt tok/s */
	default:
		return NAN;
	}
}
