/*
** panel_text.c -- the panels made of text: the selected run's writing
** sample.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "uistate.h"

/* ------------------------------------------------------------ sample */

void panel_sample(Ui *ui, WINDOW *w, int h, int wd) {
  werase(w);
  const Term *t = &ui->term;
  const TrainerRun *r = ui_selected(ui);
  if (!r || h < 1) return;
  if (r->sample_step < 0) {
    term_printf(t, w, 0, 0, wd, ROLE_TITLE, "sample of %s: not yet", r->name);
    return;
  }
  term_printf(t, w, 0, 0, wd, ROLE_TITLE, "%s writes @%ld:", r->name, r->sample_step);
  /* Newlines become a visible mark; the text wraps at the panel's width. */
  char text[TRAINER_SAMPLE_MAX * 3];
  size_t n = 0;
  const char *nl = term_glyph(t, GLYPH_NEWLINE);
  for (const char *p = r->sample; *p && n + 8 < sizeof text; p++) {
    if (*p == '\n') n += (size_t)snprintf(text + n, sizeof text - n, "%s", nl);
    else text[n++] = (unsigned char)*p < 0x20 ? ' ' : *p;
  }
  text[n] = '\0';
  const char *p = text;
  for (int y = 1; y < h && *p; y++) {
    /* Advance through as many bytes as fit in 'wd' columns. */
    char row[1024];
    size_t k = 0;
    while (p[k] && k + 1 < sizeof row) {
      size_t c = 1;
      while ((p[k + c] & 0xc0) == 0x80) c++;
      memcpy(row, p, k + c);
      row[k + c] = '\0';
      if (term_width(row) > wd) break;
      k += c;
    }
    if (k == 0) break;
    memcpy(row, p, k);
    row[k] = '\0';
    term_print(t, w, y, 0, wd, ROLE_TEXT, row);
    p += k;
  }
}
