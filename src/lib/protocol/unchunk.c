/* HTTP/1.1 chunked transfer coding, undone (protocol/sse.h). */
#include "protocol/sse.h"

enum { CH_SIZE, CH_EXT, CH_DATA, CH_DATA_END, CH_TRAILER, CH_DONE, CH_BROKEN };

void tt_unchunk_init(struct tt_unchunk *u)
{
	u->state_ = CH_SIZE;
	u->n_ = 0;
	u->left_ = 0;
}

int tt_unchunk_done(const struct tt_unchunk *u)
{
	return u->state_ == CH_DONE;
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

enum tt_code tt_unchunk_feed(struct tt_unchunk *u, const char *p, size_t n, tt_unchunk_data_fn fn,
			     void *ctx)
{
	size_t i = 0;

	while (i < n) {
		char ch = p[i];
		switch (u->state_) {
		case CH_SIZE: {
			int v = hexval(ch);
			if (v < 0) {
				if (!u->n_) {
					u->state_ = CH_BROKEN;
					return TT_FAILED;
				}
				u->state_ = CH_EXT; /* ";ext", spaces, CR: up to the LF */
				continue;
			}
			if (++u->n_ > 15) { /* 15 hex digits: under 2^60 */
				u->state_ = CH_BROKEN;
				return TT_FAILED;
			}
			u->left_ = u->left_ * 16 + (uint64_t)v;
			i++;
			break;
		}
		case CH_EXT:
			if (ch == '\n') {
				u->state_ = u->left_ ? CH_DATA : CH_TRAILER;
				u->n_ = 0;
			}
			i++;
			break;
		case CH_DATA: {
			size_t k = n - i < u->left_ ? n - i : (size_t)u->left_;
			fn(ctx, p + i, k);
			u->left_ -= k;
			i += k;
			if (!u->left_)
				u->state_ = CH_DATA_END;
			break;
		}
		case CH_DATA_END: /* the CRLF after the data */
			if (ch == '\n') {
				u->state_ = CH_SIZE;
				u->n_ = 0;
				u->left_ = 0;
			}
			i++;
			break;
		case CH_TRAILER: /* lines up to an empty one */
			if (ch == '\n') {
				if (!u->n_)
					u->state_ = CH_DONE;
				u->n_ = 0;
			} else if (ch != '\r') {
				u->n_ = 1;
			}
			i++;
			break;
		case CH_BROKEN:
			return TT_FAILED;
		default: /* CH_DONE */
			return TT_OK;
		}
	}
	return TT_OK;
}
