/*
** panel_text.c -- the panels made of text: the selected run's writing
** sample, and the present view's big digits.
**
** Big digits are three rows high, drawn with half blocks under UTF-8 and as
** seven-segment ASCII otherwise, so that step and loss read from the back
** of a room.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fit.h"
#include "uistate.h"

/* ------------------------------------------------------------ sample */

void panel_sample(Ui *ui, WINDOW *w, int h, int wd) {
  werase(w);
  const Term *t = &ui->term;
  const TrainerRun *r = ui_selected(ui);
  if (!r || h < 1) return;
  if (r->sample_step < 0) {
    fit_print(t, w, 0, 0, wd, ROLE_TITLE, "sample of %s: not yet", r->name);
    return;
  }
  fit_print(t, w, 0, 0, wd, ROLE_TITLE, "%s writes @%ld:", r->name, r->sample_step);
  /* Newlines become a visible mark. */
  char text[TRAINER_SAMPLE_MAX * 3];
  size_t n = 0;
  const char *nl = term_glyph(t, GLYPH_NEWLINE);
  for (const char *p = r->sample; *p && n + 8 < sizeof text; p++) {
    if (*p == '\n') n += (size_t)snprintf(text + n, sizeof text - n, "%s", nl);
    else text[n++] = (unsigned char)*p < 0x20 ? ' ' : *p;
  }
  text[n] = '\0';
  /* Wrapped at spaces: a word is split only when it is wider than the panel. */
  const char *p = text;
  for (int y = 1; y < h && *p; y++) {
    const char *next;
    size_t k = fit_wrap(p, wd, &next);
    char row[1024];
    if (k >= sizeof row) k = sizeof row - 1;
    memcpy(row, p, k);
    row[k] = '\0';
    term_print(t, w, y, 0, wd, ROLE_TEXT, row);
    p = next;
  }
}

/* ------------------------------------------------------------ big digits */

static const char *const big_utf8[12][3] = {
    {"\u2588\u2580\u2588", "\u2588 \u2588", "\u2580\u2580\u2580"}, {"\u2580\u2588 ", " \u2588 ", "\u2580\u2580\u2580"},
    {"\u2580\u2580\u2588", "\u2588\u2580\u2580", "\u2580\u2580\u2580"}, {"\u2580\u2580\u2588", " \u2580\u2588", "\u2580\u2580\u2580"},
    {"\u2588 \u2588", "\u2580\u2580\u2588", "  \u2580"},             {"\u2588\u2580\u2580", "\u2580\u2580\u2588", "\u2580\u2580\u2580"},
    {"\u2588\u2580\u2580", "\u2588\u2580\u2588", "\u2580\u2580\u2580"}, {"\u2580\u2580\u2588", "  \u2588", "  \u2580"},
    {"\u2588\u2580\u2588", "\u2588\u2580\u2588", "\u2580\u2580\u2580"}, {"\u2588\u2580\u2588", "\u2580\u2580\u2588", "\u2580\u2580\u2580"},
    {" ", " ", "\u2580"},                                              {" ", " ", " "},
};
static const char *const big_ascii[12][3] = {
    {" _ ", "| |", "|_|"}, {"   ", "  |", "  |"}, {" _ ", " _|", "|_ "}, {" _ ", " _|", " _|"},
    {"   ", "|_|", "  |"}, {" _ ", "|_ ", " _|"}, {" _ ", "|_ ", "|_|"}, {" _ ", "  |", "  |"},
    {" _ ", "|_|", "|_|"}, {" _ ", "|_|", " _|"}, {" ", " ", "."},     {" ", " ", " "},
};

/* Draw 'text' (digits, '.' and ' ') in big glyphs from column x; returns
** the columns used. */
static int big_text(const Term *t, WINDOW *w, int x, int maxw, int role, const char *text) {
  int x0 = x;
  for (const char *p = text; *p; p++) {
    int g = *p >= '0' && *p <= '9' ? *p - '0' : *p == '.' ? 10 : 11;
    const char *const *rows = t->utf8 ? big_utf8[g] : big_ascii[g];
    int gw = term_width(rows[0]);
    if (x - x0 + gw > maxw) break;
    for (int y = 0; y < 3; y++) term_print(t, w, y, x, gw, role, rows[y]);
    x += gw + 1;
  }
  return x - x0;
}

void panel_big(Ui *ui, WINDOW *w, int h, int wd) {
  werase(w);
  const Term *t = &ui->term;
  const TrainerRun *r = ui_selected(ui);
  if (!r || h < 3) return;
  char step[32], loss[32];
  snprintf(step, sizeof step, "%ld", r->m.step);
  snprintf(loss, sizeof loss, isfinite(r->m.loss) ? "%.3f" : "0", r->m.loss);
  int x = 1;
  x += term_print(t, w, 1, x, wd - x, ROLE_LABEL, "step ");
  x += big_text(t, w, x, wd - x, ROLE_TITLE, step);
  x += term_print(t, w, 1, x + 2, wd - x - 2, ROLE_LABEL, "loss ") + 2;
  x += big_text(t, w, x, wd - x, ROLE_SERIES + 0, loss);
  char tie[16];
  if (x + 12 < wd)
    term_printf(t, w, 1, x + 2, wd - x - 2, ROLE_KEY, "%s %s", r->name, config_tie_name(r->m.tie_k, r->m.dim, tie));
}
