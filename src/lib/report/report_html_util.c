/* What every HTML page of ours shares (the report, the diff): one escaper,
 * one base64 encoder for embedded images, and one page head with the
 * Content-Security-Policy that forbids every fetch and every script. */
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "report/html.h"
#include "tokentrace/report.h"

/* Escape for text and attribute values; invalid UTF-8 becomes U+FFFD so a
 * damaged manifest cannot produce a page the browser re-interprets. */
void tt__html_esc(struct tt_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	while (*p) {
		const char *rep = NULL;
		size_t n = 1;
		switch (*p) {
		case '&':
			rep = "&amp;";
			break;
		case '<':
			rep = "&lt;";
			break;
		case '>':
			rep = "&gt;";
			break;
		case '"':
			rep = "&quot;";
			break;
		case '\'':
			rep = "&#39;";
			break;
		default:
			break;
		}
		if (rep) {
			tt_buf_puts(b, rep);
			p++;
			continue;
		}
		if (*p < 0x80) {
			if (*p < 0x20 && *p != '\n' && *p != '\t')
				tt_buf_puts(b, "\xEF\xBF\xBD");
			else
				tt_buf_append(b, p, 1);
			p++;
			continue;
		}
		n = (size_t)g_utf8_skip[*p];
		if (strnlen((const char *)p, n) < n ||
		    !g_utf8_validate((const char *)p, (gssize)n, NULL)) {
			tt_buf_puts(b, "\xEF\xBF\xBD");
			p++;
			continue;
		}
		tt_buf_append(b, p, n);
		p += n;
	}
}

/* Escaped, with line breaks kept as <br>. */
void tt__html_esc_lines(struct tt_buf *b, const char *s)
{
	const char *nl;
	while ((nl = strchr(s, '\n')) != NULL) {
		char part[512];
		size_t n = (size_t)(nl - s);
		if (n >= sizeof part)
			n = sizeof part - 1;
		memcpy(part, s, n);
		part[n] = '\0';
		tt__html_esc(b, part);
		tt_buf_puts(b, "<br>");
		s = nl + 1;
	}
	tt__html_esc(b, s);
}

void tt__html_base64(struct tt_buf *b, const unsigned char *d, size_t n)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char out[4];
	size_t i;
	for (i = 0; i + 3 <= n; i += 3) {
		unsigned v = (unsigned)d[i] << 16 | (unsigned)d[i + 1] << 8 | d[i + 2];
		out[0] = tab[v >> 18 & 63];
		out[1] = tab[v >> 12 & 63];
		out[2] = tab[v >> 6 & 63];
		out[3] = tab[v & 63];
		tt_buf_append(b, out, 4);
	}
	if (i < n) {
		unsigned v = (unsigned)d[i] << 16 | (i + 1 < n ? (unsigned)d[i + 1] << 8 : 0);
		out[0] = tab[v >> 18 & 63];
		out[1] = tab[v >> 12 & 63];
		out[2] = i + 1 < n ? tab[v >> 6 & 63] : '=';
		out[3] = '=';
		tt_buf_append(b, out, 4);
	}
}

void tt__html_head(struct tt_buf *out, const char *title, const char *css1, const char *css2,
		   const char *css3)
{
	tt_buf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
			 "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
			 "'none'; img-src data:; style-src 'unsafe-inline'\">\n"
			 "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
			 "<meta name=\"generator\" content=\"tokentrace ");
	tt__html_esc(out, tt_version());
	tt_buf_puts(out, "\">\n<title>");
	tt__html_esc(out, title);
	tt_buf_printf(out, "</title>\n<style>%s%s%s</style>\n</head>\n<body>\n", css1 ? css1 : "",
		      css2 ? css2 : "", css3 ? css3 : "");
}
