/*
** panel_text.c -- the panels made of text: the selected run's writing
** sample.
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

void panel_sample(Ui *ui, WINDOW *w, int h, int wd) {
  werase(w);
  const Term *t = &ui->term;
  const TrainerRun *r = ui_selected(ui);
  if (!r || h < 1) return;
  if (r->sample_step < 0) {
    fit_print(t, w, 0, 0, wd, ROLE_TITLE, "sample of %s: not yet", r->name);
    return;
  }
  /* Text decoded with a tokenizer the model did not train with says so,
  ** in full where the panel is wide enough. */
  char title[256];
  snprintf(title, sizeof title, "%s writes @%ld (%s):", r->name, r->sample_step, r->sample_note);
  if (!r->sample_note[0]) snprintf(title, sizeof title, "%s writes @%ld:", r->name, r->sample_step);
  else if (term_width(title) > wd)
    snprintf(title, sizeof title, "%s writes @%ld (tokenizer not its own):", r->name, r->sample_step);
  fit_print(t, w, 0, 0, wd, ROLE_TITLE, "%s", title);
  /* Newlines become a visible mark, bytes that form no character an escape. */
  char text[TEXTESC_CAP(TRAINER_SAMPLE_MAX)];
  textesc(r->sample, r->sample_len, term_glyph(t, GLYPH_NEWLINE), t->utf8, text, sizeof text);
  /* Wrapped at spaces: a word is split only when it is wider than the panel. */
  const char *p = text;
  for (int y = 1; y < h && *p; y++) {
    const char *next;
    size_t k = fit_wrap(p, wd, &next), whole = whole_escapes(p, k);
    if (whole < k) next = p + whole;
    k = whole;
    char row[sizeof text];   /* a row is never cut inside a character */
    if (k >= sizeof row) k = sizeof row - 1;
    memcpy(row, p, k);
    row[k] = '\0';
    term_print(t, w, y, 0, wd, ROLE_TEXT, row);
    p = next;
  }
}
