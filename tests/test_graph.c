/*
** test_graph.c -- the chart renderer: known series give known cells, in
** each glyph tier, and no size (down to nothing) makes it misbehave.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "ui/graph.h"

static char text[8192];

/* Render and return the grid as lines joined by '\n'. */
static const char *render(const Graph *g, int w, int h) {
  GraphCell *cells = calloc((size_t)w * h + 1, sizeof *cells);
  graph_render(g, cells, w, h);
  graph_to_utf8(cells, w, h, text, sizeof text);
  free(cells);
  return text;
}

/* Line 'i' of the last render, with its '\n'. */
static const char *line(int i) {
  static char buf[1024];
  const char *p = text;
  while (i-- > 0 && (p = strchr(p, '\n'))) p++;
  if (!p) return "";
  size_t n = strcspn(p, "\n") + 1;
  if (n >= sizeof buf) n = sizeof buf - 1;
  memcpy(buf, p, n);
  buf[n] = '\0';
  return buf;
}

static int same(const char *got, const char *want, const char *what) {
  int eq = strcmp(got, want) == 0;
  ok(eq, "%s", what);
  if (!eq) {
    diag("want:\n%s", want);
    diag("got:\n%s", got);
  }
  return eq;
}

static void test_ascii_diagonal(void) {
  double x[11], y[11];
  for (int i = 0; i < 11; i++) x[i] = y[i] = i;
  GraphSeries s = {.name = "s", .x = x, .y = y, .n = 11};
  GraphEvent ev = {5.5, GRAPH_EVENT_TIE};
  Graph g = {.title = "t", .glyphs = GRAPH_ASCII, .x_min = 0, .x_max = 11, .y_min = 0, .y_max = 10,
             .series = &s, .n_series = 1};
  same(render(&g, 16, 6),
       "t *s            \n"
       "  10|         **\n"
       "    |      *** \x20\n"
       "   5|  ****     \n"
       "   0|**         \n"
       "   0+---------10\n",
       "ASCII: a rising line, round labels 10, 5 and 0, a round tick on the time axis");
  g.events = &ev;
  g.n_events = 1;
  render(&g, 16, 6);
  same(line(5), "   0+-----^---10\n", "ASCII: an event is marked under its step, by its kind");
  s.dashed = 1;
  render(&g, 16, 6);
  same(line(4), "   0|:          \n", "ASCII: a dashed series has its own mark and leaves every other sample out");
}

static void test_braille(void) {
  double x[8], y[8];
  for (int i = 0; i < 8; i++) x[i] = i, y[i] = 1;
  GraphSeries s = {.x = x, .y = y, .n = 8};
  Graph g = {.glyphs = GRAPH_BRAILLE, .x_min = 0, .x_max = 8, .y_min = 0, .y_max = 1, .series = &s,
             .n_series = 1};
  same(render(&g, 4, 3), "    \n⠉⠉⠉⠉\n────\n", "Braille: a line at the top sets the two top dots of every cell");

  for (int i = 0; i < 4; i++) y[i] = i;
  s.n = 4;
  g.x_max = 4;
  g.y_max = 3;
  same(render(&g, 2, 3), "  \n⡠⠊\n──\n", "Braille: a diagonal climbs one dot per sample");

  y[0] = 0, y[1] = 3, y[2] = NAN, y[3] = 3;
  same(render(&g, 2, 3), "  \n⡜⠉\n──\n", "Braille: a jump is joined by a line, a NaN sample skipped");
}

static void test_block(void) {
  double x[3] = {0, 1, 2}, y[3] = {0, 4, 7};
  GraphSeries s = {.x = x, .y = y, .n = 3};
  Graph g = {.glyphs = GRAPH_BLOCK, .x_min = 0, .x_max = 3, .y_min = 0, .y_max = 7, .series = &s,
             .n_series = 1};
  same(render(&g, 3, 3), "   \n▁▅█\n───\n", "block: eight levels per cell");
  double x2[2] = {0, 1}, y2[2] = {0, 15};
  s.x = x2, s.y = y2, s.n = 2;
  g.x_max = 2, g.y_max = 15;
  same(render(&g, 2, 4), "  \n █\n▁█\n──\n", "block: a jump over a cell is filled");
}

static void test_log_and_labels(void) {
  double x[3] = {0, 1, 2}, y[3] = {1, 10, 100};
  GraphSeries s = {.x = x, .y = y, .n = 3};
  Graph g = {.glyphs = GRAPH_ASCII, .log_y = 1, .x_min = 0, .x_max = 3, .y_min = 1, .y_max = 100,
             .series = &s, .n_series = 1};
  same(render(&g, 3, 5), "   \n  *\n * \n*  \n---\n", "log scale: decades are evenly spaced");
  render(&g, 16, 5);
  ok(strncmp(line(1), " 100|", 5) == 0 && strncmp(line(3), "   1|", 5) == 0,
     "log scale: labels show real values (100 and 1)");
  y[1] = -1;
  ok(strcmp(render(&g, 3, 5), "   \n  *\n   \n*  \n---\n") == 0, "log scale: values <= 0 are left out");
}

static void test_legend(void) {
  double x[1] = {0}, y[1] = {1};
  GraphSeries s[2] = {{.name = "a", .x = x, .y = y, .n = 1, .color = 0},
                      {.name = "b", .x = x, .y = y, .n = 1, .color = 1, .dashed = 1}};
  Graph g = {.title = "loss", .glyphs = GRAPH_BRAILLE, .x_min = 0, .x_max = 1, .y_min = 0, .y_max = 2,
             .series = s, .n_series = 2};
  GraphCell cells[12 * 4];
  graph_render(&g, cells, 12, 4);
  graph_to_utf8(cells, 12, 1, text, sizeof text);
  same(text, "loss ━a ┅b  \n", "legend: solid and dashed glyphs with names");
  ok(cells[5].role == GRAPH_ROLE_SERIES + 0 && cells[8].role == (GRAPH_ROLE_SERIES + 1 | GRAPH_ROLE_TINT),
     "legend: each entry carries its series' colour role, tinted for a dashed one");
  g.glyphs = GRAPH_ASCII;
  graph_render(&g, cells, 12, 4);
  graph_to_utf8(cells, 12, 1, text, sizeof text);
  same(text, "loss *a :b  \n", "legend in ASCII: the series' marks");
}

static void test_sizes(void) {
  double x[50], y[50];
  for (int i = 0; i < 50; i++) x[i] = i, y[i] = sin(i * 0.3) + 2;
  GraphSeries s = {.name = "sine", .x = x, .y = y, .n = 50};
  GraphEvent ev[2] = {{3, GRAPH_EVENT_TIE}, {40, GRAPH_EVENT_SCALE}};
  Graph g = {.title = "a long title", .x_min = 0, .x_max = 64, .y_min = 1, .y_max = 3, .series = &s,
             .n_series = 1, .events = ev, .n_events = 2};
  int sizes[][2] = {{0, 0}, {1, 1}, {0, 5}, {5, 0}, {1, 5}, {5, 1}, {2, 2}, {12, 3}, {13, 4}, {80, 20}};
  int fine = 1;
  for (int tier = 0; tier < 3; tier++)
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
      int w = sizes[i][0], h = sizes[i][1];
      GraphCell *c = malloc(sizeof *c * (size_t)(w * h + 1));
      c[w * h].ch = 0xdead;
      g.glyphs = (GraphGlyphs)tier;
      graph_render(&g, c, w, h);
      if (c[w * h].ch != 0xdead) fine = 0;
      free(c);
    }
  ok(fine, "every size from 0x0 to 80x20 renders inside its grid, in every tier");
  g.y_min = g.y_max = 2;
  g.x_max = g.x_min;
  render(&g, 20, 6);
  ok(strchr(text, '*') != NULL, "an empty range is widened around its value");
}

static void test_scatter(void) {
  /* Points in no order, one with no value and one outside the x range. */
  double ax[4] = {10, 0, 3, 12}, ay[4] = {4, 0, NAN, 1}, bx[2] = {5, 2.5}, by[2] = {2, 3};
  GraphSeries s[2] = {{.name = "a", .x = ax, .y = ay, .n = 4, .color = 0},
                      {.name = "b", .x = bx, .y = by, .n = 2, .color = 1}};
  Graph g = {.title = "sc", .glyphs = GRAPH_ASCII, .x_min = 0, .x_max = 10, .y_min = 0, .y_max = 4,
             .series = s, .n_series = 2, .x_label = "x"};
  GraphCell cells[20 * 6];
  graph_scatter(&g, cells, 20, 6);
  graph_to_utf8(cells, 20, 6, text, sizeof text);
  same(text,
       "sc *a ob            \n"
       "    4|             *\n"
       "     |   o          \n"
       "    2|       o      \n"
       "    0|*             \n"
       "    0+-------5---- x\n",
       "scatter, ASCII: one mark per point, a mark per series, the x label at the right end");
  ok(cells[1 * 20 + 19].role == GRAPH_ROLE_SERIES + 0 && cells[3 * 20 + 13].role == GRAPH_ROLE_SERIES + 1,
     "scatter: each point in its series' colour");

  /* Braille: (0,0) and (0.4,0) share the bottom-left cell, each its own dot. */
  double cx[3] = {0, 10, 0.4}, cy[3] = {0, 4, 0};
  GraphSeries c = {.name = "c", .x = cx, .y = cy, .n = 3, .color = 2};
  g.glyphs = GRAPH_BRAILLE;
  g.series = &c;
  g.n_series = 1;
  graph_scatter(&g, cells, 20, 6);
  ok(cells[4 * 20 + 6].ch == 0x28c0, "scatter, Braille: two points in one cell are its two bottom dots (U+%04X)",
     (unsigned)cells[4 * 20 + 6].ch);
  ok(cells[1 * 20 + 19].ch == 0x2808, "scatter, Braille: the top right point is the cell's top right dot (U+%04X)",
     (unsigned)cells[1 * 20 + 19].ch);
  int dots = 0;
  for (int i = 20; i < 20 * 5; i++) dots += cells[i].ch >= 0x2801 && cells[i].ch <= 0x28ff;
  ok(dots == 2 && cells[4 * 20 + 6].role == GRAPH_ROLE_SERIES + 2, "scatter, Braille: no other dot (%d cells)", dots);
  ok(cells[0 * 20 + 3].ch == 0x283f, "scatter, Braille: the legend shows dots");

  int fine = 1;
  int sizes[][2] = {{0, 0}, {1, 1}, {0, 5}, {5, 0}, {1, 5}, {2, 2}, {12, 3}, {80, 20}};
  for (int tier = 0; tier < 3; tier++)
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
      int w = sizes[i][0], h = sizes[i][1];
      GraphCell *cc = malloc(sizeof *cc * (size_t)(w * h + 1));
      cc[w * h].ch = 0xdead;
      g.glyphs = (GraphGlyphs)tier;
      graph_scatter(&g, cc, w, h);
      if (cc[w * h].ch != 0xdead) fine = 0;
      free(cc);
    }
  ok(fine, "scatter: every size renders inside its grid, in every tier");

  double lo = 0, hi = 0;
  ok(graph_x_range(s, 2, &lo, &hi) && lo == 0 && hi == 12, "x range over every series (%g..%g)", lo, hi);
}

static void test_helpers(void) {
  GraphScale sc = {0};
  graph_scale_update(&sc, 1, 2, 0);
  double lo = sc.lo, hi = sc.hi;
  ok(sc.set && lo < 1 && hi > 2, "scale: a margin around the first range (%g..%g)", lo, hi);
  graph_scale_update(&sc, 1.2, 1.8, 0);
  ok(sc.lo == lo && sc.hi == hi, "scale: sticky while the data use half of it");
  graph_scale_update(&sc, 0.5, 2, 0);
  ok(sc.lo < 0.5 && sc.hi >= 2, "scale: grows at once");
  graph_scale_update(&sc, 1.5, 1.6, 0);
  ok(sc.hi - sc.lo < 0.2, "scale: shrinks when the data use less than half");

  GraphCell row[4];
  graph_hbar(row, 4, 0.5625, GRAPH_BRAILLE, 0);
  graph_to_utf8(row, 4, 1, text, sizeof text);
  same(text, "██▎ \n", "bar: 2.25 cells in eighths");
  graph_hbar(row, 4, 0.625, GRAPH_ASCII, 0);
  graph_to_utf8(row, 4, 1, text, sizeof text);
  same(text, "##= \n", "bar in ASCII: a half cell is '='");
  graph_hbar(row, 4, 2, GRAPH_BLOCK, 0);
  graph_to_utf8(row, 4, 1, text, sizeof text);
  same(text, "████\n", "bar: clamped at full");

  ok(graph_shade(0, GRAPH_BLOCK) == ' ' && graph_shade(1, GRAPH_BLOCK) == 0x2588 &&
         graph_shade(0.5, GRAPH_BLOCK) == 0x2592 && graph_shade(1, GRAPH_ASCII) == '@',
     "shades from blank to full");

  char b[32];
  graph_format(1.2e-5, 6, b, sizeof b);
  same(b, "1.2e-5", "format: compact exponent");
  graph_format(12345.678, 6, b, sizeof b);
  same(b, "1.23e4", "format: large numbers fit the width");
  graph_format(3.14159, 4, b, sizeof b);
  same(b, "3.14", "format: precision drops to fit");
}

int main(void) {
  test_ascii_diagonal();
  test_braille();
  test_block();
  test_log_and_labels();
  test_legend();
  test_sizes();
  test_scatter();
  test_helpers();
  return tap_done();
}
