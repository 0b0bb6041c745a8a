/*
** panel_text.c -- the panels made of text: the writing samples of the
** selected run and of its partner.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ui/fit.h"
#include "ui/textesc.h"
#include "ui/uistate.h"

/* ------------------------------------------------------------ sample */

/* Where a row of 'k' bytes of 'p' should end so that no escape ("\x80",
** textesc.h) is split between two rows: before the escape it would cut,
** unless that leaves the row empty. */
static size_t whole_escapes(const char *p, size_t k) {
  for (size_t back = 1; back < TEXTESC_BYTES && back <= k; back++) {
    size_t at = k - back;
    if (p[at] == '\\' && p[at + 1] == 'x') return at > 0 ? at : k;
  }
  return k;
}

/* Run 'r''s title and text from row 'y', at most 'rows' rows; returns the
** rows it takes, or would take when 'draw' is 0. */
static int sample_block(const Term *t, WINDOW *w, int y, int rows, int wd, const TrainerRun *r, int draw) {
  if (rows < 1) return 0;
  if (r->sample_step < 0) {
    if (draw) fit_print(t, w, y, 0, wd, ROLE_TITLE, "sample of %s: not yet", r->name);
    return 1;
  }
  /* Text decoded with a tokenizer the model did not train with says so,
  ** in full where the panel is wide enough. */
  char title[256];
  snprintf(title, sizeof title, "%s writes @%ld (%s):", r->name, r->sample_step, r->sample_note);
  if (!r->sample_note[0]) snprintf(title, sizeof title, "%s writes @%ld:", r->name, r->sample_step);
  else if (term_width(title) > wd)
    snprintf(title, sizeof title, "%s writes @%ld (tokenizer not its own):", r->name, r->sample_step);
  if (draw) fit_print(t, w, y, 0, wd, ROLE_TITLE, "%s", title);
  /* Newlines become a visible mark, bytes that form no character an escape. */
  char text[TEXTESC_CAP(TRAINER_SAMPLE_MAX)];
  textesc(r->sample, r->sample_len, term_glyph(t, GLYPH_NEWLINE), t->utf8, text, sizeof text);
  /* Wrapped at spaces: a word is split only when it is wider than the panel. */
  const char *p = text;
  int used = 1;
  for (; used < rows && *p; used++) {
    const char *next;
    size_t k = fit_wrap(p, wd, &next), whole = whole_escapes(p, k);
    if (whole < k) next = p + whole;
    k = whole;
    char row[sizeof text];   /* a row is never cut inside a character */
    if (k >= sizeof row) k = sizeof row - 1;
    memcpy(row, p, k);
    row[k] = '\0';
    if (draw) term_print(t, w, y + used, 0, wd, ROLE_TEXT, row);
    p = next;
  }
  return used;
}

/* The writing of the selected run's pair, the tied run's over the
** untied's (as the lens has them), where the panel has the rows: what
** weight tying does to a model's text, one above the other. Each gets
** the rows its text needs, the second at least half the panel when it
** needs them; on fewer rows, or for a run without a partner, the
** selected run's alone. */
void panel_sample(Ui *ui, WINDOW *w, int h, int wd) {
  werase(w);
  const Term *t = &ui->term;
  const TrainerRun *runs[2];
  int n = run_pair(ui, runs);
  if (n == 0 || h < 1) return;
  if (n == 2 && h < 4) runs[0] = ui_selected(ui), n = 1;   /* one line each is no reading */
  if (n == 1) {
    sample_block(t, w, 0, h, wd, runs[0], 1);
    return;
  }
  int need1 = sample_block(t, w, 0, h, wd, runs[0], 0), need2 = sample_block(t, w, 0, h, wd, runs[1], 0);
  int keep = need2 < h / 2 ? need2 : h / 2, first = need1 < h - keep ? need1 : h - keep;
  first = sample_block(t, w, 0, first, wd, runs[0], 1);
  sample_block(t, w, first, h - first, wd, runs[1], 1);
}
