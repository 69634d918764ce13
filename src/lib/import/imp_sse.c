/* Token counts of raw SSE response text kept by a foreign tool (GenAI-Perf,
 * AIPerf raw exports), read the way our capture reads a live stream
 * (protocol/sse.c: cumulative usage, token ids, else one per non-empty
 * chunk), so an imported trace counts tokens exactly as a captured one. */
#include "import/imp_sse.h"

#include <string.h>

struct feed {
	struct tt__imp_stream *s;
	int64_t tokens;
};

static int on_event(void *ctx, const char *data, size_t len)
{
	struct feed *f = ctx;
	struct tt_oai_chunk c;

	if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
		f->s->done = 1;
		return 0;
	}
	if (tt_oai_parse_chunk(data, len, &c) != TT_OK) {
		f->s->malformed++;
		return 0;
	}
	if (c.is_error) {
		f->s->error = 1;
		memcpy(f->s->error_text, c.error, sizeof f->s->error_text);
	}
	if (c.finish == TT_OAI_FINISH_STOP)
		f->s->finish = TT_FINISH_STOP;
	else if (c.finish == TT_OAI_FINISH_LENGTH)
		f->s->finish = TT_FINISH_LENGTH;
	f->tokens += tt_oai_stream_account(&f->s->st, &c);
	return 0;
}

void tt__imp_stream_init(struct tt__imp_stream *s)
{
	memset(s, 0, sizeof *s);
	tt_oai_stream_init(&s->st);
	s->finish = TT_FINISH_UNKNOWN;
}

int64_t tt__imp_stream_piece(struct tt__imp_stream *s, const char *text, size_t len)
{
	struct tt_sse sse;
	struct feed f = {s, 0};

	tt_sse_init(&sse, on_event, &f, 1 << 24);
	if (tt_sse_feed(&sse, text, len) > TT_WARN || tt_sse_end(&sse) > TT_WARN)
		s->malformed++;
	tt_sse_release(&sse);
	return f.tokens;
}

int64_t tt__imp_stream_event(struct tt__imp_stream *s, const char *data, size_t len)
{
	struct feed f = {s, 0};
	on_event(&f, data, len);
	return f.tokens;
}
