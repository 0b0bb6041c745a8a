/*
** names.c -- shortening run names so that they stay apart (see names.h).
*/
#include "ui/names.h"

#include <stdio.h>
#include <string.h>

#include "ui/width.h"

/* A name's parts are split at these: what is dropped is whole words. */
static int is_sep(char c) { return c == '_' || c == '-' || c == '.' || c == ' ' || c == '/'; }

/* Byte 'at' of 'name' lies between two of its clusters: a cut there keeps
** an accent with its letter. */
static int between_clusters(const char *name, int at) {
  int len = (int)strlen(name);
  return at <= 0 || at >= len || (int)width_cluster_at(name, (size_t)len, (size_t)at, NULL) == at;
}

/* Every name may be cut 'k' bytes from its beginning (from its end, with
** 'from_end'). */
static int all_between(const char *const *names, int n, int k, int from_end) {
  for (int i = 0; i < n; i++)
    if (!between_clusters(names[i], from_end ? (int)strlen(names[i]) - k : k)) return 0;
  return 1;
}

/* Two names show the same text. */
static int shown_equal(const char *a, const NameCut *x, const char *b, const NameCut *y) {
  int ha = x->head - x->start, hb = y->head - y->start, ta = x->end - x->tail, tb = y->end - y->tail;
  if (x->cut != y->cut || ha != hb || memcmp(a + x->start, b + y->start, (size_t)ha) != 0) return 0;
  return !x->cut || (ta == tb && memcmp(a + x->tail, b + y->tail, (size_t)ta) == 0);
}

/* Name 'i' shows the same as another name that is not itself the same. */
static int collides(const char *const *names, int n, const NameCut *c, int i) {
  for (int j = 0; j < n; j++)
    if (j != i && strcmp(names[i], names[j]) != 0 && shown_equal(names[i], &c[i], names[j], &c[j])) return 1;
  return 0;
}

/* The beginning and end every name shares, ending (beginning) at a
** separator, so "tied_s1" and "untied_s1" lose "_s1" and never "ied_s1";
** nothing when a name would be left empty. */
static void drop_common(const char *const *names, int n, NameCut *c) {
  const char *a = names[0];
  int la = (int)strlen(a), p = la, q = la;
  for (int i = 1; i < n; i++) {
    const char *b = names[i];
    int lb = (int)strlen(b), k = 0;
    while (k < p && k < lb && a[k] == b[k]) k++;
    p = k;
    k = 0;
    while (k < q && k < lb && a[la - 1 - k] == b[lb - 1 - k]) k++;
    q = k;
  }
  while (p > 0 && (!is_sep(a[p - 1]) || !all_between(names, n, p, 0))) p--;
  while (q > 0 && (!is_sep(a[la - q]) || !all_between(names, n, q, 1))) q--;
  for (int i = 0; i < n; i++)
    if ((int)strlen(names[i]) <= p + q) return;
  for (int i = 0; i < n; i++) c[i].start = p, c[i].end = (int)strlen(names[i]) - q;
}

/* A last part ("_s1") that another, longer name ends with too says little:
** it goes, unless that leaves the name equal to another. */
static void drop_last_parts(const char *const *names, int n, NameCut *c) {
  int last[NAMES_MAX];
  for (int i = 0; i < n; i++) {
    last[i] = 0;
    for (int k = c[i].start + 1; k < c[i].end; k++)
      if (is_sep(names[i][k]) && between_clusters(names[i], k)) last[i] = k;
  }
  /* Which go is decided on the names before any is dropped. */
  int drop[NAMES_MAX] = {0};
  for (int i = 0; i < n; i++) {
    int lp = c[i].end - last[i];
    for (int j = 0; j < n && last[i] && !drop[i]; j++)
      drop[i] = j != i && c[j].end - c[j].start > lp &&
                memcmp(names[j] + c[j].end - lp, names[i] + last[i], (size_t)lp) == 0;
  }
  for (int i = 0; i < n; i++) {
    if (!drop[i]) continue;
    NameCut keep = c[i];
    c[i].end = c[i].head = c[i].tail = last[i];
    if (collides(names, n, c, i)) c[i] = keep;
  }
}

/* Cut a name to 'room' columns besides the ellipsis: its clusters in the
** first 'front' columns before it, as many of its last as the rest of the
** room holds after it. A wide character is never split: where one does
** not fit, its column stays blank. */
static void split(const char *name, NameCut *c, int room, int front) {
  const char *s = name + c->start;
  size_t len = (size_t)(c->end - c->start), head = width_prefix(s, len, front);
  c->head = c->start + (int)head;
  c->tail = c->start + (int)width_suffix(s, len, room - width_cols(s, head));
  c->cut = 1;
}

/* Columns of name a's body up to and including the first cluster that
** differs from b's, from its start or (from_end) from its end. */
static int differ_at(const char *a, const NameCut *x, const char *b, const NameCut *y, int from_end) {
  int la = x->end - x->start, lb = y->end - y->start, k = 0;
  const char *pa = a + x->start, *pb = b + y->start;
  if (from_end)
    while (k < la && k < lb && pa[la - 1 - k] == pb[lb - 1 - k]) k++;
  else
    while (k < la && k < lb && pa[k] == pb[k]) k++;
  if (k >= la) return width_cols(pa, (size_t)la) + 1;   /* no character of its own there */
  size_t end, at = width_cluster_at(pa, (size_t)la, (size_t)(from_end ? la - 1 - k : k), &end);
  return from_end ? width_cols(pa + at, (size_t)la - at) : width_cols(pa, end);
}

/* Cut name 'i' to 'room' columns besides the ellipsis so that it keeps
** where it differs from the names it read like when cut evenly ('even',
** marked in 'alike'): its beginning or its end, whichever needs less;
** failing that, any split that makes it unique. 0 when none does. */
static int cut_name(const char *const *names, int n, NameCut *c, const NameCut *even, const char *alike, int i,
                    int room) {
  int front = 0, back = 0;
  for (int j = 0; j < n; j++) {
    if (j == i || !alike[j] || !shown_equal(names[i], &even[i], names[j], &even[j])) continue;
    int f = differ_at(names[i], &even[i], names[j], &even[j], 0), b = differ_at(names[i], &even[i], names[j], &even[j], 1);
    if (f > front) front = f;
    if (b > back) back = b;
  }
  int first = front <= back ? front : room - back, second = front <= back ? room - back : front;
  if (first >= 0 && first <= room) {
    split(names[i], &c[i], room, first);
    if (!collides(names, n, c, i)) return 1;
  }
  if (second >= 0 && second <= room) {
    split(names[i], &c[i], room, second);
    if (!collides(names, n, c, i)) return 1;
  }
  for (int f = room; f >= 0; f--) {
    split(names[i], &c[i], room, f);
    if (!collides(names, n, c, i)) return 1;
  }
  split(names[i], &c[i], room, (room + 1) / 2);
  return 0;
}

int names_fit(const char *const *names, int n, int affix, int max, int ell, NameCut *out) {
  if (n > NAMES_MAX) n = NAMES_MAX;
  for (int i = 0; i < n; i++) {
    int len = (int)strlen(names[i]);
    out[i] = (NameCut){0, len, len, len, 0};
  }
  if (affix && n >= 2) {
    drop_common(names, n, out);
    for (int i = 0; i < n; i++) out[i].head = out[i].tail = out[i].end;
    drop_last_parts(names, n, out);
  }
  int room = max - ell < 0 ? 0 : max - ell;
  for (int i = 0; i < n; i++)
    if (width_cols(names[i] + out[i].start, (size_t)(out[i].end - out[i].start)) > max) split(names[i], &out[i], room, (room + 1) / 2);
  /* Names that read alike cut evenly are all cut anew, each against the
  ** others as they were, so that alike names are cut alike. */
  NameCut even[NAMES_MAX];
  char alike[NAMES_MAX];
  memcpy(even, out, sizeof *out * (size_t)n);
  for (int i = 0; i < n; i++) alike[i] = (char)(out[i].cut && collides(names, n, even, i));
  int distinct = 1;
  for (int i = 0; i < n; i++)
    if (alike[i] && !cut_name(names, n, out, even, alike, i, room)) distinct = 0;
  for (int i = 0; i < n; i++)
    if (collides(names, n, out, i)) distinct = 0;
  return distinct;
}

int names_cols(const char *name, const NameCut *c, int ell) {
  int head = width_cols(name + c->start, (size_t)(c->head - c->start));
  return c->cut ? head + ell + width_cols(name + c->tail, (size_t)(c->end - c->tail)) : head;
}

void names_text(const char *name, const NameCut *c, const char *ellipsis, char *buf, size_t cap) {
  int n;
  if (c->cut)
    n = snprintf(buf, cap, "%.*s%s%.*s", c->head - c->start, name + c->start, ellipsis, c->end - c->tail, name + c->tail);
  else
    n = snprintf(buf, cap, "%.*s", c->head - c->start, name + c->start);
  /* Cut short by 'cap': the cluster the cut fell in goes whole. */
  if (cap > 1 && n >= (int)cap) buf[width_cluster_at(buf, cap - 1, cap - 2, NULL)] = '\0';
}
