/*
** test_graph.c -- the chart renderer: known series give known cells, in
** each glyph tier, and no size (down to nothing) makes it misbehave.
** Legends with wide characters are read as the terminal shows the cells.
*/
#define _XOPEN_SOURCE 700   /* wcwidth */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "tap.h"
#include "ui/graph.h"

#define BRAILLE_BLANK_TEST 0x2800u

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
  GraphEvent ev = {5.5, GRAPH_EVENT_TIE, NULL};
  Graph g = {.title = "t", .glyphs = GRAPH_ASCII, .x_min = 0, .x_max = 11, .y_min = 0, .y_max = 10,
             .series = &s, .n_series = 1};
  same(render(&g, 16, 6),
       "t * s           \n"
       "  10|         **\n"
       "    |      *** \x20\n"
       "   5|  ****     \n"
       "   0|**         \n"
       "    +0----5---10\n",
       "ASCII: a rising line, round labels 10, 5 and 0, round ticks on the time axis");
  g.events = &ev;
  g.n_events = 1;
  render(&g, 16, 6);
  same(line(5), "    +0----^---10\n", "ASCII: an event is marked under its step, by its kind");
  s.dashed = 1;
  render(&g, 16, 6);
  same(line(4), "   0|:    '     \n", "ASCII: a dashed series has its lighter mark and leaves every other sample out");
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
  y[2] = -1;
  same(render(&g, 3, 5), "   \n   \n * \n*  \n---\n", "log scale: values <= 0 are left out");
}

static void test_legend(void) {
  double x[1] = {0}, y[1] = {1};
  GraphSeries s[2] = {{.name = "a", .x = x, .y = y, .n = 1, .color = 0},
                      {.name = "b", .x = x, .y = y, .n = 1, .color = 1, .dashed = 1}};
  Graph g = {.title = "loss", .glyphs = GRAPH_BRAILLE, .x_min = 0, .x_max = 1, .y_min = 0, .y_max = 2,
             .series = s, .n_series = 2};
  GraphCell cells[14 * 4];
  graph_render(&g, cells, 14, 4);
  graph_to_utf8(cells, 14, 1, text, sizeof text);
  same(text, "loss ━ a ┅ b  \n", "legend: solid and dashed glyphs, a space, their names");
  ok(cells[5].role == GRAPH_ROLE_SERIES + 0 && cells[9].role == ((GRAPH_ROLE_SERIES + 1) | GRAPH_ROLE_TINT),
     "legend: each entry carries its series' colour role, tinted for a dashed one");
  g.glyphs = GRAPH_ASCII;
  graph_render(&g, cells, 14, 4);
  graph_to_utf8(cells, 14, 1, text, sizeof text);
  same(text, "loss * a : b  \n", "legend in ASCII: the series' marks, a dashed one's lighter, a space before names");
}

static void test_sizes(void) {
  double x[50], y[50];
  for (int i = 0; i < 50; i++) x[i] = i, y[i] = sin(i * 0.3) + 2;
  GraphSeries s = {.name = "sine", .x = x, .y = y, .n = 50};
  GraphEvent ev[2] = {{3, GRAPH_EVENT_TIE, NULL}, {40, GRAPH_EVENT_SCALE, NULL}};
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
       "sc * a o b          \n"
       "    4|             *\n"
       "     |   o          \n"
       "    2|       o      \n"
       "    0|*             \n"
       "   x +0------5------\n",
       "scatter, ASCII: one mark per point, a mark per series, the x label left of the axis");
  ok(cells[1 * 20 + 19].role == GRAPH_ROLE_SERIES + 0 && cells[3 * 20 + 13].role == GRAPH_ROLE_SERIES + 1,
     "scatter: each point in its series' colour");
  /* A trend (dashed, of the points' group) through a point: the point shows. */
  double tx[2] = {5, 10}, ty[2] = {2, 4};
  GraphSeries st[2] = {{.name = "p", .x = bx, .y = by, .n = 2, .color = 1, .group = 1},
                       {.x = tx, .y = ty, .n = 2, .color = 1, .dashed = 1, .group = 1}};
  g.series = st;
  graph_scatter(&g, cells, 20, 6);
  ok(cells[3 * 20 + 13].ch == (uint32_t)'o' && cells[1 * 20 + 19].ch == (uint32_t)':',
     "scatter: a point over its own trend keeps its mark, the trend its own elsewhere ('%c', '%c')",
     (char)cells[3 * 20 + 13].ch, (char)cells[1 * 20 + 19].ch);
  g.series = s;
  /* Two clouds that overlap are points, not a pair of lines: every tier
  ** keeps dots or marks there, never a two-coloured half block. */
  enum { NP = 200 };
  double px[NP], pa[NP], pb[NP];
  for (int i = 0; i < NP; i++) px[i] = (i * 37 % 100) / 10.0, pa[i] = 1 + px[i] / 10 + (i % 7) / 14.0, pb[i] = pa[i] + 0.05;
  GraphSeries clouds[2] = {{.name = "in", .x = px, .y = pa, .n = NP, .color = 1, .group = 1},
                           {.name = "out", .x = px, .y = pb, .n = NP, .color = 2, .group = 2}};
  Graph gc = {.title = "c", .x_min = 0, .x_max = 10, .y_min = 1, .y_max = 2.6, .series = clouds, .n_series = 2};
  int halves = 0, shown = 0;
  for (int tier = GRAPH_BRAILLE; tier <= GRAPH_ASCII; tier++)
    for (int mono = 0; mono < 2; mono++) {
      GraphCell cc[40 * 12];
      gc.glyphs = (GraphGlyphs)tier, gc.mono = mono;
      graph_scatter(&gc, cc, 40, 12);
      for (int i = 40; i < 40 * 11; i++) {
        halves += cc[i].ch == 0x2580 || cc[i].ch == 0x2584 || cc[i].ch == 0x2588 || cc[i].bg != 0;
        shown += cc[i].role >= GRAPH_ROLE_SERIES;
      }
    }
  ok(halves == 0 && shown > 0, "scatter: overlapping clouds keep their points in every tier (%d half blocks or backgrounds, %d cells)",
     halves, shown);

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
  ok(sc.set && lo == 1 && hi == 2, "scale: the first range is the data's (%g..%g)", lo, hi);
  graph_scale_update(&sc, 1.05, 1.95, 0);
  ok(sc.lo == lo && sc.hi == hi, "scale: sticky while the data use four fifths of it");
  graph_scale_update(&sc, 0.5, 2, 0);
  ok(sc.lo <= 0.5 && sc.hi >= 2, "scale: grows at once");
  graph_scale_update(&sc, 1.5, 1.6, 0);
  ok(sc.hi - sc.lo < 0.2, "scale: shrinks when the data use less than four fifths");

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
  graph_format(10000, 6, b, sizeof b);
  same(b, "10000", "format: a whole number in full when it fits");
  graph_format(3.14159, 4, b, sizeof b);
  same(b, "3.14", "format: precision drops to fit");
}

/* Cells of the last 'graph_render' into 'cells' (w x h) as text. */
static const char *grid(const GraphCell *cells, int w, int h) {
  graph_to_utf8(cells, w, h, text, sizeof text);
  return text;
}

static void test_ticks(void) {
  double x[2] = {0, 100}, y[2] = {0.4986, 2.03};
  GraphSeries s = {.name = "a", .x = x, .y = y, .n = 2};
  Graph g = {.title = "loss", .glyphs = GRAPH_ASCII, .x_min = 0, .x_max = 111, .y_min = 0.4986, .y_max = 2.03,
             .series = &s, .n_series = 1, .x_label = "step"};
  render(&g, 40, 12);
  int labels = 0, round = 1;
  for (int r = 1; r < 11; r++) {
    double v;
    if (sscanf(line(r), "%lf|", &v) != 1) continue;
    labels++;
    double k = v / 0.5;
    if (fabs(k - lround(k)) > 1e-9) round = 0;
  }
  ok(labels >= 3 && round, "linear ticks at round values, multiples of 0.5 here (%d labels)", labels);
  ok(strchr(line(1), '*') && strchr(line(10), '*'),
     "the y range fits the data: 0.4986 in the bottom row, 2.03 in the top one");
  same(line(11), " step +0---20----40----60----80----100--\n",
       "x ticks at round steps and 'step' on the axis row, left of the axis");
  g.x_label = "ln count";
  render(&g, 40, 12);
  same(line(11), "      +0---20----40----60----80 ln count\n", "a longer x label goes to the right end");
  g.x_label = "step";

  double ly[2] = {0.03, 40};
  s.y = ly;
  g.log_y = 1, g.y_min = 0.03, g.y_max = 40, g.title = "r";
  render(&g, 40, 12);
  ok(strncmp(line(0), "r (log) * a", 11) == 0, "a log chart says so in its title");
  int decades = 0, odd = 0;
  for (int r = 1; r < 11; r++) {
    double v;
    if (sscanf(line(r), "%lf|", &v) != 1) continue;
    double m = v / pow(10, floor(log10(v) + 1e-9));
    if (fabs(m - 1) < 1e-9) decades++;
    else if (fabs(m - 2) > 1e-9 && fabs(m - 5) > 1e-9) odd++;
  }
  ok(decades >= 3 && odd == 0, "log ticks at decades, 2s and 5s only (%d decades)", decades);
  ok(strchr(line(1), '*') && strchr(line(10), '*'),
     "the log range fits the data: 0.03 in the bottom row, 40 in the top one");

  /* A present view's tall plot: a label every few rows, still round. */
  double ty[2] = {3.2, 6.5};
  s.y = ty;
  g.log_y = 0, g.y_min = 3.2, g.y_max = 6.5, g.title = "loss";
  render(&g, 60, 42);
  int run = 0, longest = 0, tall_labels = 0, tall_round = 1;
  for (int r = 1; r < 41; r++) {
    double v;
    if (sscanf(line(r), "%lf|", &v) != 1) {
      if (++run > longest) longest = run;
      continue;
    }
    run = 0, tall_labels++;
    double k = v / 0.2;
    if (fabs(k - lround(k)) > 1e-9) tall_round = 0;
  }
  ok(longest <= 3 && tall_round && strchr(line(1), '*') && strchr(line(40), '*'),
     "a tall plot: labels at most 3 rows apart, multiples of 0.2, the data from the top row to the bottom one "
     "(%d labels, %d rows without one)", tall_labels, longest);
}

static void test_shared_and_thick(void) {
  double x[20], y[20];
  for (int i = 0; i < 20; i++) x[i] = i, y[i] = 1;
  GraphSeries s[2] = {{.name = "a", .x = x, .y = y, .n = 20, .color = 0},
                      {.name = "b", .x = x, .y = y, .n = 20, .color = 1}};
  Graph g = {.title = "t", .glyphs = GRAPH_BRAILLE, .x_min = 0, .x_max = 20, .y_min = 0, .y_max = 1, .series = s,
             .n_series = 2};
  enum { W = 30, H = 11 };
  GraphCell cells[W * H];
  graph_render(&g, cells, W, H);
  int top = 0, other = 0;
  for (int i = W; i < W * (H - 1); i++) {
    if (cells[i].role < GRAPH_ROLE_SHARED) continue;
    if (cells[i].ch == 0x2580 && cells[i].role == GRAPH_ROLE_SERIES + 1 && cells[i].bg == GRAPH_ROLE_SERIES + 0) top++;
    else other++;
  }
  ok(top > 0 && other == 0,
     "two series on one line: every cell they share is an upper half in the colour of the one on top over the "
     "other's colour, none alternating (%d shared, %d other)", top, other);
  ok(strstr(grid(cells, W, 1), "overlap") == NULL && strstr(text, "both") == NULL,
     "... which needs no legend entry with Braille: %s", text);
  g.no_shade = 1;   /* eight colours: no background, the shared role, and the legend says so */
  graph_render(&g, cells, W, H);
  int unshaded = 0;
  for (int k = W; k < W * (H - 1); k++) unshaded += cells[k].role == GRAPH_ROLE_SHARED && cells[k].bg == 0;
  ok(unshaded > 0 && strstr(grid(cells, W, 1), "both") != NULL,
     "without shades a shared cell takes the shared role, and the legend says 'both' (%d): %s", unshaded, text);
  g.no_shade = 0;
  g.mono = 1;
  graph_render(&g, cells, W, H);
  int normal = 0, coloured = 0;
  for (int i = W; i < W * (H - 1); i++) {
    normal += cells[i].role == GRAPH_ROLE_SHARED && cells[i].bg == 0;
    coloured += cells[i].role >= GRAPH_ROLE_SERIES || cells[i].bg != 0;
  }
  ok(normal > 0 && coloured == 0, "without colour, shared cells have the shared role and no background (%d cells)", normal);
  g.mono = 0;
  g.n_series = 1;   /* one line: its own dots */
  graph_render(&g, cells, W, H);
  /* 11 rows: a plot of 9, tall enough for lines two dots thick. */
  ok(cells[1 * W + 10].ch == 0x281b, "Braille lines on a tall plot are two dots thick (U+%04X)",
     (unsigned)cells[1 * W + 10].ch);
  graph_render(&g, cells, W, 6);
  ok(cells[1 * W + 10].ch == 0x2809, "and one dot thin on a short one (U+%04X)", (unsigned)cells[1 * W + 10].ch);
  graph_render(&g, cells, W, 7);
  ok(cells[1 * W + 10].ch == 0x281b, "a plot of five rows (80x24) is tall enough (U+%04X)", (unsigned)cells[1 * W + 10].ch);
  g.n_series = 2;

  s[1].color = 0, s[1].dashed = 1;
  graph_render(&g, cells, W, H);
  int shared = 0;
  for (int i = W; i < W * (H - 1); i++) shared += cells[i].bg != 0;
  ok(shared > 0, "two runs of one colour on one cell are an overlap, not one run (%d shared)", shared);
  s[0].group = s[1].group = 1;
  graph_render(&g, cells, W, H);
  shared = 0;
  for (int i = W; i < W * (H - 1); i++) shared += cells[i].role == GRAPH_ROLE_SHARED || cells[i].bg != 0;
  int tinted = 0, plain = 0;
  for (int i = W; i < W * (H - 1); i++) {
    tinted += cells[i].role == ((GRAPH_ROLE_SERIES + 0) | GRAPH_ROLE_TINT);
    plain += cells[i].role == GRAPH_ROLE_SERIES + 0;
  }
  ok(shared == 0 && tinted > 0 && plain > 0,
     "a run's two lines (training, validation) on one cell are no overlap: the validation's dashes tinted (%d), "
     "the run in their gaps (%d)", tinted, plain);
  s[0].group = s[1].group = 0;
  s[1].y = NULL, s[1].n = 0;
  s[0].bold = 1;
  graph_render(&g, cells, W, H);
  ok(cells[1 * W + 10].role == GRAPH_ROLE_SERIES, "with colour a bold series' line is plain: its hue tells it");
  int bold_legend = 0;
  for (int x = 0; x < W; x++) bold_legend += cells[x].role == (GRAPH_ROLE_SERIES | GRAPH_ROLE_BOLD);
  ok(bold_legend > 0, "its legend entry is bold (%d cells)", bold_legend);
  g.mono = 1;
  graph_render(&g, cells, W, H);
  ok(cells[1 * W + 10].role == (GRAPH_ROLE_SERIES | GRAPH_ROLE_BOLD), "without colour a bold series' line has the bold role");
  g.mono = 0;
  ok(strstr(grid(cells, W, 1), "overlap") == NULL, "no 'overlap' when no cell is shared");
}

static void test_dashes(void) {
  double x[40], y[40];
  for (int i = 0; i < 40; i++) x[i] = i, y[i] = 1;
  GraphSeries s = {.name = "val", .x = x, .y = y, .n = 40, .dashed = 1, .color = 2};
  Graph g = {.glyphs = GRAPH_BRAILLE, .x_min = 0, .x_max = 40, .y_min = 0, .y_max = 1, .series = &s,
             .n_series = 1};
  enum { W = 20, H = 6 };
  GraphCell cells[W * H];
  graph_render(&g, cells, W, H);
  int gaps = 0, run = 0, longest = 0;
  for (int c = 0; c < W; c++) {
    uint32_t ch = cells[1 * W + c].ch;
    /* Dot columns left blank: a blank cell is two, a half cell one. */
    int blank = ch == ' ' || ch == BRAILLE_BLANK_TEST ? 2 : (ch & 0x38) == 0 || (ch & 0x07) == 0 ? 1 : 0;
    if (blank) run += blank;
    else if (run) gaps++, longest = run > longest ? run : longest, run = 0;
  }
  ok(gaps >= 3 && longest >= 3, "Braille dashes leave gaps several dots long (%d gaps, %d dots)", gaps, longest);
  ok(cells[1 * W + 7].role == ((GRAPH_ROLE_SERIES + 2) | GRAPH_ROLE_TINT), "a dashed line is tinted");
}

static void test_legend_rows(void) {
  double x[1] = {0}, y[3] = {0.2, 1, 1.8};
  GraphSeries s[3] = {{.name = "tied_s1", .x = x, .y = y, .n = 1, .color = 0},
                      {.name = "untied_s1", .x = x, .y = y + 1, .n = 1, .color = 1},
                      {.name = "tied_in5_s1", .x = x, .y = y + 2, .n = 1, .color = 2}};
  Graph g = {.title = "loss", .glyphs = GRAPH_ASCII, .x_min = 0, .x_max = 1, .y_min = 0, .y_max = 2, .series = s,
             .n_series = 3};
  render(&g, 43, 10);
  same(line(0), "loss * tied_s1 o untied_s1 + tied_in5_s1   \n", "legend: whole names when they fit");
  render(&g, 30, 10);
  same(line(0), "loss * tied_s1 o untied_s1    \n", "legend: then a second row ...");
  same(line(1), "+ tied_in5_s1                 \n", "... and the plot starts below it");
  render(&g, 22, 10);
  same(line(0), "loss * tied o untied  \n", "legend: then a suffix every run shares is dropped");
  same(line(1), "+ tied_in5            \n", "... never part of a word (\"_s1\", not \"ied_s1\")");
  render(&g, 33, 6);
  same(line(0), "loss * tied o untied + tied_in5  \n", "legend: a short chart keeps one row for it");
  render(&g, 14, 10);
  ok(strstr(text, "~") != NULL && strstr(line(0), "loss") == line(0), "legend: then names end in an ellipsis");
  GraphSeries runs[4] = {{.name = "untied", .x = x, .y = y, .n = 1, .color = 0},
                         {.name = "tied_in2", .x = x, .y = y + 1, .n = 1, .color = 1},
                         {.name = "tied_in5", .x = x, .y = y + 2, .n = 1, .color = 2},
                         {.name = "tied_in10", .x = x, .y = y + 1, .n = 1, .color = 3}};
  g.series = runs, g.n_series = 4;
  render(&g, 23, 10);
  same(line(0), "loss * untied o tie~n2 \n", "legend: names cut in the middle, so their ends still tell them apart ...");
  same(line(1), "+ tie~n5 x tie~10      \n", "... on both rows");
  render(&g, 25, 10);
  same(line(1), "+ tied_in5 x tied_in10   \n", "... whole where they fit: no entry for shared cells takes their room");
  g.series = s, g.n_series = 3;
  g.title = "a long title";
  render(&g, 8, 10);
  same(line(0), "a long~ \n", "a title wider than the chart ends in an ellipsis after its last whole word");
  g.title = "loss";
  render(&g, 14, 10);
  int inside = 1;
  for (int r = 0; r < 2; r++)
    if (line(r)[14] != '\n') inside = 0;
  ok(inside, "legend: never beyond the chart's width");
  for (int r = 0; r < 2; r++)
    if (line(r)[13] != ' ') inside = 0;
  ok(inside, "legend: its last column blank, so it never touches the chart to its right");
}

/* The y labels of a rendered chart (label column 'lw' wide): their
** values and rows, at most 'cap'. */
static int y_labels(const GraphCell *cells, int w, int h, int lw, double *v, int *row, int cap) {
  int n = 0;
  for (int r = 0; r < h && n < cap; r++) {
    char buf[16];
    int k = 0;
    for (int c = 0; c < lw; c++)
      if (cells[r * w + c].ch != ' ' && k < 15) buf[k++] = (char)cells[r * w + c].ch;
    buf[k] = '\0';
    char *end;
    double x = strtod(buf, &end);
    if (k > 0 && *end == '\0') v[n] = x, row[n++] = r;
  }
  return n;
}

/* Labels a reader can trust: a narrow log range still has two, and a tall
** linear one's labels lie where their values are (no 100.25 printed as
** 100.2). */
static void test_y_labels_read_true(void) {
  enum { N = 100, W = 40, H = 34 };
  double x[N], y[N], v[64];
  int row[64];
  for (int i = 0; i < N; i++) x[i] = i, y[i] = 1.1 + 0.7 * i / (N - 1);
  GraphSeries s = {.name = "r", .x = x, .y = y, .n = N};
  Graph g = {.title = "t", .glyphs = GRAPH_BRAILLE, .log_y = 1, .x_min = 0, .x_max = N, .y_min = 1.1, .y_max = 1.8,
             .series = &s, .n_series = 1};
  GraphCell cells[W * H];
  graph_render(&g, cells, W, 12);
  int n = y_labels(cells, W, 12, 6, v, row, 64);
  ok(n >= 2, "a log chart of 1.1 to 1.8 keeps two labels or more (%d)", n);
  for (int i = 0; i < N; i++) y[i] = 100.1 + 3.8 * i / (N - 1);
  g.log_y = 0, g.y_min = 100.1, g.y_max = 103.9;
  graph_render(&g, cells, W, H);
  n = y_labels(cells, W, H, 6, v, row, 64);
  /* Ticks are multiples of one step: printed whole, they are evenly apart. */
  int even = n >= 3;
  for (int i = 2; i < n && even; i++) even = fabs((v[i - 1] - v[i]) - (v[0] - v[1])) < 1e-6;
  ok(even, "a tall chart of 100.1 to 103.9: %d labels, evenly apart as printed (%g, %g, %g, ...)", n, v[0], v[1],
     v[2]);
}

static void test_reference_and_events(void) {
  double x[2] = {0, 10}, y[2] = {0.1, 10};
  GraphSeries s = {.name = "r", .x = x, .y = y, .n = 2};
  GraphEvent ev[2] = {{3, GRAPH_EVENT_TIE, NULL}, {6, GRAPH_EVENT_SCALE, NULL}};
  Graph g = {.title = "g", .glyphs = GRAPH_BRAILLE, .log_y = 1, .x_min = 0, .x_max = 10, .y_min = 0.1,
             .y_max = 10, .series = &s, .n_series = 1, .events = ev, .n_events = 2, .has_ref = 1, .ref_y = 1,
             .ref_label = "out=in"};
  enum { W = 50, H = 10 };
  GraphCell cells[W * H];
  /* The chart knows no settings: the caller names the kinds. */
  graph_render(&g, cells, W, H);
  ok(strstr(grid(cells, W, 1), "\u25b2") == NULL, "kinds the caller does not name are left out of the legend: %s", text);
  ok(graph_legend_fits_row(&g, W) && !graph_legend_fits_row(&g, 5),
     "a legend of a title and a line fits one row of %d columns whole, not of 5", W);
  g.event_names[GRAPH_EVENT_TIE] = "tie";
  g.event_names[GRAPH_EVENT_SCALE] = "scale";
  graph_render(&g, cells, W, H);
  int ref_row = -1;
  for (int r = 1; r < H - 1 && ref_row < 0; r++) {
    int n = 0;
    for (int c = 7; c < W; c++) n += cells[r * W + c].role == GRAPH_ROLE_REF;
    if (n > W / 2) ref_row = r;
  }
  char label[8] = "";
  if (ref_row > 0) memcpy(label, grid(cells + ref_row * W, 6, 1), 6);
  ok(ref_row > 0 && strcmp(label, "out=in") == 0 && cells[ref_row * W].role == GRAPH_ROLE_REF,
     "a dotted reference line at y = 1, named in the y labels' column in its grey (row %d, '%s')", ref_row, label);
  grid(cells, W, 1);
  ok(strstr(text, "out=in") == NULL && strstr(text, "\u25b2 tie") != NULL && strstr(text, "\u25c6 scale") != NULL,
     "the legend names each kind of event shown, and not the line its axis names: %s", text);
  g.ref_label = "a long name";
  graph_render(&g, cells, W, H);
  grid(cells, W, 1);
  ok(strstr(text, "\u2504 a long name") != NULL, "a name too long for the labels' column goes in the legend: %s", text);
  /* A chart too narrow for the events' entries beside the names keeps
  ** one legend row: the rules label themselves in the plot. */
  g.ref_label = "out=in";
  g.title = "grad out/in";
  GraphCell narrow[24 * H];
  graph_render(&g, narrow, 24, H);
  char row1[256];
  snprintf(row1, sizeof row1, "%s", grid(narrow + 24, 24, 1));
  grid(narrow, 24, 1);
  ok(strstr(text, "r") != NULL && strstr(text, "tie") == NULL && strstr(row1, "scale") == NULL && strstr(row1, "tie") == NULL,
     "on a narrow chart the events' entries go before the legend takes a second row: '%s' / '%s'", text, row1);
  g.ref_label = "out=in";
  ok(cells[(H - 1) * W + 7 + 12].ch == 0x25b2 && cells[(H - 1) * W + 7 + 25].ch == 0x25c6,
     "a tie change and a scale change have their own marks on the axis");
  /* A marker on a tick's label: the label goes, no digit sits beside it. */
  GraphEvent on_tick = {300, GRAPH_EVENT_TIE, NULL};
  double x2[2] = {0, 600};
  s.x = x2;
  g.x_max = 600, g.events = &on_tick, g.n_events = 1;
  graph_render(&g, cells, W, H);
  const char *axis = grid(cells + (H - 1) * W, W, 1), *mark = strstr(axis, "\u25b2");
  int beside = mark && mark > axis && ((mark[-1] >= '0' && mark[-1] <= '9') || (mark[3] >= '0' && mark[3] <= '9'));
  ok(mark && !beside && strstr(axis, "200") && !strstr(axis, "300"),
     "a tick label under an event's marker is left out: %s", axis);
}

static void test_xaxis(void) {
  GraphXAxis a = {0};
  ok(graph_xaxis_update(&a, 0) == GRAPH_X_FIRST && graph_xaxis_update(&a, 49) == GRAPH_X_FIRST,
     "time axis: 0..50 before the 50th step");
  double m = graph_xaxis_update(&a, 60);
  ok(60 / m >= 0.9 && 60 / m <= 1, "time axis: past 50 the newest step lies in the last 10%% (%g of %g)", 60.0, m);
  int jumps = 0;
  double last = m;
  for (int step = 61; step <= 100000; step++) {
    double x = graph_xaxis_update(&a, step);
    if (x != last) jumps++, last = x;
    if (step / x < 0.9 || step > x) {
      ok(0, "time axis: step %d out of the last 10%% of %g", step, x);
      return;
    }
  }
  ok(jumps > 10 && jumps < 100, "time axis: the newest step always in the last 10%%, in few jumps (%d to 100000)",
     jumps);
  ok(graph_xaxis_update(&a, 30) == GRAPH_X_FIRST && fabs(graph_xaxis_update(&a, 500) - 500 / 0.905) < 1e-9,
     "time axis: falls back when the runs go");
}

/* The y labels of the last render, rows 'from'..'to': 1 when no two are
** the same and none is "inf" or "nan". */
static int labels_sound(int from, int to, int lw) {
  char seen[16][16];
  int n = 0;
  for (int r = from; r <= to; r++) {
    char lab[16];
    snprintf(lab, sizeof lab, "%.*s", lw, line(r));
    if (strspn(lab, " ") == strlen(lab)) continue;
    if (strstr(lab, "inf") || strstr(lab, "nan")) return 0;
    for (int k = 0; k < n; k++)
      if (strcmp(seen[k], lab) == 0) return 0;
    if (n < 16) snprintf(seen[n++], sizeof seen[0], "%s", lab);
  }
  return n > 0;
}

/* Spans of a few roundings (0.3 against 0.1 + 0.2), of nothing, and wider
** than a double holds: the ticks are counted, so none of them loops, and
** every label is a different number. */
static void test_degenerate_spans(void) {
  double x[2] = {0, 10}, y[2] = {0.3, 0.1 + 0.2};
  GraphSeries s = {.name = "r", .x = x, .y = y, .n = 2};
  Graph g = {.title = "t", .glyphs = GRAPH_ASCII, .x_min = 0, .x_max = 12, .y_min = 0.3, .y_max = 0.1 + 0.2,
             .series = &s, .n_series = 1};
  render(&g, 20, 7);
  ok(labels_sound(1, 5, 5), "0.3 against 0.1 + 0.2: the range is widened, each label a different value");
  int row = -1, rows = 0;
  for (int r = 1; r <= 5; r++)
    if (strchr(line(r), '*')) row = r, rows++;
  ok(rows == 1 && strncmp(line(row), "  0.3|", 6) == 0, "... and the two equal values lie on the row of 0.3 (%d rows)",
     rows);
  GraphScale sc = {0};
  graph_scale_update(&sc, 0.3, 0.1 + 0.2, 0);
  ok(sc.hi - sc.lo > 0.01 && sc.lo < 0.3 && sc.hi > 0.3, "scale: a span of roundings counts as none (%g..%g)", sc.lo,
     sc.hi);
  for (int t = 0; t < 3; t++) {
    g.glyphs = (GraphGlyphs)t;
    g.y_min = sc.lo, g.y_max = sc.hi;
    render(&g, 20, 7);
    ok(labels_sound(1, 5, 5), "... with its margin, in tier %d", t);
  }
  double big[2] = {-1e308, 1e308};
  s.y = big;
  sc = (GraphScale){0};
  graph_scale_update(&sc, -1e308, 1e308, 0);
  ok(isfinite(sc.lo) && isfinite(sc.hi) && sc.lo <= -1e308 && sc.hi >= 1e308,
     "scale: values near the largest double keep a finite range (%g..%g)", sc.lo, sc.hi);
  for (int t = 0; t < 3; t++) {
    g.glyphs = (GraphGlyphs)t;
    g.y_min = -1e308, g.y_max = 1e308;
    render(&g, 20, 8);
    GraphCell cells[20 * 8];
    graph_render(&g, cells, 20, 8);
    int top = 0;
    for (int c = 6; c < 20; c++) top |= cells[20 + c].ch != ' ';
    ok(labels_sound(1, 6, 5) && top, "-1e308..1e308: finite labels, the largest at the top, in tier %d", t);
  }
  g.glyphs = GRAPH_ASCII;
  render(&g, 20, 8);
  ok(strstr(line(1), "*") && strstr(line(6), "*"), "... and the smallest at the bottom");
  double flat[3] = {2, 2, 2}, fx[3] = {0, 5, 10};
  s.x = fx, s.y = flat, s.n = 3;
  g.y_min = g.y_max = 2;
  render(&g, 20, 7);
  ok(labels_sound(1, 5, 5) && strchr(line(3), '*') && strncmp(line(3), "    2|", 6) == 0,
     "all values equal: a level line at 2 in the middle, labels around it");
  g.x_min = 1e15, g.x_max = 1e15 + 0.25;
  render(&g, 20, 7);
  ok(strchr(line(6), '+') != NULL, "a time axis a few roundings wide is drawn too");
}

/* A series measured every few columns is a line in the block and ASCII
** tiers too, dashes kept. */
static void test_sparse_joined(void) {
  double x[3] = {0, 5, 10}, y[3] = {0, 5, 0};
  GraphSeries s = {.x = x, .y = y, .n = 3};
  Graph g = {.glyphs = GRAPH_ASCII, .x_min = 0, .x_max = 11, .y_min = 0, .y_max = 5, .series = &s, .n_series = 1};
  same(render(&g, 11, 8),
       "           \n"
       "     *     \n"
       "    * *    \n"
       "   *   *   \n"
       "  *     *  \n"
       " *       * \n"
       "*         *\n"
       "0----5---10\n",
       "ASCII: samples five columns apart are joined through the columns between");
  g.glyphs = GRAPH_BLOCK;
  GraphCell cells[11 * 8];
  graph_render(&g, cells, 11, 8);
  int cols = 0;
  for (int c = 0; c < 11; c++)
    for (int r = 1; r < 7; r++)
      if (cells[r * 11 + c].ch != ' ') {
        cols++;
        break;
      }
  ok(cols == 11, "block: the same (%d columns of 11)", cols);
  s.dashed = 1;
  g.glyphs = GRAPH_ASCII;
  render(&g, 11, 8);
  cols = 0;
  for (int c = 0; c < 11; c++)
    for (int r = 1; r < 7; r++)
      if (line(r)[c] == ':') {
        cols++;
        break;
      }
  ok(cols == 6, "a dashed series keeps its gaps across the columns between (%d of 11)", cols);
}

/* Runs that share a colour (the seventh run on) still differ, validation
** lines share one lighter mark, and runs left out are counted. */
static void test_many_runs(void) {
  double x[2] = {0, 10}, y[2] = {1, 1};
  GraphSeries s[4] = {{.name = "a", .x = x, .y = y, .n = 2, .color = 0, .group = 1},
                      {.name = "val", .x = x, .y = y, .n = 2, .color = 0, .group = 1, .dashed = 1},
                      {.name = "g", .x = x, .y = y, .n = 2, .color = 0, .group = 7, .style = 1},
                      {.name = "val", .x = x, .y = y, .n = 2, .color = 0, .group = 7, .style = 1, .dashed = 1}};
  Graph g = {.title = "loss", .glyphs = GRAPH_ASCII, .x_min = 0, .x_max = 11, .y_min = 0, .y_max = 2, .series = s,
             .n_series = 4};
  render(&g, 40, 8);
  same(line(0), "loss * a : val X g                      \n",
       "ASCII: runs of one colour have other marks, the validation lines one lighter mark and entry");
  g.runs_left_out = 3;
  render(&g, 40, 8);
  ok(strstr(line(0), " +3 runs") != NULL, "the legend counts the runs left out: %s", line(0));
  g.runs_left_out = 0;
  g.n_series = 2;
  GraphCell cells[40 * 8];
  graph_render(&g, cells, 40, 8);
  int shared = 0;
  for (int i = 40; i < 40 * 7; i++) shared += cells[i].role == GRAPH_ROLE_SHARED;
  ok(shared == 0, "a run's own two lines are not an overlap (%d)", shared);
}

/* Names too long for the legend are cut so that no two read alike. */
static void test_legend_names_apart(void) {
  static const char *const names[5] = {"tied_s1", "untied_s1", "tied_x2_s1", "tied_x5_s1", "tied_x10_s1"};
  double x[1] = {0}, y[1] = {1};
  GraphSeries s[5];
  for (int i = 0; i < 5; i++) s[i] = (GraphSeries){.name = names[i], .x = x, .y = y, .n = 1, .color = i, .group = i + 1};
  Graph g = {.title = "grad out/in", .glyphs = GRAPH_ASCII, .log_y = 1, .x_min = 0, .x_max = 1, .y_min = 0.5,
             .y_max = 2, .series = s, .n_series = 5, .has_ref = 1, .ref_y = 1, .ref_label = "out=in"};
  render(&g, 34, 8);
  same(line(0), "grad out/in (log) * tied o untied \n", "legend: cut names keep what tells them apart ...");
  same(line(1), "+ tied_x2 x tied_x5 @ tied_x10    \n", "... on both rows");
  for (int w = 20; w <= 60; w++) {
    render(&g, w, 8);
    char got[2][1024];
    snprintf(got[0], sizeof got[0], "%s", line(0));
    snprintf(got[1], sizeof got[1], "%s", line(1));
    const char *names_seen[16];
    int n = 0, apart = 1;
    for (int r = 0; r < 2; r++)
      for (char *t = strtok(got[r], " \n"); t; t = strtok(NULL, " \n")) {
        if (strlen(t) == 1) continue;   /* a mark */
        for (int k = 0; k < n; k++)
          if (strcmp(names_seen[k], t) == 0) apart = 0;
        if (n < 16) names_seen[n++] = t;
      }
    if (!apart) {
      ok(0, "legend names apart at width %d: %s%s", w, line(0), line(1));
      return;
    }
  }
  ok(1, "legend: no two names alike at any width from 20 to 60");
}

/* ------------------------------------------------------------ five runs told apart */

#define FIVE 5

/* A chart of five runs without colour in 'tier', each a level line on its
** own row of the plot (run i at y = i + 0.5 of 0..5), in their order:
** colour, group and line i. */
static Graph five_runs(GraphSeries *s, double *x, double *y, GraphGlyphs tier) {
  static const char *const names[FIVE] = {"ra", "rb", "rc", "rd", "re"};
  for (int k = 0; k < 60; k++) x[k] = k;
  for (int i = 0; i < FIVE; i++) {
    for (int k = 0; k < 60; k++) y[i * 60 + k] = i + 0.5;
    s[i] = (GraphSeries){.name = names[i], .x = x, .y = y + i * 60, .n = 60, .color = i, .group = i + 1, .line = i};
  }
  return (Graph){.title = "loss", .glyphs = tier, .x_min = 0, .x_max = 60, .y_min = 0, .y_max = 5, .series = s,
                 .n_series = FIVE, .mono = 1};
}

/* The legend's sample of series 'name' in the first two rows: the cell
** before the space before its name; 0 when not found. */
static uint32_t legend_sample(const GraphCell *cells, int w, const char *name) {
  for (int i = 2; i + 2 < 2 * w; i++)
    if (cells[i].ch == (uint32_t)name[0] && cells[i + 1].ch == (uint32_t)name[1] && cells[i - 1].ch == ' ' &&
        cells[i - 2].ch != ' ')
      return cells[i - 2].ch;
  return 0;
}

static int samples_apart(const GraphCell *cells, int w, const GraphSeries *s, int n, char *why, size_t cap) {
  uint32_t got[FIVE];
  for (int i = 0; i < n; i++) {
    got[i] = legend_sample(cells, w, s[i].name);
    if (!got[i]) return snprintf(why, cap, "no sample for %s", s[i].name), 0;
    for (int k = 0; k < i; k++)
      if (got[k] == got[i]) return snprintf(why, cap, "%s and %s both U+%04X", s[k].name, s[i].name, (unsigned)got[i]), 0;
  }
  return snprintf(why, cap, "all differ"), 1;
}

/* Each series' look in the plot, read from the cells of its colour: the
** dot columns (Braille) or columns (block) drawn, and how many dot rows
** thick, as a signature such as "2:110011001100". */
static void signature(const GraphCell *cells, int w, int h, int color, GraphGlyphs tier, char *sig, size_t cap) {
  int n = 0, rows = 0;
  char on[512] = {0};
  for (int y = 2; y < h - 1; y++)
    for (int x = 0; x < w; x++) {
      const GraphCell *c = &cells[y * w + x];
      if ((c->role & ~(GRAPH_ROLE_BOLD | GRAPH_ROLE_TINT)) != GRAPH_ROLE_SERIES + color) continue;
      if (tier == GRAPH_BRAILLE) {
        uint32_t b = c->ch - BRAILLE_BLANK_TEST;
        int left = (b & 0x47) != 0, right = (b & 0xb8) != 0, r = 0;
        for (int k = 0; k < 8; k++) r += (b >> k) & 1;
        if (r > rows) rows = r;
        if (2 * x + 1 < (int)sizeof on) on[2 * x] |= left, on[2 * x + 1] |= right;
      } else if (x < (int)sizeof on) {
        on[x] = 1;
      }
    }
  int first = -1, last = -1;
  for (int x = 0; x < (int)sizeof on; x++)
    if (on[x]) last = x, first = first < 0 ? x : first;
  n = snprintf(sig, cap, "%d:", rows);
  for (int x = first; x >= 0 && x <= last && n + 1 < (int)cap; x++) sig[n++] = on[x] ? '1' : '0';
  sig[n] = '\0';
}

/* Without colour, five runs differ by the pattern of their line, in
** Braille and in block, each run's legend sample differs from the others',
** and each run's cells have its pattern, not another's. */
static void test_mono_patterns(void) {
  double x[60], y[FIVE * 60];
  GraphSeries s[FIVE];
  Graph g = five_runs(s, x, y, GRAPH_BRAILLE);
  enum { W = 70, H = 14 };
  GraphCell cells[W * H];
  static const GraphGlyphs tiers[2] = {GRAPH_BRAILLE, GRAPH_BLOCK};
  static const char *const tier_name[2] = {"Braille", "block"};
  for (int t = 0; t < 2; t++) {
    g.glyphs = tiers[t];
    graph_render(&g, cells, W, H);
    char why[128];
    ok(samples_apart(cells, W, s, FIVE, why, sizeof why), "mono %s: five legend samples, pairwise apart (%s)",
       tier_name[t], why);
    char sig[FIVE][512];
    int apart = 1, drawn = 1;
    for (int i = 0; i < FIVE; i++) {
      signature(cells, W, H, i, tiers[t], sig[i], sizeof sig[i]);
      drawn &= strlen(sig[i]) > 20;
      for (int k = 0; k < i; k++) apart &= strcmp(sig[k], sig[i]) != 0;
    }
    ok(drawn && apart, "mono %s: each run's cells carry a pattern no other run has", tier_name[t]);
    if (!(drawn && apart))
      for (int i = 0; i < FIVE; i++) diag("%s %s", s[i].name, sig[i]);
  }
  g.glyphs = GRAPH_BRAILLE;
  g.mono = 0;
  graph_render(&g, cells, W, H);
  char sig0[512], sig1[512];
  signature(cells, W, H, 0, GRAPH_BRAILLE, sig0, sizeof sig0);
  signature(cells, W, H, 1, GRAPH_BRAILLE, sig1, sizeof sig1);
  ok(strcmp(sig0, sig1) == 0 && legend_sample(cells, W, "ra") == legend_sample(cells, W, "rb"),
     "with colour, runs keep one solid line (their colours tell them apart)");
}

/* In ASCII, five runs have five marks, in the plot and in the legend, and
** where all five lie on one row, the two drawn last are seen, each by its
** own mark (without colour a row apart) or colour. */
static void test_ascii_five(void) {
  double x[60], y[FIVE * 60];
  GraphSeries s[FIVE];
  Graph g = five_runs(s, x, y, GRAPH_ASCII);
  enum { W = 70, H = 14 };
  GraphCell cells[W * H];
  graph_render(&g, cells, W, H);
  char why[128];
  ok(samples_apart(cells, W, s, FIVE, why, sizeof why), "ASCII: five legend marks, pairwise apart (%s)", why);
  int own = 1;
  for (int i = 0; i < FIVE; i++) {
    uint32_t mark = legend_sample(cells, W, s[i].name);
    int n = 0;
    for (int k = 2 * W; k < W * (H - 1); k++)
      if (cells[k].role == GRAPH_ROLE_SERIES + i) n++, own &= cells[k].ch == mark;
    own &= n > 20;
  }
  ok(own, "ASCII: every cell of a run has the run's own mark, the one its legend entry shows");
  for (int i = 0; i < FIVE; i++) s[i].y = y;   /* all on one row */
  graph_render(&g, cells, W, H);
  /* The two drawn last show: the last on its row, the one before on the
  ** row beneath (level with each other, the one on top counts as higher). */
  int rows[GRAPH_COLORS] = {0}, other = 0, row4 = -1, row3 = -1;
  for (int k = 2 * W; k < W * (H - 1); k++) {
    if (cells[k].ch == ' ' || cells[k].role < GRAPH_ROLE_SERIES) continue;
    int i = cells[k].role & 7;
    rows[i]++;
    if (i == 4 && cells[k].ch == '@') row4 = k / W;
    else if (i == 3 && cells[k].ch == 'x') row3 = k / W;
    else other++;
  }
  ok(rows[4] > 20 && rows[3] > 20 && row3 == row4 + 1 && other == 0 && !strchr(grid(cells, W, H), '#'),
     "ASCII: five runs on one row, no colour: the last drawn ('@') on its row, the one before ('x') a row beneath, "
     "each its own mark (%d, %d cells, %d other)", rows[4], rows[3], other);
  g.mono = 0;
  graph_render(&g, cells, W, H);
  int top = 1, n = 0;
  for (int k = 2 * W; k < W * (H - 1); k++) {
    if (cells[k].ch == ' ' || cells[k].role < GRAPH_ROLE_SERIES) continue;
    top &= cells[k].ch == '@' && cells[k].role == GRAPH_ROLE_SERIES + 4 && cells[k].bg == GRAPH_ROLE_SERIES + 3;
    n++;
  }
  ok(top && n > 20, "ASCII with colour: the mark of the run on top in its colour over the colour of the one beneath "
     "(%d cells)", n);
  int marks_alone = 1;
  for (int i = 0; i < 2; i++)
    for (const char *m = "*o+x@%&=XOHWVZ8$:"; *m; m++) marks_alone &= *m != '#';
  ok(marks_alone, "no run's or validation's mark is '#'");
}

/* A run's validation line lies over its training line: the validation is
** seen there, in every tier, with colour and without. */
static void test_validation_over_run(void) {
  double x[60], y[60];
  for (int k = 0; k < 60; k++) x[k] = k, y[k] = 2;
  GraphSeries s[2] = {{.name = "run", .x = x, .y = y, .n = 60, .color = 1, .group = 1, .line = 1},
                      {.name = "val", .x = x, .y = y, .n = 60, .color = 1, .group = 1, .line = 1, .dashed = 1}};
  enum { W = 70, H = 14 };
  GraphCell cells[W * H];
  Graph g = {.title = "loss", .x_min = 0, .x_max = 60, .y_min = 0, .y_max = 4, .series = s, .n_series = 2};
  static const char *const tier_name[3] = {"Braille", "block", "ASCII"};
  for (int mono = 0; mono < 2; mono++)
    for (int t = 0; t < 3; t++) {
      g.glyphs = (GraphGlyphs)t;
      g.mono = mono;
      graph_render(&g, cells, W, H);
      int val = 0, run = 0, shared = 0;
      for (int k = 2 * W; k < W * (H - 1); k++) {
        val += cells[k].role == ((GRAPH_ROLE_SERIES + 1) | GRAPH_ROLE_TINT);
        run += cells[k].role == GRAPH_ROLE_SERIES + 1;
        shared += cells[k].role == GRAPH_ROLE_SHARED;
      }
      /* Its own mark in ASCII; without colour, its own sparse dots. */
      int looks = 1;
      for (int k = 2 * W; k < W * (H - 1); k++) {
        if (cells[k].role != ((GRAPH_ROLE_SERIES + 1) | GRAPH_ROLE_TINT)) continue;
        if (t == GRAPH_ASCII) looks &= cells[k].ch == ':';
        if (t == GRAPH_BRAILLE && mono) looks &= cells[k].ch == 0x2801 || cells[k].ch == 0x2802 || cells[k].ch == 0x2804 ||
                                                cells[k].ch == 0x2840 || cells[k].ch == 0x2808 || cells[k].ch == 0x2810 ||
                                                cells[k].ch == 0x2820 || cells[k].ch == 0x2880;
      }
      ok(val > 5 && run > 5 && shared == 0 && looks,
         "%s %s: validation over its own run is seen (%d cells), the run in its gaps (%d)", tier_name[t],
         mono ? "without colour" : "with colour", val, run);
    }
  /* Two runs on one row, each with its validation: the shared cells show
  ** the run drawn last over a tint of the other, in every tier. */
  GraphSeries four[4] = {s[0], s[1], s[0], s[1]};
  for (int i = 2; i < 4; i++) four[i].color = 2, four[i].group = 2, four[i].line = 2;
  g.series = four, g.n_series = 4, g.mono = 0;
  for (int t = 0; t < 3; t++) {
    g.glyphs = (GraphGlyphs)t;
    graph_render(&g, cells, W, H);
    int top = 0, other = 0;
    for (int k = 2 * W; k < W * (H - 1); k++) {
      if (cells[k].role < GRAPH_ROLE_SERIES) continue;
      if (cells[k].ch == (t == GRAPH_ASCII ? '+' : 0x2580) && cells[k].role == GRAPH_ROLE_SERIES + 2 &&
          cells[k].bg == GRAPH_ROLE_SERIES + 1)
        top++;
      else
        other++;
    }
    ok(top > 5 && other == 0,
       "%s with colour: two runs on one row, each with its validation: the last run over the other's colour (%d, %d "
       "other)", tier_name[t], top, other);
  }
}

/* Row 'y' of 'cells' as the terminal shows it (term_cells): a wide
** character covers the cell after it; an accent goes on the character
** before it, and the column it leaves is made up at the next blank. */
static const char *shown_row(const GraphCell *cells, int w, int y) {
  static char out[2048];
  wchar_t row[1024];
  int n = 0, owed = 0;
  for (int x = 0; x < w && n < 1000; x++) {
    wchar_t wc = (wchar_t)cells[(size_t)y * w + x].ch;
    row[n++] = wc;
    if (wcwidth(wc) == 2) x++;
    else if (wcwidth(wc) == 0) owed++;
    for (; wc == ' ' && owed > 0; owed--) row[n++] = ' ';
  }
  for (; owed > 0; owed--) row[n++] = ' ';
  row[n] = 0;
  if (wcstombs(out, row, sizeof out) == (size_t)-1) out[0] = '\0';
  return out;
}

/* Columns of UTF-8 text by the C library. */
static int text_cols(const char *s) {
  wchar_t w[1024];
  size_t n = mbstowcs(w, s, 1024);
  return n == (size_t)-1 ? -1 : wcswidth(w, n);
}

/* Run names of wide characters: the legend gives each its two cells, so
** the row is as wide as the chart and the next chart starts where it
** should. */
static void test_legend_wide(void) {
  static const char *const names[2] = {"\u5b66\u7fd2_tied", "\u5b66\u7fd2_untied"};
  double x[1] = {0}, y[2] = {0.5, 1.5};
  GraphSeries s[2];
  for (int i = 0; i < 2; i++)
    s[i] = (GraphSeries){.name = names[i], .x = x, .y = &y[i], .n = 1, .color = i, .group = i + 1};
  Graph g = {.title = "loss", .glyphs = GRAPH_BRAILLE, .x_min = 0, .x_max = 1, .y_min = 0, .y_max = 2, .series = s,
             .n_series = 2};
  GraphCell cells[40 * 8];
  graph_render(&g, cells, 40, 8);
  const char *row = shown_row(cells, 40, 0);
  ok(strcmp(row, "loss \u2501 \u5b66\u7fd2_tied \u2501 \u5b66\u7fd2_untied          ") == 0 && text_cols(row) == 40,
     "legend: wide characters take two cells, the row as wide as the chart (%s|)", row);
}

/* Wide names cut at every width: never a wide character split or in the
** last column, every row as wide as the chart, names shown whole or cut
** around an ellipsis, and no two alike. */
static void test_legend_wide_cut(void) {
  static const char *const names[3] = {"\u6771\u4eac\u306e\u5b9f\u9a13_\u7d50\u5408\u3042\u308a",
                                        "\u5927\u962a\u306e\u5b9f\u9a13_\u7d50\u5408\u306a\u3057", "\u540d\u53e4\u5c4b_untied"};
  double x[1] = {0}, y[1] = {1};
  GraphSeries s[3];
  for (int i = 0; i < 3; i++) s[i] = (GraphSeries){.name = names[i], .x = x, .y = y, .n = 1, .color = i, .group = i + 1};
  Graph g = {.title = "loss", .glyphs = GRAPH_ASCII, .x_min = 0, .x_max = 1, .y_min = 0, .y_max = 2, .series = s,
             .n_series = 3};
  int split = 0, wrong_width = 0, unknown = 0, alike = 0, first = 0;
  for (int w = 12; w <= 70; w++) {
    GraphCell cells[70 * 8];
    graph_render(&g, cells, w, 8);
    char seen[8][256];
    int n_seen = 0;
    for (int r = 0; r < 2; r++) {
      int bad = 0;
      for (int c = 0; c < w; c++) {
        uint32_t ch = cells[r * w + c].ch;
        if (wcwidth((wchar_t)ch) == 2 && (c == w - 1 || cells[r * w + c + 1].ch != ' ')) bad = 1;
      }
      split += bad;
      char row[2048];
      snprintf(row, sizeof row, "%s", shown_row(cells, w, r));
      if (text_cols(row) != w) wrong_width++, bad = 1;
      /* Each entry: a mark, a space, then a name (or the part of it shown). */
      for (char *t = strtok(row, " "); t; t = strtok(NULL, " ")) {
        if ((unsigned char)t[0] < 0x80) continue;
        const char *name = t, *cut = strchr(name, '~');
        char head[256];
        snprintf(head, sizeof head, "%.*s", cut ? (int)(cut - name) : (int)strlen(name), name);
        int known = 0;
        for (int k = 0; k < 3; k++) {
          const char *at = strstr(names[k], head);
          if (at && (!cut || strstr(at + strlen(head), cut + 1))) known = 1;
        }
        if (!known) unknown++, bad = 1;
        for (int k = 0; k < n_seen; k++)
          if (strcmp(seen[k], name) == 0) alike++, bad = 1;
        if (n_seen < 8) snprintf(seen[n_seen++], sizeof seen[0], "%s", name);
      }
      if (bad && !first) {
        first = 1;
        diag("width %d row %d: %s|", w, r, shown_row(cells, w, r));
      }
    }
  }
  ok(split == 0 && wrong_width == 0, "legend: wide names at every width from 12 to 70 fill whole cells (%d rows split, "
     "%d rows not as wide as the chart)", split, wrong_width);
  ok(unknown == 0 && alike == 0, "legend: wide names shown whole or cut around an ellipsis, never alike (%d unknown, "
     "%d alike)", unknown, alike);
}

/* ------------------------------------------------------------ long histories */

static int braille_dots(uint32_t ch) { return ch > BRAILLE_BLANK_TEST && ch <= BRAILLE_BLANK_TEST + 0xff; }

/* A spike of 20 over points 10..30 of 10000 on a baseline of 1, 40 cells
** wide: a column stands for 125 points, whose mean (about 4) hides the
** spike; the column's faint span still reaches the top. */
static void test_spike_envelope(void) {
  enum { N = 10000, W = 40, H = 12 };
  static double x[N], y[N];
  for (int k = 0; k < N; k++) x[k] = k, y[k] = k >= 10 && k <= 30 ? 20 : 1;
  GraphSeries s = {.name = "ratio", .x = x, .y = y, .n = N, .color = 1};
  Graph g = {.title = "r", .glyphs = GRAPH_BRAILLE, .x_min = 0, .x_max = N, .y_min = 1, .y_max = 20, .series = &s,
             .n_series = 1};
  GraphCell cells[W * H];
  graph_render(&g, cells, W, H);
  int x0 = 0;
  while (x0 < W && cells[(H - 1) * W + x0].ch != 0x2514) x0++;   /* the axis corner */
  int top = 0, faint = 1;
  for (int c = x0 + 1; c <= x0 + 2; c++)
    if (braille_dots(cells[1 * W + c].ch)) top++, faint &= cells[1 * W + c].role == ((GRAPH_ROLE_SERIES + 1) | GRAPH_ROLE_TINT);
  ok(top > 0 && faint, "a spike of 20 in 10000 points reaches the plot's top row, faintly (%d cells)", top);
  if (!top) diag("\n%s", grid(cells, W, H));
  int elsewhere = 0;
  for (int c = x0 + 4; c < W; c++) elsewhere += braille_dots(cells[1 * W + c].ch);
  ok(elsewhere == 0, "... and nothing else does (%d cells)", elsewhere);
  g.glyphs = GRAPH_ASCII;
  graph_render(&g, cells, W, H);
  ok(cells[1 * W + x0 + 1].ch == '|', "ASCII: the spike's span is a column of '|' (%c)", (char)cells[1 * W + x0 + 1].ch);

  /* Points that stand for buckets: their 'hi' reaches the top. */
  double bx[100], by[100], bhi[100];
  for (int k = 0; k < 100; k++) bx[k] = k * 100, by[k] = 1, bhi[k] = k == 3 ? 20 : 1.5;
  GraphSeries b = {.name = "ratio", .x = bx, .y = by, .hi = bhi, .n = 100, .color = 1};
  g.glyphs = GRAPH_BRAILLE, g.series = &b;
  graph_render(&g, cells, W, H);
  top = 0;
  for (int c = x0 + 1; c < W; c++) top += braille_dots(cells[1 * W + c].ch);
  ok(top > 0, "a point's 'hi' (a bucket's largest value) is drawn too (%d cells on the top row)", top);
  double lo = 0, hi = 0;
  ok(graph_y_range(&b, 1, 0, &lo, &hi) && lo == 1 && hi == 20, "the y range holds the points' 'hi' (%g..%g)", lo, hi);
  ok(graph_y_range_x(&b, 1, 0, 500, 9900, &lo, &hi) && lo == 1 && hi == 1.5,
     "graph_y_range_x: only points in the x range count, their envelopes too (%g..%g)", lo, hi);
  ok(!graph_y_range_x(&b, 1, 0, 20000, 30000, &lo, &hi), "graph_y_range_x: none in the range, none found");
}

/* Series measured every 100 steps over 2000: a line without breaks. */
static void test_sparse_braille(void) {
  enum { W = 40, H = 10 };
  double x[21], y[21];
  for (int k = 0; k < 21; k++) x[k] = k * 100, y[k] = 2 + sin(k * 0.9) * 1.5;
  GraphSeries s = {.name = "val", .x = x, .y = y, .n = 21, .color = 2};
  Graph g = {.glyphs = GRAPH_BRAILLE, .x_min = 0, .x_max = 2000, .y_min = 0, .y_max = 4, .series = &s, .n_series = 1};
  GraphCell cells[W * H];
  graph_render(&g, cells, W, H);
  /* Every dot column from the first point to the last holds a dot. */
  int cols = 2 * (W - 7), gaps = 0;
  for (int dx = 0; dx < cols - 1; dx++) {
    int any = 0;
    for (int r = 1; r < H - 1; r++) {
      uint32_t ch = cells[r * W + 7 + dx / 2].ch;
      if (braille_dots(ch)) any |= ((ch - BRAILLE_BLANK_TEST) & (dx % 2 ? 0xb8 : 0x47)) != 0;
    }
    gaps += !any;
  }
  ok(gaps == 0, "Braille: a series every 100 steps over 2000 is a continuous line (%d dot columns empty)", gaps);
  if (gaps) diag("\n%s", grid(cells, W, H));
}

/* Smoothing as TensorBoard does: the average in the series' colour over
** its raw line, faint. */
static void test_smoothing(void) {
  enum { N = 200, W = 50, H = 14 };
  double x[N], y[N], flat[N];
  for (int k = 0; k < N; k++) x[k] = k, y[k] = k % 2 ? 4 : 0, flat[k] = 3;
  GraphSeries s = {.name = "loss", .x = x, .y = y, .n = N, .color = 0};
  Graph g = {.glyphs = GRAPH_BRAILLE, .x_min = 0, .x_max = N, .y_min = 0, .y_max = 4, .series = &s, .n_series = 1,
             .smooth = 0.9};
  GraphCell cells[W * H];
  graph_render(&g, cells, W, H);
  int rows[H] = {0}, faint_top = 0;
  /* From the third column: the average starts at the first point, 0. */
  for (int r = 0; r < H - 1; r++)
    for (int c = 9; c < W; c++) {
      if (cells[r * W + c].role == GRAPH_ROLE_SERIES + 0) rows[r]++;
      if (r <= 1 && cells[r * W + c].role == (GRAPH_ROLE_SERIES | GRAPH_ROLE_TINT)) faint_top++;
    }
  int full = 0, middle = 0;
  for (int r = 0; r < H - 1; r++) full += rows[r], middle += r >= 5 && r <= 8 ? rows[r] : 0;
  ok(full > 0 && middle == full, "smoothed: the average of 0, 4, 0, 4 ... lies in the middle rows, in full colour "
     "(%d of %d cells)", middle, full);
  ok(faint_top > 0, "... over the raw line, faint, reaching the top (%d cells)", faint_top);

  /* Debiased: an average of a level series is the level from its first
  ** point, not a climb from 0. */
  s.y = flat;
  graph_render(&g, cells, W, H);
  int row3 = -1, off = 0;
  for (int r = 0; r < H - 1; r++)
    for (int c = 7; c < W; c++)
      if (cells[r * W + c].role == GRAPH_ROLE_SERIES + 0) {
        if (row3 < 0) row3 = r;
        off += r != row3;
      }
  ok(row3 > 0 && off == 0, "smoothed with debiasing: a level series stays level from its first point (%d cells off)",
     off);

  /* Dashed lines are drawn as they are. */
  s.y = y, s.dashed = 1;
  graph_render(&g, cells, W, H);
  GraphCell raw[W * H];
  g.smooth = 0;
  graph_render(&g, raw, W, H);
  ok(memcmp(cells, raw, sizeof raw) == 0, "a dashed series is drawn the same with and without smoothing");
}

/* ------------------------------------------------------------ close series */

/* Two runs 1% apart over a long run, as a tied and an untied run's loss:
** 'b' always above 'a', both falling fast and then within one row of
** cells for most of the chart. */
enum { PAIR_N = 3000 };
static double pair_x[PAIR_N], pair_a[PAIR_N], pair_b[PAIR_N];

static Graph close_pair(GraphSeries *s, GraphGlyphs tier, int mono) {
  for (int k = 0; k < PAIR_N; k++) {
    pair_x[k] = k;
    pair_a[k] = 3.3 + 3 * exp(-k / 120.0) + 0.04 * sin(k * 0.37);
    pair_b[k] = pair_a[k] * 1.01;
  }
  /* The selected run (bold) drawn last, on top, as the lab draws it. */
  s[0] = (GraphSeries){.name = "untied", .x = pair_x, .y = pair_b, .n = PAIR_N, .color = 1, .group = 2, .line = 1};
  s[1] = (GraphSeries){.name = "tied", .x = pair_x, .y = pair_a, .n = PAIR_N, .color = 0, .group = 1, .line = 0,
                       .bold = 1};
  return (Graph){.title = "loss", .glyphs = tier, .x_min = 0, .x_max = PAIR_N, .y_min = 2, .y_max = 7, .series = s,
                 .n_series = 2, .mono = mono};
}

/* Where the runs show in plot column 'x' (rows 1..h-2): for each (0: a,
** 1: b), the highest place, in half rows from the top (a cell's upper half
** is its row * 2, its lower half + 1); -1 when not seen. With colour a run
** shows by its colour, as the foreground (the upper half of a '▀', the
** whole of any other cell) or as the background (the lower half); in
** ASCII also by its mark. */
static void pair_places(const GraphCell *cells, int w, int h, int x, int ascii, int *at) {
  at[0] = at[1] = -1;
  for (int y = 1; y < h - 1; y++) {
    const GraphCell *c = &cells[y * w + x];
    if (c->ch == ' ' || c->role < GRAPH_ROLE_SERIES || (c->role & GRAPH_ROLE_TINT)) continue;
    int fg = (c->role & 7) == 0 ? 0 : 1, bg = c->bg ? ((c->bg & 7) == 0 ? 0 : 1) : -1;
    if (ascii) fg = c->ch == '*' ? 0 : c->ch == 'o' ? 1 : -1;
    if (fg >= 0 && at[fg] < 0) at[fg] = 2 * y;
    if (bg >= 0 && at[bg] < 0) at[bg] = 2 * y + 1;
  }
}

/* With colour, in every tier and at the lab's sizes: along the stretch
** where the runs lie within a row of each other, every column shows both,
** the higher one above, never one in place of the other. */
static void test_close_pair_colour(void) {
  static const int sizes[][2] = {{36, 9}, {58, 12}, {100, 20}};
  static const char *const tier_name[3] = {"Braille", "block", "ASCII"};
  GraphSeries s[2];
  for (int t = 0; t < 3; t++)
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
      int w = sizes[z][0], h = sizes[z][1];
      Graph g = close_pair(s, (GraphGlyphs)t, 0);
      GraphCell *cells = calloc((size_t)w * h, sizeof *cells);
      graph_render(&g, cells, w, h);
      int cols = 0, both = 0, ordered = 0, bg_full = 1;
      for (int x = w / 3; x < w - 1; x++) {   /* past the fall */
        int at[2];
        pair_places(cells, w, h, x, t == GRAPH_ASCII, at);
        if (at[0] < 0 && at[1] < 0) continue;
        cols++;
        both += at[0] >= 0 && at[1] >= 0;
        ordered += at[0] >= 0 && at[1] >= 0 && at[1] < at[0];
      }
      for (int k = 0; k < w * h; k++) bg_full &= !(cells[k].bg & GRAPH_ROLE_TINT);
      ok(cols > w / 2 && both == cols && ordered == cols && bg_full,
         "%s %dx%d with colour: two runs 1%% apart both seen in every column (%d of %d), the higher above (%d), "
         "in full colour", tier_name[t], w, h, both, cols, ordered);
      if (t == GRAPH_BRAILLE && z == 1) {
        graph_to_utf8(cells, w, h, text, sizeof text);
        ok(strstr(text, "both") == NULL, "... and the legend needs no entry for it: %s", line(0));
      }
      free(cells);
    }
}

/* A shared cell's upper dots (its top row) and lower dots (its bottom
** row), each pair a dot column's. */
static int top_dots(uint32_t ch) { return (int)((ch - BRAILLE_BLANK_TEST) & 0x09); }
static int bottom_dots(uint32_t ch) { return (int)((ch - BRAILLE_BLANK_TEST) & 0xc0); }

/* Without colour: the pair's shared cells hold each run's pattern in its
** own half, the higher run's (long dashes) above the lower's (solid), in
** the same order all along; in ASCII each run's mark, the higher a row
** above the lower. */
static void test_close_pair_mono(void) {
  enum { W = 58, H = 12 };
  GraphSeries s[2];
  GraphCell cells[W * H];
  Graph g = close_pair(s, GRAPH_BRAILLE, 1);
  graph_render(&g, cells, W, H);
  /* A column of the stretch holds a shared cell, or (in a gap of the
  ** higher run's dashes) the lower run alone. */
  int shared = 0, solid = 1, dashed = 1, gaps = 0;
  for (int x = W / 3; x < W - 1; x++) {
    int here = 0, alone = 0;
    for (int y = 1; y < H - 1; y++) {
      const GraphCell *c = &cells[y * W + x];
      if (c->role == (GRAPH_ROLE_SERIES | GRAPH_ROLE_BOLD)) alone = 1;
      if (c->role != GRAPH_ROLE_SHARED) continue;
      here = 1;
      solid &= bottom_dots(c->ch) == 0xc0;
      dashed &= top_dots(c->ch) != 0;
    }
    shared += here;
    gaps += !here && alone;
  }
  ok(shared > W / 3 && solid && dashed && gaps > 0 && gaps < shared / 2,
     "Braille without colour: two runs 1%% apart share cells (%d columns), the lower's solid line whole along their "
     "bottom, the higher's dashes along their top, its gaps (%d) the lower's alone", shared, gaps);
  g = close_pair(s, GRAPH_BLOCK, 1);
  graph_render(&g, cells, W, H);
  int full = 0, lower = 0, other = 0;
  for (int x = W / 3; x < W - 1; x++)
    for (int y = 1; y < H - 1; y++) {
      const GraphCell *c = &cells[y * W + x];
      if (c->role != GRAPH_ROLE_SHARED) continue;
      if (c->ch == 0x2588) full++;
      else if (c->ch == 0x2584) lower++;
      else other++;
    }
  /* Where the dashes leave a column out the lower run is alone: its own cell. */
  ok(full > W / 3 && other == 0, "block without colour: the pair's cells hold both halves ('\u2588', %d), never "
     "an upper half alone: the lower run's solid line is not broken (%d '\u2584', %d other)", full, lower, other);
  for (int colour = 0; colour < 2; colour++) {
    g = close_pair(s, GRAPH_ASCII, !colour);
    g.no_shade = colour;   /* colour without background colours: as without colour */
    graph_render(&g, cells, W, H);
    int cols = 0, apart = 0;
    for (int x = W / 3; x < W - 1; x++) {
      int at[2];
      pair_places(cells, W, H, x, 1, at);
      if (at[0] < 0 && at[1] < 0) continue;
      cols++;
      apart += at[0] >= 0 && at[1] == at[0] - 2;
    }
    graph_to_utf8(cells, W, H, text, sizeof text);
    ok(cols > W / 2 && apart == cols && !strchr(text, '#'),
       "ASCII %s: each run's own mark in every column (%d of %d), the higher a row above the lower; no '#'",
       colour ? "without background colours" : "without colour", apart, cols);
  }
}

/* The lens panel's bars and marks without colour: a tied and an untied
** run (lines 0 and 1) differ as their chart lines do. */
static void test_run_looks(void) {
  GraphSeries tied = {.color = 0, .line = 0}, untied = {.color = 1, .line = 1};
  GraphCell a[8], b[8], plain[8];
  graph_hbar_series(a, 8, 0.6, GRAPH_BLOCK, &tied, 1);
  graph_hbar_series(b, 8, 0.6, GRAPH_BLOCK, &untied, 1);
  ok(a[0].ch == 0x2588 && b[0].ch == 0x2592 && a[4].ch == b[4].ch && a[4].ch != ' ' && a[5].ch == ' ',
     "without colour the untied run's bar is shaded ('\u2592'), the tied's solid, both ending in the same eighth");
  graph_hbar_series(a, 8, 0.5, GRAPH_ASCII, &tied, 1);
  graph_hbar_series(b, 8, 0.5, GRAPH_ASCII, &untied, 1);
  ok(a[0].ch == '*' && a[3].ch == '*' && a[4].ch == ' ' && b[0].ch == 'o' && b[3].ch == 'o',
     "ASCII without colour: each bar of its run's mark");
  graph_hbar_series(b, 8, 0.6, GRAPH_BLOCK, &untied, 0);
  graph_hbar(plain, 8, 0.6, GRAPH_BLOCK, GRAPH_ROLE_SERIES + 1);
  ok(memcmp(b, plain, sizeof b) == 0, "with colour, a run's bar is the plain bar in its colour");
  ok(graph_line_mark(&tied, GRAPH_BRAILLE, 1) == 0x2501 && graph_line_mark(&untied, GRAPH_BRAILLE, 1) == 0x254d &&
     graph_line_mark(&tied, GRAPH_ASCII, 1) == '*' && graph_line_mark(&untied, GRAPH_ASCII, 1) == 'o',
     "a run's legend mark without colour is its line's pattern ('\u2501', '\u254d'), in ASCII its mark");
}

/* ------------------------------------------------------------ events */

static void test_event_rules(void) {
  enum { W = 40, H = 10 };
  double x[2] = {0, 20}, y[2] = {1, 1};
  GraphSeries s = {.name = "a", .x = x, .y = y, .n = 2};
  GraphEvent ev[3] = {{5, GRAPH_EVENT_TIE, "untie"}, {6, GRAPH_EVENT_SCALE, "in x5"}, {19.5, GRAPH_EVENT_OTHER, "lr"}};
  Graph g = {.title = "t", .glyphs = GRAPH_BRAILLE, .x_min = 0, .x_max = 20, .y_min = 0, .y_max = 4, .series = &s,
             .n_series = 1, .events = ev, .n_events = 3};
  GraphCell cells[W * H];
  graph_render(&g, cells, W, H);
  int c = 7 + 5 * (W - 7) / 20, rule = 0;
  for (int r = 2; r < H - 1; r++) rule += cells[r * W + c].role == GRAPH_ROLE_EVENT && braille_dots(cells[r * W + c].ch);
  ok(rule >= 4, "an event is a dotted rule through the plot (%d cells of column %d)", rule, c);
  ok(cells[(H - 1) * W + c].ch == 0x25b2, "... and keeps its mark on the time axis");
  const char *top = grid(cells + W, W, 1);
  ok(cells[W + c + 1].ch == 'u' && cells[W + c + 5].ch == 'e' && cells[W + c + 1].role == GRAPH_ROLE_EVENT,
     "its label on the plot's top row, just right of the rule: %s", top);
  ok(!strstr(top, "in x5"), "a label that would run into another is not on the same row ...");
  const char *lr = strstr(top, "lr");
  ok(lr && lr[2] != ' ', "a label with no room before the chart's edge goes left of its rule: %s", top);
  ok(strstr(grid(cells + 2 * W, W, 1), "in x5") != NULL, "the label kept off the top row is on the first row free of it");
  int under = 0;
  for (int cc = 7; cc < W; cc++)
    for (int r = 1; r < H - 1; r++) under += cells[r * W + cc].role == GRAPH_ROLE_SERIES && cells[r * W + cc].ch == 0x28ff;
  ok(under == 0, "the series lies over the rules: their cells take its colour");
  g.glyphs = GRAPH_ASCII;
  graph_render(&g, cells, W, H);
  ok(cells[3 * W + 7 + 5 * (W - 7) / 20].ch == '\'', "ASCII: the rule is a column of '\\''");
  ev[0].label = NULL;
  g.glyphs = GRAPH_BRAILLE;
  graph_render(&g, cells, W, H);
  ok(strstr(grid(cells + W, W, 1), "in x5") != NULL, "without the first label, the second has room");
  y[0] = y[1] = 4;   /* a line along the top row */
  graph_render(&g, cells, W, H);
  ok(!strstr(grid(cells + W, W, 1), "in x5") && strstr(grid(cells + 2 * W, W, 1), "in x5"),
     "a line along the top row: the label on the row under it");
}

/* The row of the first cell holding 'ch', or -1. */
static int row_with(const GraphCell *cells, int w, int h, uint32_t ch) {
  for (int i = 0; i < w * h; i++)
    if (cells[i].ch == ch) return i / w;
  return -1;
}

/* Rows with a mark of a line (anything but blank, axis and label cells
** right of the axis column 'lw'). */
static int rows_drawn(const GraphCell *cells, int w, int h, int lw) {
  int n = 0;
  for (int r = 1; r < h - 1; r++) {
    int any = 0;
    for (int c = lw + 1; c < w && !any; c++) any = cells[r * w + c].ch != ' ' && cells[r * w + c].ch != BRAILLE_BLANK_TEST;
    n += any;
  }
  return n;
}

/* Two bands of lines far apart (scores near 0.2 and near 0.9): the
** band between is cut to a break marked on the axis, its labels left
** out, and its rows go to the lines; a line across the band, a log
** scale or a chart that does not ask keeps the whole scale. */
static void test_broken_scale(void) {
  enum { N = 60, W = 50, H = 30 };
  double x[N], lo[N], hi[N], across[N], v[64];
  int row[64];
  for (int i = 0; i < N; i++) x[i] = i, lo[i] = 0.12 + 0.15 * i / N, hi[i] = 0.8 + 0.18 * i / N, across[i] = 0.2 + 0.7 * i / N;
  GraphSeries s[3] = {{.name = "in", .x = x, .y = lo, .n = N}, {.name = "out", .x = x, .y = hi, .n = N, .color = 1},
                      {.name = "mid", .x = x, .y = across, .n = N, .color = 2}};
  Graph g = {.title = "t", .glyphs = GRAPH_BRAILLE, .x_min = 0, .x_max = N, .y_min = 0.12, .y_max = 0.98,
             .series = s, .n_series = 2, .break_gaps = 1};
  GraphCell cells[W * H], whole[W * H];
  graph_render(&g, cells, W, H);
  int mark = row_with(cells, W, H, 0x2248), n = y_labels(cells, W, H, 6, v, row, 64);
  int inside = 0, above = -1, below = -1;
  for (int i = 0; i < n; i++) {
    if (v[i] > 0.28 && v[i] < 0.79) inside++;
    if (row[i] < mark) above = row[i];
    if (row[i] > mark && below < 0) below = row[i];
  }
  ok(mark > 0, "two bands 0.12-0.27 and 0.8-0.98: a break marked on the axis (row %d)", mark);
  ok(inside == 0 && above >= 0 && below >= 0, "no label inside the band cut out, labels above and below the break (%d inside)",
     inside);
  ok(below - above == 2, "the labels either side of the break a row apart from its mark (rows %d and %d)", above, below);
  g.break_gaps = 0;
  graph_render(&g, whole, W, H);
  int lw = 6;
  ok(row_with(whole, W, H, 0x2248) < 0, "a chart that does not ask for a break has none");
  ok(rows_drawn(cells, W, H, lw) > rows_drawn(whole, W, H, lw) + 3,
     "the rows of the band cut out go to the lines (%d rows drawn, %d on the whole scale)", rows_drawn(cells, W, H, lw),
     rows_drawn(whole, W, H, lw));
  g.break_gaps = 1, g.n_series = 3;
  graph_render(&g, cells, W, H);
  ok(row_with(cells, W, H, 0x2248) < 0, "a line across the band keeps the whole scale");
  g.n_series = 2, g.log_y = 1;
  graph_render(&g, cells, W, H);
  ok(row_with(cells, W, H, 0x2248) < 0, "a log scale keeps the whole scale");
  g.log_y = 0;
  graph_render(&g, cells, W, 10);
  ok(row_with(cells, W, 10, 0x2248) < 0, "a short chart keeps the whole scale");
  g.glyphs = GRAPH_ASCII;
  graph_render(&g, cells, W, H);
  ok(row_with(cells, W, H, '~') > 0, "in ASCII the break's mark is '~'");
}

/* Has row 'r' of a chart a y label (a number in its first 'lw' columns)? */
static int labelled(const GraphCell *cells, int w, int r, int lw) {
  char buf[16];
  int k = 0;
  for (int c = 0; c < lw && k < 15; c++)
    if (cells[r * w + c].ch != ' ') buf[k++] = (char)cells[r * w + c].ch;
  buf[k] = '\0';
  char *end;
  strtod(buf, &end);
  return k > 0 && *end == '\0';
}

/* Breaks over many bands, heights and glyph tiers: wherever a break is
** drawn, the rows either side of its mark carry the labels of its ends.
** Two flat lines at the ends of the range, or a band left a hair thick,
** keep the whole scale and its labels (no row is divided by nothing, no
** tick walked through a billion steps). */
static void test_broken_scale_sweep(void) {
  enum { N = 40, W = 50, HMAX = 48 };
  static const GraphGlyphs tiers[] = {GRAPH_BRAILLE, GRAPH_BLOCK, GRAPH_ASCII};
  double x[N], a[N], b[N];
  GraphCell cells[W * HMAX];
  int breaks = 0, bad = 0;
  char first_bad[96] = "";
  for (int t = 0; t < 3; t++)
    for (int h = 16; h <= HMAX; h += 8)
      for (int i = 0; i < 12; i++)
        for (int j = 0; j < 6; j++) {
          double a_lo = 0.05 + 0.013 * i, a_hi = a_lo + 0.07 + 0.011 * j, b_lo = 0.55 + 0.017 * j, b_hi = 0.93 + 0.006 * i;
          for (int k = 0; k < N; k++) x[k] = k, a[k] = a_lo + (a_hi - a_lo) * k / (N - 1), b[k] = b_hi - (b_hi - b_lo) * k / (N - 1);
          GraphSeries s[2] = {{.name = "in", .x = x, .y = a, .n = N}, {.name = "out", .x = x, .y = b, .n = N, .color = 1}};
          Graph g = {.title = "t", .glyphs = tiers[t], .x_min = 0, .x_max = N, .y_min = a_lo, .y_max = b_hi, .series = s,
                     .n_series = 2, .break_gaps = 1};
          graph_render(&g, cells, W, h);
          int mark = row_with(cells, W, h, tiers[t] == GRAPH_ASCII ? '~' : 0x2248);
          if (mark < 0) continue;
          breaks++;
          if (!labelled(cells, W, mark - 1, 6) || !labelled(cells, W, mark + 1, 6)) {
            if (!bad++) snprintf(first_bad, sizeof first_bad, "tier %d, %d rows, bands %.3f-%.3f and %.3f-%.3f", t, h, a_lo, a_hi, b_lo, b_hi);
          }
        }
  ok(breaks > 100 && bad == 0, "%d breaks over bands, heights and tiers: each has its ends' labels beside its mark (%d without%s%s)",
     breaks, bad, bad ? ": " : "", first_bad);

  double lo[N], hi[N], v[64];
  int row[64];
  for (int k = 0; k < N; k++) x[k] = k, lo[k] = -1, hi[k] = 1;
  GraphSeries s[2] = {{.name = "in", .x = x, .y = lo, .n = N}, {.name = "out", .x = x, .y = hi, .n = N, .color = 1}};
  Graph g = {.title = "t", .glyphs = GRAPH_BRAILLE, .x_min = 0, .x_max = N, .y_min = -1, .y_max = 1, .series = s, .n_series = 2,
             .break_gaps = 1};
  graph_render(&g, cells, W, 30);
  int n = y_labels(cells, W, 30, 6, v, row, 64);
  ok(row_with(cells, W, 30, 0x2248) < 0 && n >= 2, "two flat lines at the ends of the range: no break, %d labels", n);
  for (int k = 0; k < N; k++) lo[k] = 0.2 + 1e-9 * k / N, hi[k] = 0.9;
  g.y_min = 0.2, g.y_max = 0.9;
  graph_render(&g, cells, W, 30);
  n = y_labels(cells, W, 30, 6, v, row, 64);
  ok(row_with(cells, W, 30, 0x2248) < 0 && n >= 2, "a band a hair thick below a far line: no break, %d labels", n);
}

int main(void) {
  setlocale(LC_ALL, "C.UTF-8");
  test_ascii_diagonal();
  test_braille();
  test_block();
  test_log_and_labels();
  test_legend();
  test_sizes();
  test_scatter();
  test_helpers();
  test_ticks();
  test_shared_and_thick();
  test_dashes();
  test_legend_rows();
  test_reference_and_events();
  test_y_labels_read_true();
  test_xaxis();
  test_degenerate_spans();
  test_sparse_joined();
  test_many_runs();
  test_legend_names_apart();
  test_legend_wide();
  test_legend_wide_cut();
  test_mono_patterns();
  test_ascii_five();
  test_validation_over_run();
  test_spike_envelope();
  test_sparse_braille();
  test_smoothing();
  test_close_pair_colour();
  test_close_pair_mono();
  test_run_looks();
  test_event_rules();
  test_broken_scale();
  test_broken_scale_sweep();
  return tap_done();
}
