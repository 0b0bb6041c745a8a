/*
** fit.c -- shortening and wrapping text for a width (see fit.h).
*/
#include "ui/fit.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ui/width.h"

int fit_cols(const char *s) { return width_cols(s, strlen(s)); }

size_t fit_prefix(const char *s, int cols) { return width_prefix(s, strlen(s), cols); }

/* Characters that read badly right before an ellipsis. */
static int dangling(char c) { return c == ' ' || c == ',' || c == ';' || c == ':' || c == '(' || c == '-'; }

const char *fit_text(const char *s, int width, const char *ellipsis, char *buf, size_t cap) {
  if (fit_cols(s) <= width) return s;
  if (cap == 0) return "";
  buf[0] = '\0';
  int room = width - fit_cols(ellipsis);
  if (room < 1) return buf;
  size_t n = fit_prefix(s, room);
  /* Back to the last space inside the prefix, unless the cut already falls
  ** at one (the next character is a space); a single long word is cut. */
  if (s[n] != ' ') {
    size_t sp = n;
    while (sp > 0 && s[sp - 1] != ' ') sp--;
    if (sp > 0) n = sp;
  }
  while (n > 0 && dangling(s[n - 1])) n--;
  if (n == 0) n = fit_prefix(s, room);
  snprintf(buf, cap, "%.*s%s", (int)n, s, ellipsis);
  return buf;
}

const char *fit_choose(const char *const *variants, int n, int width, const char *ellipsis, char *buf,
                       size_t cap) {
  if (n <= 0) return "";
  for (int i = 0; i < n; i++)
    if (fit_cols(variants[i]) <= width) return variants[i];
  return fit_text(variants[n - 1], width, ellipsis, buf, cap);
}

size_t fit_wrap(const char *s, int width, const char **next) {
  if (width < 1) width = 1;
  size_t n = fit_prefix(s, width);
  if (n == 0 && *s) {   /* a character wider than the line: it goes alone */
    int cw;
    n = width_cluster(s, strlen(s), &cw);
  }
  size_t end = n;
  if (s[n] != '\0' && s[n] != ' ') {
    size_t sp = n;
    while (sp > 0 && s[sp - 1] != ' ') sp--;
    if (sp > 0) end = sp;
  }
  const char *p = s + end;
  while (*p == ' ') p++;
  while (end > 0 && s[end - 1] == ' ') end--;
  if (next) *next = p;
  return end;
}

int fit_lines(const char *s, int width) {
  int lines = 1;
  const char *p = s;
  for (;;) {
    const char *next;
    fit_wrap(p, width, &next);
    if (!*next) return lines;
    p = next;
    lines++;
  }
}

int fit_print(const Term *t, WINDOW *w, int y, int x, int maxw, int role, const char *fmt, ...) {
  char text[1024], buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  if (maxw <= 0) return 0;
  return term_print(t, w, y, x, maxw, role, fit_text(text, maxw, term_glyph(t, GLYPH_ELLIPSIS), buf, sizeof buf));
}

int fit_block(const Term *t, WINDOW *w, int y, int x, int rows, int maxw, int role, const char *const *variants,
              int n) {
  if (rows <= 0 || maxw <= 0 || n <= 0) return 0;
  int pick = n - 1;
  for (int i = 0; i < n; i++)
    if (fit_lines(variants[i], maxw) <= rows) {
      pick = i;
      break;
    }
  const char *s = variants[pick];
  int used = 0;
  for (; *s && used < rows; used++) {
    const char *next;
    size_t len = fit_wrap(s, maxw, &next);
    char line[1024];
    snprintf(line, sizeof line, "%.*s", (int)len, s);
    /* Text left over after the last row: that row ends in an ellipsis. */
    if (used == rows - 1 && *next) {
      char buf[1024];
      snprintf(line, sizeof line, "%s", s);
      term_print(t, w, y + used, x, maxw, role, fit_text(line, maxw, term_glyph(t, GLYPH_ELLIPSIS), buf, sizeof buf));
    } else {
      term_print(t, w, y + used, x, maxw, role, line);
    }
    s = next;
  }
  return used;
}
