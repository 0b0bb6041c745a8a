/*
** box.c -- boxed panels: the border drawn round what the panel drew.
**
** The panel's text on the border rows is read back from the window rather
** than handed over, so every panel keeps drawing its title on its row 0 as
** it would without a box, and a chart's legend row goes on the border as
** it is.
*/
#include "ui/box.h"

#include <wchar.h>

enum { CORNER_TL, CORNER_TR, CORNER_BL, CORNER_BR, LINE_H, LINE_V, N_PARTS };

static const char *const parts[N_PARTS][2] = {
    [CORNER_TL] = {"\u256d", "+"}, [CORNER_TR] = {"\u256e", "+"}, [CORNER_BL] = {"\u2570", "+"},
    [CORNER_BR] = {"\u256f", "+"}, [LINE_H] = {"\u2500", "-"},    [LINE_V] = {"\u2502", "|"},
};

static const char *part(const Term *t, int which) { return parts[which][t->utf8 ? 0 : 1]; }

WINDOW *box_content(WINDOW *outer, int h, int w) {
  if (!outer || h < 2 || w < 4) return NULL;
  return derwin(outer, h, w - 3, 0, 2);
}

void box_begin(const Term *t, WINDOW *outer, int h, int w) {
  werase(outer);
  for (int y = 1; y < h - 1; y++) {
    term_print(t, outer, y, 0, 1, ROLE_BORDER, part(t, LINE_V));
    term_print(t, outer, y, w - 1, 1, ROLE_BORDER, part(t, LINE_V));
  }
}

/* The character at (y, x): a space when there is none. */
static wchar_t char_at(WINDOW *w, int y, int x) {
  cchar_t c;
  wchar_t wc[CCHARW_MAX + 1] = {0};
  attr_t a;
  short pair;
  if (mvwin_wch(w, y, x, &c) == ERR || getcchar(&c, wc, &a, &pair, NULL) == ERR) return L' ';
  return wc[0] ? wc[0] : L' ';
}

/* Text, as opposed to a blank or the border's own line. */
static int is_text(const Term *t, wchar_t c) {
  if (c == L' ') return 0;
  if (t->utf8) return !(c >= 0x2500 && c <= 0x257f);
  return c != L'-' && c != L'+';
}

/* One border row: blanks become the line, but beside text. Read as it
** goes: 'was' holds the cell left of x as the panel drew it. */
static void border_row(const Term *t, WINDOW *outer, int y, int w, int left, int right) {
  wchar_t was = L' ', here = w > 2 ? char_at(outer, y, 1) : L' ';
  for (int x = 1; x < w - 1; x++) {
    wchar_t next = x + 1 < w - 1 ? char_at(outer, y, x + 1) : L' ';
    if (here == L' ' && !is_text(t, was) && !is_text(t, next))
      term_print(t, outer, y, x, 1, ROLE_BORDER, part(t, LINE_H));
    was = here, here = next;
  }
  term_print(t, outer, y, 0, 1, ROLE_BORDER, part(t, left));
  term_print(t, outer, y, w - 1, 1, ROLE_BORDER, part(t, right));
}

void box_finish(const Term *t, WINDOW *outer, int h, int w) {
  if (h < 2 || w < 4) return;
  border_row(t, outer, 0, w, CORNER_TL, CORNER_TR);
  border_row(t, outer, h - 1, w, CORNER_BL, CORNER_BR);
}
