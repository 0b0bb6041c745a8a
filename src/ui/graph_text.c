/*
** graph_text.c -- text, numbers, bars and shades as a chart's cells, and
** the cells back into UTF-8.
*/
#include "ui/graph.h"

#include "base/utf8.h"
#include "ui/legend.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ui/graph_impl.h"

/* ------------------------------------------------------------ text */

int graph_text(GraphCell *row, int w, const char *utf8, uint8_t role) {
  int x = 0;
  while (*utf8 && x < w) {
    uint32_t cp;
    utf8 += utf8_decode(utf8, UTF8_MAX, &cp);   /* stops at the NUL */
    if (cp == UTF8_INVALID) cp = '?';
    row[x++] = (GraphCell){.ch = cp < 0x20 ? ' ' : cp, .role = role};
  }
  return x;
}

size_t graph_to_utf8(const GraphCell *cells, int w, int h, char *out, size_t cap) {
  size_t n = 0;
  char b[4];
  for (int y = 0; y < h; y++) {
    for (int x = 0; x <= w; x++) {
      size_t k = x < w ? utf8_encode(cells[(size_t)y * w + x].ch, b) : (b[0] = '\n', 1);
      if (n + k < cap) memcpy(out + n, b, k);
      n += k;
    }
  }
  if (cap) out[n < cap ? n : cap - 1] = '\0';
  return n;
}

/* "1.23e+04" -> "1.23e4", "1e-05" -> "1e-5". */
static void compact_exponent(char *s) {
  char *e = strchr(s, 'e');
  if (!e) return;
  char *p = e + 1, *q = e + 1;
  if (*p == '+') p++;
  else if (*p == '-') *q++ = *p++;
  while (*p == '0' && p[1]) p++;
  memmove(q, p, strlen(p) + 1);
}

void graph_format(double v, int width, char *buf, size_t cap) {
  if (cap == 0) return;
  if (v == 0 || !isfinite(v)) {
    snprintf(buf, cap, "%s", v == 0 ? "0" : isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
    return;
  }
  /* A whole number as it is ("10000", not "1e4") when it fits. */
  if (v == floor(v) && fabs(v) < 1e15) {
    snprintf(buf, cap, "%.0f", v);
    if ((int)strlen(buf) <= width) return;
  }
  for (int p = 4; p >= 1; p--) {
    snprintf(buf, cap, "%.*g", p, v);
    compact_exponent(buf);
    if ((int)strlen(buf) <= width) return;
  }
}

/* Cells of UTF-8 text. */
int graph_text_len(const char *s) {
  int n = 0;
  for (uint32_t cp; *s; n++) s += utf8_decode(s, UTF8_MAX, &cp);
  return n;
}

/* ------------------------------------------------------------ bars and shades */

void graph_hbar(GraphCell *row, int w, double frac, GraphGlyphs g, uint8_t role) {
  if (!(frac > 0)) frac = 0;
  if (frac > 1) frac = 1;
  int eighths = (int)lround(frac * w * 8);
  for (int x = 0; x < w; x++) {
    int e = eighths - x * 8;
    uint32_t ch = ' ';
    if (e >= 8) ch = g == GRAPH_ASCII ? '#' : 0x2588;
    else if (e > 0) ch = g == GRAPH_ASCII ? (e >= 4 ? '=' : ' ') : 0x2590 - (uint32_t)e;
    row[x] = (GraphCell){.ch = ch, .role = role};
  }
}

void graph_hbar_series(GraphCell *row, int w, double frac, GraphGlyphs g, const GraphSeries *s, int mono) {
  static const uint32_t fills[] = {0, 0x2592, 0x2591, 0x2593};   /* █ (eighths), ▒, ░, ▓ */
  GraphSeries plain = *s;
  plain.bold = 0;
  uint8_t role = graph_series_role(&plain);
  int k = s->line % 4;
  uint32_t fill = g == GRAPH_ASCII ? graph_ascii_mark(s) : fills[k < 0 ? k + 4 : k];
  if (!mono || !fill) {
    graph_hbar(row, w, frac, g, role);
    return;
  }
  /* A shade has no eighths: its bar ends in graph_hbar's eighth, so that a
  ** short bar is not lost; a mark (ASCII) is drawn from half a cell. */
  graph_hbar(row, w, frac, g, role);
  for (int x = 0; x < w; x++)
    if (row[x].ch == 0x2588 || (g == GRAPH_ASCII && row[x].ch != ' ')) row[x].ch = fill;
}

uint32_t graph_shade(double v, GraphGlyphs g) {
  static const uint32_t utf[] = {' ', 0x2591, 0x2592, 0x2593, 0x2588};
  static const char ascii[] = " .:-=+*#%@";
  if (!(v > 0)) v = 0;
  if (v > 1) v = 1;
  if (g == GRAPH_ASCII) return (uint32_t)ascii[(int)lround(v * 9)];
  return utf[(int)lround(v * 4)];
}
