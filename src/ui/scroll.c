/*
** scroll.c -- a ring of output lines, wrapped at draw time.
**
** Lines are kept whole and wrapped when drawn, at spaces (fit.c), so a
** resize rewraps them and no word is split unless it is wider than the pane.
** The view is an offset in screen rows back from the newest row; drawing
** walks lines from the newest backwards until the pane is full.
*/
#include "ui/scroll.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "ui/fit.h"

typedef struct Line {
  char *text;
  ScrollKind kind;
} Line;

struct Scroll {
  Line *lines;     /* ring of 'max' */
  int max, n, head;   /* oldest at head */
  int open;        /* the newest line has no newline yet */
  int back;        /* rows scrolled back from the end */
  int max_back;    /* the most there was to scroll back at the last draw */
  long version;
};

static const int kind_role[] = {[SCROLL_OUT] = ROLE_TEXT, [SCROLL_ERR] = ROLE_ERROR,
                                [SCROLL_ECHO] = ROLE_KEY, [SCROLL_NOTE] = ROLE_DIM};

Scroll *scroll_new(int max_lines) {
  Scroll *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->lines = calloc((size_t)max_lines, sizeof *s->lines);
  if (!s->lines) {
    free(s);
    return NULL;
  }
  s->max = max_lines;
  return s;
}

void scroll_free(Scroll *s) {
  if (!s) return;
  for (int i = 0; i < s->max; i++) free(s->lines[i].text);
  free(s->lines);
  free(s);
}

static Line *newest(Scroll *s) { return s->n ? &s->lines[(s->head + s->n - 1) % s->max] : NULL; }

static void push_line(Scroll *s, const char *text, size_t n, ScrollKind kind) {
  Line *l = newest(s);
  if (s->open && l && l->kind == kind) {   /* continue the open line */
    size_t old = strlen(l->text);
    char *p = realloc(l->text, old + n + 1);
    if (!p) return;
    memcpy(p + old, text, n);
    p[old + n] = '\0';
    l->text = p;
    return;
  }
  if (s->n == s->max) {   /* drop the oldest */
    free(s->lines[s->head].text);
    s->lines[s->head].text = NULL;
    s->head = (s->head + 1) % s->max;
    s->n--;
  }
  l = &s->lines[(s->head + s->n) % s->max];
  l->text = malloc(n + 1);
  if (!l->text) return;
  memcpy(l->text, text, n);
  l->text[n] = '\0';
  l->kind = kind;
  s->n++;
}

void scroll_add(Scroll *s, const char *text, size_t n, ScrollKind kind) {
  while (n > 0) {
    const char *nl = memchr(text, '\n', n);
    size_t k = nl ? (size_t)(nl - text) : n;
    push_line(s, text, k, kind);
    s->open = nl == NULL;
    if (!nl) break;
    text += k + 1;
    n -= k + 1;
  }
  s->back = 0;
  s->version++;
}

void scroll_addf(Scroll *s, ScrollKind kind, const char *fmt, ...) {
  Buf line = {.max = 2047};
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(&line, fmt, ap);
  va_end(ap);
  if (!line.s) return;
  if (s->open) scroll_add(s, "\n", 1, kind);
  scroll_add(s, line.s, line.n, kind);
  scroll_add(s, "\n", 1, kind);
  buf_free(&line);
}

void scroll_page(Scroll *s, int pages, int height) {
  if (pages == 0) s->back = 0;
  else s->back -= pages * (height > 1 ? height - 1 : 1);
  if (s->back > s->max_back) s->back = s->max_back;
  if (s->back < 0) s->back = 0;
  s->version++;
}

int scroll_at_end(const Scroll *s) { return s->back == 0; }
int scroll_at_start(const Scroll *s) { return s->back > 0 && s->back == s->max_back; }

long scroll_version(const Scroll *s) { return s->version; }

int scroll_rows(const Scroll *s, int w, int cap) {
  int rows = 0;
  for (int i = s->n - 1; i >= 0 && rows < cap; i--) rows += fit_lines(s->lines[(s->head + i) % s->max].text, w);
  return rows < cap ? rows : cap;
}

void scroll_draw(Scroll *s, const Term *t, WINDOW *win, int h, int w) {
  werase(win);
  if (h <= 0 || w <= 0) return;
  /* Rows from the end that the view skips, clamped to what exists. */
  int total = 0;
  for (int i = 0; i < s->n; i++) total += fit_lines(s->lines[(s->head + i) % s->max].text, w);
  int max_back = total > h ? total - h : 0;
  if (s->back > max_back) s->back = max_back;
  s->max_back = max_back;
  int skip = s->back, y = h - 1;
  for (int i = s->n - 1; i >= 0 && y >= 0; i--) {
    const Line *l = &s->lines[(s->head + i) % s->max];
    /* Walk this line's wrapped rows from its last to its first. */
    struct {
      const char *p;
      size_t n;
    } row[256];
    int nr = 0;
    const char *p = l->text;
    do {
      const char *next;
      row[nr].n = fit_wrap(p, w, &next);
      row[nr++].p = p;
      p = next;
    } while (*p && nr < 256);
    for (int r = nr - 1; r >= 0 && y >= 0; r--) {
      if (skip > 0) {
        skip--;
        continue;
      }
      char buf[1024];
      size_t k = row[r].n < sizeof buf ? row[r].n : sizeof buf - 1;
      memcpy(buf, row[r].p, k);
      buf[k] = '\0';
      term_print(t, win, y--, 0, w, kind_role[l->kind], buf);
    }
  }
  if (s->back > 0) term_printf(t, win, 0, w > 12 ? w - 12 : 0, 12, ROLE_SELECT, "%s back %d", term_glyph(t, GLYPH_UP), s->back);
}
