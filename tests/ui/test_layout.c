/*
** test_layout.c -- panel rectangles and text fitting, without a terminal.
**
** For each size the lab is used at, each view, each zoom and the results
** panel: every rectangle inside the screen and of at least its panel's least
** size in the panel table, none overlapping another, every
** row of the screen in some panel, the panels each view promises present.
** Then fit.c: text kept, shortened at a word boundary with an ellipsis, a
** shorter variant chosen, a middle cut, and wrapping at spaces; and
** names.c: run names kept apart, and with wide characters, accents and
** emoji measured in the terminal's columns (by the C library itself here,
** not by the screen's own measure) and never cut inside a character.
**
** With the arguments ROWS COLS [SCROLL_LINES [LENS_ROWS]] it prints the lab
** view's rectangles instead ("name y x h w" per panel shown), for the
** screen tests in tmux.
*/
#define _XOPEN_SOURCE 700   /* wcswidth */
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "tap.h"
#include "ui/fit.h"
#include "ui/names.h"
#include "ui/layout.h"

static const char *name(int p) { return layout_name(p, NAME_PANEL); }

static const int sizes[][2] = {{24, 80}, {30, 100}, {40, 120}, {60, 200}};
#define N_SIZES ((int)(sizeof sizes / sizeof sizes[0]))

static int shown(const Rect *r) { return r->h > 0 && r->w > 0; }

/* Every rectangle inside the screen and apart from every other; every row
** in some panel. Returns 1 when all hold, with a diagnostic otherwise. */
static int sound(const Layout *l, const char *what) {
  int good = 1;
  char *cover = calloc((size_t)l->rows * l->cols, 1);
  for (int p = 0; p < P_COUNT && cover; p++) {
    const Rect *r = &l->r[p];
    if (!shown(r)) continue;
    const PanelInfo *info = layout_panel(p);
    if (r->h < info->min_rows || r->w < info->min_cols) {
      diag("%s: %s is %dx%d, under the panel table's least %dx%d", what, name(p), r->w, r->h, info->min_cols,
           info->min_rows);
      good = 0;
    }
    if (r->y < 0 || r->x < 0 || r->y + r->h > l->rows || r->x + r->w > l->cols) {
      diag("%s: %s (%d,%d %dx%d) leaves the %dx%d screen", what, name(p), r->y, r->x, r->h, r->w, l->cols, l->rows);
      good = 0;
      continue;
    }
    for (int y = r->y; y < r->y + r->h; y++)
      for (int x = r->x; x < r->x + r->w; x++) {
        if (cover[y * l->cols + x]) {
          diag("%s: %s overlaps %s at row %d column %d", what, name(p), name(cover[y * l->cols + x] - 1), y, x);
          good = 0;
          y = r->y + r->h;
          break;
        }
        cover[y * l->cols + x] = (char)(p + 1);
      }
  }
  for (int y = 0; y < l->rows && cover; y++) {
    int used = 0;
    for (int x = 0; x < l->cols; x++) used |= cover[y * l->cols + x] != 0;
    if (!used) {
      diag("%s: row %d belongs to no panel", what, y);
      good = 0;
    }
  }
  free(cover);
  return good && cover;
}

static char what[128];

static void lab_sizes(void) {
  for (int i = 0; i < N_SIZES; i++) {
    int R = sizes[i][0], C = sizes[i][1];
    Layout l;
    layout_compute(&l, R, C, NULL);
    snprintf(what, sizeof what, "lab %dx%d", C, R);
    ok(!l.too_small && sound(&l, what), "%s: panels inside the screen, apart, every row used", what);
    ok(shown(&l.r[P_LOSS]) && shown(&l.r[P_RATIO]) && shown(&l.r[P_LENS]) && shown(&l.r[P_ALIGN]) &&
           shown(&l.r[P_SAMPLE]) && shown(&l.r[P_SCROLL]) && shown(&l.r[P_INPUT]) && shown(&l.r[P_HINT]),
       "%s: charts, lens, alignment, sample and the REPL shown", what);
    ok(shown(&l.r[P_ALIGNCHART]) == (C >= 120) && shown(&l.r[P_EXTRA]) == (C >= 120),
       "%s: the alignment chart and the third chart %s", what, C >= 120 ? "among the charts" : "left to the zoom");
    ok(shown(&l.r[P_LENSHIST]) == (C >= 120) && (C < 120 || l.r[P_LENSHIST].y == l.r[P_LENS].y),
       "%s: the lens history %s", what, C >= 120 ? "beside the lens table" : "left to the zoom");
    ok(!shown(&l.r[P_BIG]) && !shown(&l.r[P_CAPTION]) && !shown(&l.r[P_RESULTS]), "%s: no present-view panels", what);
    /* The REPL's output has a row per line it holds, up to a few. */
    int scroll = l.r[P_SCROLL].h;
    ok(scroll == 1, "%s: the REPL's output has %d rows for its one line", what, scroll);
    LayoutAsk full = {.view = VIEW_LAB, .zoom = -1, .scroll_lines = 40};
    Layout more;
    layout_compute(&more, R, C, &full);
    ok(sound(&more, what) && more.r[P_SCROLL].h >= 5 && more.r[P_SCROLL].h <= 5 + (R - 24) / 10 &&
           more.r[P_LOSS].h >= 8,
       "%s: with many lines it grows to %d rows, the charts keeping %d", what, more.r[P_SCROLL].h, more.r[P_LOSS].h);
    ok(l.r[P_LOSS].h >= 9 && l.r[P_LOSS].h * 100 >= 40 * (R - 3 - scroll), "%s: the charts take %d rows", what,
       l.r[P_LOSS].h);
    if (C >= 120)
      ok(l.r[P_ALIGN].h >= 10 && l.r[P_ALIGN].w >= 38, "%s: the alignment table has room for all metrics (%dx%d)",
         what, l.r[P_ALIGN].w, l.r[P_ALIGN].h);
  }
}

static void zooms(void) {
  int z[P_COUNT], n = 0;
  for (int p = 0; p < P_COUNT; p++)
    if (layout_has(p, PANEL_CHART)) z[n++] = p;
  for (int i = 0; i < N_SIZES; i++)
    for (int k = 0; k < n; k++) {
      int R = sizes[i][0], C = sizes[i][1];
      LayoutAsk ask = {.view = VIEW_LAB, .zoom = z[k], .chart = P_LOSS};
      Layout l, plain;
      layout_compute(&l, R, C, &ask);
      layout_compute(&plain, R, C, NULL);
      snprintf(what, sizeof what, "zoom %s %dx%d", name(z[k]), C, R);
      int area = l.r[P_SCROLL].y - 1;
      int rows = l.r[z[k]].h + (z[k] == P_ALIGN ? l.r[P_ALIGNCHART].h : z[k] == P_LENS ? l.r[P_LENSHIST].h : 0);
      ok(sound(&l, what) && l.r[z[k]].w == C && rows == area && !shown(&l.r[P_SAMPLE]) &&
             l.r[P_SCROLL].h == plain.r[P_SCROLL].h,
         "%s: the whole chart area (%d rows), the REPL as without zoom", what, area);
    }
  LayoutAsk ask = {.view = VIEW_LAB, .zoom = P_ALIGN};
  Layout l;
  layout_compute(&l, 40, 120, &ask);
  ok(l.r[P_ALIGN].h >= 10 && l.r[P_ALIGNCHART].h >= 6, "zoom align 120x40: the full table (%d rows) over its chart (%d)",
     l.r[P_ALIGN].h, l.r[P_ALIGNCHART].h);
  ask.zoom = P_SAMPLE;   /* not a chart: no zoom */
  layout_compute(&l, 24, 80, &ask);
  ok(shown(&l.r[P_SAMPLE]) && l.r[P_LOSS].w == 40, "a panel that is not a chart is not zoomed");
}

/* The panel table: a row for every panel, names apart, and the charts in
** the order the user goes through them. */
static void table(void) {
  int rows = 0;
  for (int p = 0; p < P_COUNT; p++) rows += layout_panel(p) && (int)layout_panel(p)->id == p && name(p);
  ok(rows == P_COUNT && !layout_panel(-1) && !layout_panel(P_COUNT), "table: a named row for each of %d panels",
     P_COUNT);
  int apart = 1, charts = 1;
  for (PanelName k = NAME_PANEL; k <= NAME_PRESENT; k++)
    for (int p = 0; p < P_COUNT; p++) {
      const char *n = layout_name(p, k);
      if (n && layout_named(k, n) != p) apart = 0;
      if (n && k != NAME_PANEL && !layout_has(p, PANEL_CHART)) charts = 0;
    }
  ok(apart && charts, "table: no two panels alike by a name; what ui.zoom and ui.present name is a chart");
  char buf[256];
  layout_names(NAME_ZOOM, buf, sizeof buf);
  ok(strcmp(buf, "loss, ratio, align_chart, lens, align, extra") == 0, "table: ui.zoom's charts (%s)", buf);
  layout_names(NAME_PRESENT, buf, sizeof buf);
  ok(strcmp(buf, "loss, ratio, align, lens, scatter") == 0, "table: ui.present's charts (%s)", buf);
  ok(layout_named(NAME_ZOOM, "align") == P_ALIGN && layout_named(NAME_PRESENT, "align") == P_ALIGNCHART &&
         layout_named(NAME_ZOOM, "scatter") < 0,
     "table: \"align\" is the table to ui.zoom and its chart to ui.present");
  ok(layout_next(NAME_ZOOM, -1, 1) == P_LOSS && layout_next(NAME_ZOOM, P_EXTRA, 1) == -1 &&
         layout_next(NAME_PRESENT, P_SCATTER, 0) == P_LOSS && layout_next(NAME_PRESENT, P_EXTRA, 0) == P_LOSS,
     "table: the zoom goes round through none, the present view round its charts");
  ok(layout_mask(PANEL_DATA) >> P_STATUS & 1 && !(layout_mask(PANEL_DATA) >> P_HINT & 1) &&
         layout_has(P_LENSHIST, PANEL_BOXED) && !layout_has(P_SCROLL, PANEL_BOXED),
     "table: the status line shows the trainer's data, the hint line not; the lens history is boxed");
}

static void results(void) {
  for (int i = 0; i < N_SIZES; i++) {
    int R = sizes[i][0], C = sizes[i][1];
    LayoutAsk ask = {.view = VIEW_LAB, .zoom = -1, .results = 1};
    Layout l, plain;
    layout_compute(&l, R, C, &ask);
    layout_compute(&plain, R, C, NULL);
    snprintf(what, sizeof what, "results %dx%d", C, R);
    ok(sound(&l, what) && shown(&l.r[P_RESULTS]) && l.r[P_RESULTS].w == C && !shown(&l.r[P_LENS]) &&
           !shown(&l.r[P_ALIGN]) && !shown(&l.r[P_SAMPLE]) && l.r[P_RESULTS].y == plain.r[P_LENS].y,
       "%s: in the lower panels' place", what);
    ok(l.r[P_SCROLL].h == plain.r[P_SCROLL].h && l.r[P_RESULTS].h >= plain.r[P_LENS].h &&
           l.r[P_RESULTS].y + l.r[P_RESULTS].h == l.r[P_SCROLL].y,
       "%s: every row of the bands under the charts (%d)", what, l.r[P_RESULTS].h);
    ask.zoom = P_RATIO;
    layout_compute(&l, R, C, &ask);
    ok(sound(&l, what) && shown(&l.r[P_RESULTS]) && l.r[P_RATIO].w == C && l.r[P_RATIO].y + l.r[P_RATIO].h == l.r[P_RESULTS].y,
       "%s with a zoomed chart above it", what);
  }
}

static void present(void) {
  static const int charts[] = {P_LOSS, P_RATIO, P_LENS, P_ALIGNCHART, P_SCATTER, P_EXTRA};
  const int psizes[][2] = {{12, 40}, {24, 80}, {30, 100}, {40, 120}, {60, 200}};
  for (size_t i = 0; i < sizeof psizes / sizeof psizes[0]; i++)
    for (size_t k = 0; k < sizeof charts / sizeof charts[0]; k++)
      for (int cap = 0; cap <= 9; cap += 3) {
        int R = psizes[i][0], C = psizes[i][1], c = charts[k];
        LayoutAsk ask = {.view = VIEW_PRESENT, .zoom = -1, .chart = c, .caption_rows = cap};
        Layout l;
        layout_compute(&l, R, C, &ask);
        snprintf(what, sizeof what, "present %s %dx%d caption %d", name(c), C, R, cap);
        int want_cap = cap < R - 12 ? cap : R - 12 > 0 ? R - 12 : 0;
        ok(sound(&l, what) && l.r[P_STATUS].y == 0 && l.r[P_CAPTION].h == want_cap && l.r[P_BIG].y == 1 + want_cap &&
               l.r[P_BIG].h == 3 && l.r[c].y == 4 + want_cap && l.r[c].h == R - 6 - want_cap && l.r[c].w == C &&
               l.r[P_INPUT].y == R - 2 && l.r[P_HINT].y == R - 1 && !shown(&l.r[P_SCROLL]),
           "%s: status, caption, big digits, the chart in every row left, input, hint", what);
      }
  Layout l;
  LayoutAsk ask = {.view = VIEW_PRESENT, .zoom = -1, .chart = P_SAMPLE};
  layout_compute(&l, 24, 80, &ask);
  ok(shown(&l.r[P_LOSS]) && !shown(&l.r[P_SAMPLE]), "present view of what is not a chart: the loss");
}

static void small(void) {
  Layout l;
  int bad = 0;
  for (int R = 1; R <= 30; R++)
    for (int C = 1; C <= 100; C += 3) {
      LayoutAsk ask = {.view = (R + C) % 2 ? VIEW_PRESENT : VIEW_LAB, .zoom = -1, .chart = P_RATIO, .caption_rows = R};
      layout_compute(&l, R, C, &ask);
      if (!l.too_small && !sound(&l, "small")) bad++;
    }
  ok(bad == 0, "every size up to 100x30 either too small or sound");
  layout_compute(&l, 23, 80, NULL);
  ok(l.too_small, "79x23 is too small for the lab view");
}

static void fitting(void) {
  char buf[128];
  const char *ell = "\u2026";
  ok(strcmp(fit_text("every 4 steps", 20, ell, buf, sizeof buf), "every 4 steps") == 0, "fit: text that fits is kept");
  ok(strcmp(fit_text("every 4 steps, with an untied run on the same data", 24, ell, buf, sizeof buf),
            "every 4 steps, with an\u2026") == 0,
     "fit: shortened at a word boundary (%s)", buf);
  ok(fit_cols(buf) <= 24, "fit: the shortened text is within the width");
  ok(strcmp(fit_text("every 4 steps, with", 16, ell, buf, sizeof buf), "every 4 steps\u2026") == 0,
     "fit: no comma before the ellipsis (%s)", buf);
  ok(strcmp(fit_text("abcdefghij", 5, ell, buf, sizeof buf), "abcd\u2026") == 0, "fit: one long word shortened inside");
  ok(strcmp(fit_text("abc", 0, ell, buf, sizeof buf), "") == 0, "fit: no room, nothing");
  ok(strcmp(fit_text("a long label", 9, "...", buf, sizeof buf), "a long...") == 0, "fit: an ASCII ellipsis (%s)", buf);
  const char *const v[] = {"off for this run (align_every = 0)", "off (align_every = 0)", "off"};
  ok(strcmp(fit_choose(v, 3, 40, ell, buf, sizeof buf), v[0]) == 0, "choose: the longest variant when it fits");
  ok(strcmp(fit_choose(v, 3, 22, ell, buf, sizeof buf), v[1]) == 0, "choose: a shorter variant");
  ok(strcmp(fit_choose(v, 3, 2, ell, buf, sizeof buf), "o\u2026") == 0, "choose: the last one shortened");
  ok(fit_cols("in\u00d72 \u25b6") == 6 && fit_prefix("\u00d7\u00d7\u00d7", 2) == 4, "columns of UTF-8 text");

  const char *next, *s = "'lab' is the lab, 'ui' the screen; ? lists the keys.";
  size_t n = fit_wrap(s, 27, &next);
  ok(n == strlen("'lab' is the lab, 'ui' the") && strcmp(next, "screen; ? lists the keys.") == 0,
     "wrap: at the last space that fits, the next line without its space");
  n = fit_wrap("abcdefghijkl mn", 5, &next);
  ok(n == 5 && strcmp(next, "fghijkl mn") == 0, "wrap: a word wider than the line is broken");
  ok(fit_lines(s, 27) == 2 && fit_lines("", 10) == 1 && fit_lines("a b c", 1) == 3, "wrap: lines counted");
  int words_whole = 1;
  const char *p = "Gra alactibraun ea skraum daias ri chistert faeteas thinas sko";
  while (*p) {
    n = fit_wrap(p, 12, &next);
    if (n > 0 && p[n] != '\0' && p[n] != ' ' && strchr(p, ' ') && strchr(p, ' ') < p + n) words_whole = 0;
    p = next;
  }
  ok(words_whole, "wrap: every line ends at a word's end");
}

/* The names of runs as the status line and the legends show them. */
static const char *shown_names(const char *const *list, int n, int affix, int max, int *distinct) {
  static char out[512];
  NameCut cut[16];
  char one[64];
  *distinct = names_fit(list, n, affix, max, 1, cut);
  out[0] = '\0';
  for (int i = 0; i < n; i++) {
    names_text(list[i], &cut[i], "~", one, sizeof one);
    snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", i ? " " : "", one);
  }
  return out;
}

static void run_names(void) {
  static const char *const runs[] = {"tied_s1", "untied_s1", "tied_x2_s1", "tied_x5_s1", "tied_x10_s1"};
  int d;
  ok(strcmp(shown_names(runs, 5, 0, 64, &d), "tied_s1 untied_s1 tied_x2_s1 tied_x5_s1 tied_x10_s1") == 0 && d,
     "names: whole when there is room");
  ok(strcmp(shown_names(runs, 5, 1, 64, &d), "tied untied tied_x2 tied_x5 tied_x10") == 0 && d,
     "names: without the end they all share (%s)", shown_names(runs, 5, 1, 64, &d));
  ok(strcmp(shown_names(runs, 5, 1, 5, &d), "tied un~ed ti~x2 ti~x5 ti~10") == 0 && d,
     "names: cut in the middle, both ends kept (%s)", shown_names(runs, 5, 1, 5, &d));
  static const char *const alike[] = {"lr_0.1_tied_x2", "lr_0.1_tied_x5", "lr_0.1_untied"};
  ok(strcmp(shown_names(alike, 3, 1, 4, &d), "ti~2 ti~5 un~d") == 0 && d,
     "names: the shared beginning goes, at a separator (%s)", shown_names(alike, 3, 1, 4, &d));
  static const char *const ends[] = {"abcXdefghij", "abcYdefghij"};
  ok(strcmp(shown_names(ends, 2, 1, 5, &d), "abcX~ abcY~") == 0 && d,
     "names: a cut moves to where names differ, never two alike (%s)", shown_names(ends, 2, 1, 5, &d));
  ok(!(shown_names(ends, 2, 1, 1, &d), d), "names: too little room to tell them apart is reported");
  static const char *const last[] = {"tied_in10_s1", "tied_in10_s2", "tied_in5_s1"};
  ok(strcmp(shown_names(last, 3, 1, 64, &d), "in10 in10_s2 in5") == 0 && d,
     "names: a last part several names end with goes unless two would read alike (%s)",
     shown_names(last, 3, 1, 64, &d));
  static const char *const one[] = {"tied_s1"};
  ok(strcmp(shown_names(one, 1, 1, 64, &d), "tied_s1") == 0, "names: a single name keeps its parts");
}

/* Columns of UTF-8 text as the C library counts them; -1 when it is not
** UTF-8 throughout (a character cut). */
static int text_cols(const char *s) {
  wchar_t w[256];
  size_t n = mbstowcs(w, s, 256);
  if (n == (size_t)-1 || n >= 256) return -1;
  return wcswidth(w, n);
}

/* Byte 'at' of 'name' is no place inside a character or between a letter
** and its accent. */
static int edge(const char *name, int at) {
  int len = (int)strlen(name);
  if (at <= 0 || at >= len) return 1;
  wchar_t wc;
  mbstate_t st;
  memset(&st, 0, sizeof st);
  size_t k = mbrtowc(&wc, name + at, (size_t)(len - at), &st);
  return k != (size_t)-1 && k != (size_t)-2 && wcwidth(wc) != 0;
}

/* Names with wide characters, accents and emoji: at every room, whether
** what they share goes or not, each shown name within the room, as wide
** as names.c says, and cut only between characters and their accents;
** from 7 columns on the names are apart within the room, as names.c says
** (never alike when it says so at any room). */
static void wide_names_everywhere(void) {
  static const char *const lists[][4] = {
      {"\u5b66\u7fd2_tied", "\u5b66\u7fd2_untied"},
      {"\u6771\u4eac\u306e\u5b9f\u9a13_\u7d50\u5408\u3042\u308a", "\u6771\u4eac\u306e\u5b9f\u9a13_\u7d50\u5408\u306a\u3057",
       "\u5927\u962a\u306e\u5b9f\u9a13_\u7d50\u5408\u3042\u308a"},
      {"cafe\u0301_tied", "cafe\u0301_untied", "cafe_tied"},
      {"\u5b9f\u9a13A_lr0.1_s1", "\u5b9f\u9a13B_lr0.1_s1", "\u5b9f\u9a13A_lr0.01_s1"},
      {"e\u0301e\u0301e\u0301e\u0301_x2", "e\u0301e\u0301e\u0301e\u0301_x5", "a\u0308o\u0308u\u0308_x2"},
      {"\U0001F680_fast_tied", "\U0001F680_fast_untied", "\U0001F422_slow"},
  };
  int bad_width = 0, bad_cut = 0, alike = 0, apart = 1, first_bad = -1, first_apart = -1;
  for (int l = 0; l < (int)(sizeof lists / sizeof lists[0]); l++) {
    int n = 0;
    while (n < 4 && lists[l][n]) n++;
    for (int affix = 0; affix <= 1; affix++)
      for (int max = 1; max <= 40; max++) {
        NameCut cut[4];
        char shown[4][128];
        int distinct = names_fit(lists[l], n, affix, max, 1, cut);
        int within = 1;
        for (int i = 0; i < n; i++) {
          const char *name = lists[l][i];
          names_text(name, &cut[i], "~", shown[i], sizeof shown[i]);
          int cols = text_cols(shown[i]);
          if (cols < 0 || cols > max || cols != names_cols(name, &cut[i], 1)) bad_width++;
          if (cols < 0 || cols > max) within = 0;
          if (!edge(name, cut[i].start) || !edge(name, cut[i].head) || (cut[i].cut && !edge(name, cut[i].tail)) ||
              !edge(name, cut[i].end))
            bad_cut++;
          if ((bad_width || bad_cut) && first_bad < 0) {
            first_bad = l;
            diag("%s at %d columns (affix %d) shows as '%s', %d columns", name, max, affix, shown[i], cols);
          }
        }
        for (int i = 0; i < n; i++)
          for (int j = i + 1; j < n; j++)
            if (distinct && strcmp(shown[i], shown[j]) == 0) alike++;
        if (max >= 7 && !(distinct && within) && apart) {
          apart = 0;
          first_apart = max;
          diag("%s, ... at %d columns (affix %d): %s", lists[l][0], max, affix, distinct ? "too wide" : "alike");
        }
      }
  }
  ok(bad_width == 0, "wide names: every shown name within its room, as wide as names.c says (%d not)", bad_width);
  ok(bad_cut == 0, "wide names: never cut inside a character or between a letter and its accent (%d are)", bad_cut);
  ok(alike == 0 && apart, "wide names: apart within the room from 7 columns on (%d alike, first not at %d)", alike,
     first_apart);
}

static void wide_names(void) {
  int d;
  static const char *const cities[] = {"\u6771\u4eac\u5927\u962a\u540d\u53e4\u5c4b"};
  NameCut cut;
  char one[64];
  names_fit(cities, 1, 0, 6, 1, &cut);
  names_text(cities[0], &cut, "~", one, sizeof one);
  ok(strcmp(one, "\u6771~\u5c4b") == 0 && names_cols(cities[0], &cut, 1) == 5,
     "names: a wide character that does not fit is not split, its column left blank (%s)", one);
  static const char *const accents[] = {"e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301"};
  ok(strcmp(shown_names(accents, 1, 0, 6, &d), accents[0]) == 0, "names: an accent takes no column (%s)",
     shown_names(accents, 1, 0, 6, &d));
  ok(strcmp(shown_names(accents, 1, 0, 4, &d), "e\u0301e\u0301~e\u0301") == 0,
     "names: cut between letters, each keeping its accent (%s)", shown_names(accents, 1, 0, 4, &d));
  static const char *const mixed[] = {"\u5b9f\u9a13A_\u5b66\u7fd2\u7387_\u5927", "\u5b9f\u9a13B_\u5b66\u7fd2\u7387_\u5927"};
  ok(strcmp(shown_names(mixed, 2, 1, 4, &d), "\u5b9f~A \u5b9f~B") == 0 && d,
     "names: mixed names cut in columns where they differ (%s)", shown_names(mixed, 2, 1, 4, &d));
  static const char *const marked[] = {"cafe\u0301", "cafe"};
  ok(strcmp(shown_names(marked, 2, 0, 4, &d), "cafe\u0301 cafe") == 0 && d,
     "names: an accent alone tells two names apart, and costs no room (%s)", shown_names(marked, 2, 0, 4, &d));
  wide_names_everywhere();
}

static void print_rects(int rows, int cols, int scroll_lines, int lens_rows) {
  Layout l;
  LayoutAsk ask = {.view = VIEW_LAB, .zoom = -1, .chart = P_LOSS, .scroll_lines = scroll_lines, .lens_rows = lens_rows};
  layout_compute(&l, rows, cols, &ask);
  for (int p = 0; p < P_COUNT; p++)
    if (shown(&l.r[p])) printf("%s %d %d %d %d\n", name(p), l.r[p].y, l.r[p].x, l.r[p].h, l.r[p].w);
}

int main(int argc, char **argv) {
  setlocale(LC_ALL, "C.UTF-8");
  if (argc >= 3) {
    print_rects(atoi(argv[1]), atoi(argv[2]), argc > 3 ? atoi(argv[3]) : 1, argc > 4 ? atoi(argv[4]) : 0);
    return 0;
  }
  lab_sizes();
  table();
  zooms();
  results();
  present();
  small();
  fitting();
  run_names();
  wide_names();
  return tap_done();
}
