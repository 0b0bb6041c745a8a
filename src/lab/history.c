/*
** history.c -- see history.h.
**
** Each series owns one array of 'cap' buckets, allocated when the series is
** created and never resized. Every full bucket spans 'span' points, the last
** one possibly fewer; when a new bucket is needed and all 'cap' are in use,
** pairs are merged (span doubles) and half the array is free again. So a
** bucket never straddles a merge boundary and all full buckets have the same
** width, which keeps a plot's x axis honest.
*/
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/num.h"
#include "base/text.h"
#include "base/utf8.h"
#include "lab/history.h"

#define NAME_MAX_LEN 63
#define HISTORY_MAX_UNPACK_BYTES (256 << 20)   /* twice HISTORY_MAX_SERIES series at the default cap */
#define TEXT_MAX_LEN ((int)sizeof(((HistEvent *)0)->text) - 1)
#define PACK_MAGIC 7629157.0     /* 0x746965, the bytes t i e: the first value of a packed history */
#define PACK_VERSION 1.0
#define PACK_HEAD 6              /* magic version cap n_series n_events dropped */
#define PACK_SERIES 2            /* n span */
#define PACK_BUCKET 8            /* step_first step_last first last min max mean count */

typedef struct Series {
  char name[NAME_MAX_LEN + 1];
  HistBucket *b;  /* [cap]; kept for reuse in slots past n_series */
  int n;          /* buckets in use */
  long span;      /* points per full bucket */
} Series;

struct History {
  int cap;
  Series *series;  /* [alloc] */
  int n_series, alloc;
  HistEvent events[HISTORY_MAX_EVENTS];
  int n_events;
  long events_dropped;
};

size_t history_memory_bytes(int cap, int n_series) {
  if (cap == 0) cap = HISTORY_DEFAULT_CAP;
  return sizeof(History) + (size_t)n_series * (sizeof(Series) + (size_t)cap * sizeof(HistBucket));
}

/* ------------------------------------------------------------ text */

static int is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

/* min..max bytes of valid UTF-8 without control characters (so no newline:
** names and texts travel newline-separated). */
static int valid_text(const char *s, size_t len, size_t min, size_t max) {
  if (len < min || len > max) return 0;
  for (size_t i = 0; i < len;) {
    size_t n = is_control((unsigned char)s[i]) ? 0 : utf8_char(s + i, len - i);
    if (n == 0) return 0;
    i += n;
  }
  return 1;
}

/* Copy 's' into 'dst' (room for max bytes + NUL): control characters and
** invalid bytes become spaces and '?', and the cut falls between characters. */
static void clean_text(char *dst, const char *s, int max) {
  int o = 0;
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
    int n = is_control(*p) ? 0 : (int)utf8_char((const char *)p, UTF8_MAX);
    if (o + (n ? n : 1) > max) break;
    if (n == 0) {
      dst[o++] = is_control(*p) ? ' ' : '?';
      p++;
    } else {
      memcpy(dst + o, p, n);
      o += n, p += n;
    }
  }
  dst[o] = '\0';
}

/* ------------------------------------------------------------ life */

History *history_new(int cap) {
  if (cap == 0) cap = HISTORY_DEFAULT_CAP;
  if (cap < 2 || cap % 2 || cap > HISTORY_MAX_CAP) return NULL;
  History *h = calloc(1, sizeof *h);
  if (h) h->cap = cap;
  return h;
}

void history_free(History *h) {
  if (!h) return;
  for (int i = 0; i < h->alloc; i++) free(h->series[i].b);
  free(h->series);
  free(h);
}

size_t history_bytes(const History *h) {
  size_t n = sizeof *h + sizeof(Series) * (size_t)h->alloc;
  for (int i = 0; i < h->alloc; i++)
    if (h->series[i].b) n += sizeof(HistBucket) * (size_t)h->cap;
  return n;
}

/* Room for 'want' series slots; new slots start empty. */
static int reserve_slots(History *h, int want) {
  if (want <= h->alloc) return 0;
  int n = h->alloc ? h->alloc : 8;
  while (n < want) n *= 2;
  if (n > HISTORY_MAX_SERIES) n = HISTORY_MAX_SERIES;
  Series *s = realloc(h->series, sizeof(Series) * n);
  if (!s) return -1;
  memset(s + h->alloc, 0, sizeof(Series) * (n - h->alloc));
  h->series = s, h->alloc = n;
  return 0;
}

/* The next slot, holding an empty series with a bucket array. */
static Series *add_series(History *h, const char *name) {
  if (h->n_series >= HISTORY_MAX_SERIES || reserve_slots(h, h->n_series + 1) < 0) return NULL;
  Series *s = &h->series[h->n_series];
  if (!s->b && !(s->b = malloc(sizeof(HistBucket) * h->cap))) return NULL;
  snprintf(s->name, sizeof s->name, "%s", name);
  s->n = 0, s->span = 1;
  h->n_series++;
  return s;
}

static Series *find(const History *h, const char *name) {
  for (int i = 0; i < h->n_series; i++)
    if (strcmp(h->series[i].name, name) == 0) return &h->series[i];
  return NULL;
}

int history_copy(History *dst, const History *src) {
  if (dst == src) return 0;
  if (dst->cap != src->cap) {
    for (int i = 0; i < dst->alloc; i++) free(dst->series[i].b), dst->series[i].b = NULL;
    dst->cap = src->cap;
  }
  dst->n_series = 0, dst->n_events = 0, dst->events_dropped = 0;
  for (int i = 0; i < src->n_series; i++) {
    const Series *s = &src->series[i];
    Series *d = add_series(dst, s->name);
    if (!d) {
      dst->n_series = 0;
      return -1;
    }
    memcpy(d->b, s->b, sizeof(HistBucket) * s->n);
    d->n = s->n, d->span = s->span;
  }
  memcpy(dst->events, src->events, sizeof(HistEvent) * src->n_events);
  dst->n_events = src->n_events, dst->events_dropped = src->events_dropped;
  return 0;
}

History *history_clone(const History *src) {
  History *h = history_new(src->cap);
  if (h && history_copy(h, src) < 0) {
    history_free(h);
    return NULL;
  }
  return h;
}

/* ------------------------------------------------------------ points */

static void bucket_start(HistBucket *b, long step, double value) {
  b->step_first = b->step_last = step;
  b->first = b->last = b->min = b->max = b->mean = value;
  b->count = 1;
}

static void bucket_add(HistBucket *b, long step, double value) {
  b->step_last = step;
  b->last = value;
  b->min = fmin(b->min, value);
  b->max = fmax(b->max, value);
  b->count++;
  b->mean += (value - b->mean) / b->count;
}

static HistBucket bucket_merge(const HistBucket *a, const HistBucket *b) {
  HistBucket m = *a;
  m.step_last = b->step_last;
  m.last = b->last;
  m.min = fmin(a->min, b->min);
  m.max = fmax(a->max, b->max);
  m.count = a->count + b->count;
  m.mean = a->mean * ((double)a->count / m.count) + b->mean * ((double)b->count / m.count);
  return m;
}

int history_push(History *h, const char *series, long step, double value) {
  if (!h || !series || step < 0 || step > HISTORY_MAX_STEP) return -1;
  Series *s = find(h, series);
  if (!s) {
    if (!valid_text(series, strlen(series), 1, NAME_MAX_LEN) || !(s = add_series(h, series))) return -1;
  }
  HistBucket *last = s->n ? &s->b[s->n - 1] : NULL;
  if (last && step < last->step_last) return -1;
  if (last && last->count < s->span) {
    bucket_add(last, step, value);
    return 0;
  }
  if (s->n == h->cap) {
    for (int i = 0; i < h->cap / 2; i++) s->b[i] = bucket_merge(&s->b[2 * i], &s->b[2 * i + 1]);
    s->n = h->cap / 2;
    s->span *= 2;
  }
  bucket_start(&s->b[s->n++], step, value);
  return 0;
}

void history_event(History *h, long step, const char *text) {
  if (!h) return;
  if (h->n_events == HISTORY_MAX_EVENTS) {
    memmove(h->events, h->events + 1, sizeof(HistEvent) * (HISTORY_MAX_EVENTS - 1));
    h->n_events--;
    h->events_dropped++;
  }
  HistEvent *e = &h->events[h->n_events++];
  e->step = step < 0 ? 0 : step > HISTORY_MAX_STEP ? HISTORY_MAX_STEP : step;
  clean_text(e->text, text, TEXT_MAX_LEN);
}

int history_n_series(const History *h) { return h->n_series; }

const char *history_series_name(const History *h, int i) {
  return i >= 0 && i < h->n_series ? h->series[i].name : NULL;
}

const HistBucket *history_series(const History *h, const char *series, int *n) {
  const Series *s = series ? find(h, series) : NULL;
  *n = s ? s->n : 0;
  return s ? s->b : NULL;
}

const HistEvent *history_events(const History *h, int *n) {
  *n = h->n_events;
  return h->events;
}

long history_events_dropped(const History *h) { return h->events_dropped; }

/* ------------------------------------------------------------ export */

static int write_done(FILE *f, Err *err) {
  if (ferror(f) || fflush(f) != 0) return err_set(err, "writing the history: %s", strerror(errno ? errno : EIO));
  return 0;
}

/* CSV numbers: shortest exact form; nan and inf as most readers take them. */
static void csv_number(FILE *f, double x) {
  if (isnan(x)) fputs("nan", f);
  else if (isinf(x)) fputs(x > 0 ? "inf" : "-inf", f);
  else {
    char b[NUM_TEXT_MAX];
    fputs(num_format(b, sizeof b, x), f);
  }
}

/* A CSV field, quoted when it holds a comma, quote or space at either end. */
static void csv_field(FILE *f, const char *s) {
  size_t n = strlen(s);
  if (!strpbrk(s, ",\"\r\n") && n && s[0] != ' ' && s[n - 1] != ' ') {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

/* The long form: one row per bucket of every series. */
int history_write_csv(const History *h, FILE *f, Err *err) {
  fputs("series,step_first,step_last,first,last,min,mean,max,count\n", f);
  for (int i = 0; i < h->n_series; i++) {
    const Series *s = &h->series[i];
    for (int j = 0; j < s->n; j++) {
      const HistBucket *b = &s->b[j];
      const double v[] = {b->first, b->last, b->min, b->mean, b->max};
      csv_field(f, s->name);
      fprintf(f, ",%ld,%ld", b->step_first, b->step_last);
      for (int k = 0; k < 5; k++) fputc(',', f), csv_number(f, v[k]);
      fprintf(f, ",%ld\n", b->count);
    }
  }
  return write_done(f, err);
}

static int compare_steps(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

/* Every bucket's last step, sorted, each once; NULL when memory is short. */
static long *recorded_steps(const History *h, size_t *n) {
  size_t total = 0, k = 0;
  for (int i = 0; i < h->n_series; i++) total += (size_t)h->series[i].n;
  long *steps = malloc(sizeof *steps * (total ? total : 1));
  if (!steps) return NULL;
  for (int i = 0; i < h->n_series; i++)
    for (int j = 0; j < h->series[i].n; j++) steps[k++] = h->series[i].b[j].step_last;
  qsort(steps, total, sizeof *steps, compare_steps);
  size_t u = 0;
  for (size_t i = 0; i < total; i++)
    if (u == 0 || steps[i] != steps[u - 1]) steps[u++] = steps[i];
  *n = u;
  return steps;
}

/* The wide form: a row per recorded step, a column per series holding the
** value recorded at that step ('last' of the bucket ending there), empty
** where the series has none. Buckets of a series end at increasing steps,
** so one cursor per series walks them once. */
int history_write_csv_wide(const History *h, FILE *f, Err *err) {
  size_t n_steps = 0;
  long *steps = recorded_steps(h, &n_steps);
  int *cursor = calloc((size_t)h->n_series + 1, sizeof *cursor);
  if (!steps || !cursor) {
    free(steps);
    free(cursor);
    return err_set(err, "history: out of memory for the wide form");
  }
  fputs("step", f);
  for (int i = 0; i < h->n_series; i++) fputc(',', f), csv_field(f, h->series[i].name);
  fputc('\n', f);
  for (size_t k = 0; k < n_steps; k++) {
    fprintf(f, "%ld", steps[k]);
    for (int i = 0; i < h->n_series; i++) {
      const Series *s = &h->series[i];
      int *j = &cursor[i];
      fputc(',', f);
      if (*j >= s->n || s->b[*j].step_last != steps[k]) continue;
      while (*j + 1 < s->n && s->b[*j + 1].step_last == steps[k]) ++*j;   /* the latest of one step */
      csv_number(f, s->b[(*j)++].last);
    }
    fputc('\n', f);
  }
  free(steps);
  free(cursor);
  return write_done(f, err);
}

int history_write_events_csv(const History *h, FILE *f, Err *err) {
  fputs("step,text\n", f);
  for (int i = 0; i < h->n_events; i++) {
    fprintf(f, "%ld,", h->events[i].step);
    csv_field(f, h->events[i].text);
    fputc('\n', f);
  }
  return write_done(f, err);
}

/* A JSON string of 's': jansson takes only valid UTF-8, so each ill-formed
** part becomes U+FFFD first (base/utf8.h's policy) and every line parses. */
static json_t *json_text(const char *s) {
  size_t n = strlen(s ? s : "");
  if (utf8_valid(s ? s : "", n)) return json_stringn(s ? s : "", n);
  char *clean = malloc(3 * n + 1);   /* U+FFFD is 3 bytes and stands for 1 or more */
  if (!clean) return NULL;
  TextUtf8 u;
  text_utf8_begin(&u, clean, 3 * n + 1);
  text_utf8_put(&u, s, n);
  json_t *j = json_stringn(clean, text_utf8_end(&u));
  free(clean);
  return j;
}

/* 's' as a JSON string, quoted and escaped by jansson (to free), or NULL
** when memory runs out. */
static char *json_quoted(const char *s) {
  json_t *j = json_text(s);
  char *t = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
  json_decref(j);
  return t;
}

/* A string field; 'bad' is set when it could not be written. */
static void put_string(FILE *f, const char *key, const char *s, int *bad) {
  char *t = json_quoted(s);
  if (t) fprintf(f, ",\"%s\":%s", key, t);
  else *bad = 1;
  free(t);
}

/* A number field, as short as it reads back exactly (num_format); null for
** NaN and the infinities, which JSON has not. */
static void put_number(FILE *f, const char *key, double x) {
  char b[NUM_TEXT_MAX];
  fprintf(f, ",\"%s\":%s", key, isfinite(x) ? num_format(b, sizeof b, x) : "null");
}

/* Each line is an object whose first field is its type. */
static void put_header(const History *h, FILE *f, const char *run, const char *settings, int *bad) {
  fputs("{\"type\":\"header\",\"format\":\"tielab-history\",\"version\":1", f);
  put_string(f, "run", run, bad);
  put_string(f, "settings", settings, bad);
  fprintf(f, ",\"cap\":%d,\"events_dropped\":%ld,\"series\":[", h->cap, h->events_dropped);
  for (int i = 0; i < h->n_series; i++) {
    char *t = json_quoted(h->series[i].name);
    if (!t) *bad = 1;
    fprintf(f, "%s%s", i ? "," : "", t ? t : "\"\"");
    free(t);
  }
  fputs("]}\n", f);
}

static void put_bucket(const Series *s, const HistBucket *b, FILE *f, int *bad) {
  fputs("{\"type\":\"bucket\"", f);
  put_string(f, "series", s->name, bad);
  fprintf(f, ",\"step_first\":%ld,\"step_last\":%ld", b->step_first, b->step_last);
  put_number(f, "first", b->first);
  put_number(f, "last", b->last);
  put_number(f, "min", b->min);
  put_number(f, "mean", b->mean);
  put_number(f, "max", b->max);
  fprintf(f, ",\"count\":%ld}\n", b->count);
}

int history_write_jsonl(const History *h, FILE *f, const char *run, const char *settings, Err *err) {
  int bad = 0;
  put_header(h, f, run, settings, &bad);
  for (int i = 0; i < h->n_series; i++)
    for (int j = 0; j < h->series[i].n; j++) put_bucket(&h->series[i], &h->series[i].b[j], f, &bad);
  for (int i = 0; i < h->n_events; i++) {
    fprintf(f, "{\"type\":\"event\",\"step\":%ld", h->events[i].step);
    put_string(f, "text", h->events[i].text, &bad);
    fputs("}\n", f);
  }
  if (bad) return err_set(err, "writing the history: out of memory");
  return write_done(f, err);
}

/* ------------------------------------------------------------ pack */

int history_pack(const History *h, double **out, size_t *n, char **names, Err *err) {
  size_t len = PACK_HEAD + (size_t)h->n_events, text = 1;
  for (int i = 0; i < h->n_series; i++) {
    len += PACK_SERIES + PACK_BUCKET * (size_t)h->series[i].n;
    text += strlen(h->series[i].name) + 1;
  }
  for (int i = 0; i < h->n_events; i++) text += strlen(h->events[i].text) + 1;
  double *p = malloc(sizeof(double) * len);
  char *t = malloc(text);
  if (!p || !t) {
    free(p);
    free(t);
    return err_set(err, "history: out of memory packing %zu values", len);
  }
  double *q = p;
  char *u = t;
  *q++ = PACK_MAGIC, *q++ = PACK_VERSION, *q++ = h->cap;
  *q++ = h->n_series, *q++ = h->n_events, *q++ = (double)h->events_dropped;
  for (int i = 0; i < h->n_series; i++) {
    const Series *s = &h->series[i];
    *q++ = s->n, *q++ = (double)s->span;
    for (int j = 0; j < s->n; j++) {
      const HistBucket *b = &s->b[j];
      *q++ = (double)b->step_first, *q++ = (double)b->step_last, *q++ = b->first, *q++ = b->last;
      *q++ = b->min, *q++ = b->max, *q++ = b->mean, *q++ = (double)b->count;
    }
    u += sprintf(u, "%s\n", s->name);
  }
  for (int i = 0; i < h->n_events; i++) {
    *q++ = (double)h->events[i].step;
    u += sprintf(u, "%s\n", h->events[i].text);
  }
  *u = '\0';
  *out = p, *n = len, *names = t;
  return 0;
}

/* An integral double in [lo, hi] (false for NaN and infinities). */
static int is_int(double x, double lo, double hi) { return x >= lo && x <= hi && x == floor(x); }

static int is_pow2(long x) { return x > 0 && (x & (x - 1)) == 0; }

/* Next newline-ended line of 'names', checked as a name or event text. */
static const char *next_line(const char **p, size_t min, size_t max, int *len) {
  const char *s = *p, *nl = strchr(s, '\n');
  if (!nl || !valid_text(s, (size_t)(nl - s), min, max)) return NULL;
  *len = (int)(nl - s);
  *p = nl + 1;
  return s;
}

/* One bucket, checked alone and against the one before it. */
static int read_bucket(const double *q, const HistBucket *prev, HistBucket *b) {
  const double smax = (double)HISTORY_MAX_STEP;
  if (!is_int(q[0], 0, smax) || !is_int(q[1], q[0], smax) || !is_int(q[7], 1, smax)) return -1;
  *b = (HistBucket){.step_first = (long)q[0], .step_last = (long)q[1], .first = q[2], .last = q[3],
                    .min = q[4], .max = q[5], .mean = q[6], .count = (long)q[7]};
  if (prev && b->step_first < prev->step_last) return -1;
  if (b->min > b->max || b->first < b->min || b->first > b->max || b->last < b->min || b->last > b->max)
    return -1;  /* comparisons with NaN are false: NaN passes, as push allows it */
  return 0;
}

/* One series' buckets at q (after its n and span), into 's'. */
static int read_series(const double *q, int cap, Series *s, Err *err) {
  for (int j = 0; j < s->n; j++, q += PACK_BUCKET) {
    if (read_bucket(q, j ? &s->b[j - 1] : NULL, &s->b[j]) < 0)
      return err_set(err, "series '%s' bucket %d is malformed", s->name, j);
    long c = s->b[j].count;
    if (c > s->span || (j < s->n - 1 && c != s->span))
      return err_set(err, "series '%s' bucket %d holds %ld points, span %ld", s->name, j, c, s->span);
  }
  if (s->span > 1 && s->n <= cap / 2)
    return err_set(err, "series '%s' has span %ld with only %d buckets", s->name, s->span, s->n);
  return 0;
}

static int read_head(const double *buf, size_t n, int *cap, int *ns, int *ne, Err *err) {
  if (!buf) return err_set(err, "no packed data");
  if (n < PACK_HEAD) return err_set(err, "truncated (%zu values)", n);
  if (buf[0] != PACK_MAGIC || buf[1] != PACK_VERSION) return err_set(err, "not a packed history (format 1)");
  if (!is_int(buf[2], 2, HISTORY_MAX_CAP) || (int)buf[2] % 2) return err_set(err, "bad bucket cap");
  if (!is_int(buf[3], 0, HISTORY_MAX_SERIES)) return err_set(err, "bad series count");
  if (!is_int(buf[4], 0, HISTORY_MAX_EVENTS)) return err_set(err, "bad event count");
  if (!is_int(buf[5], 0, (double)HISTORY_MAX_STEP)) return err_set(err, "bad dropped-event count");
  *cap = (int)buf[2], *ns = (int)buf[3], *ne = (int)buf[4];
  /* Every series takes 'cap' buckets however few it holds: a few bytes of
  ** header must not ask for gigabytes. */
  if (history_memory_bytes(*cap, *ns) > HISTORY_MAX_UNPACK_BYTES)
    return err_set(err, "%d series of %d buckets would take %.0f MiB, more than the %d MiB a history may", *ns, *cap,
                   (double)history_memory_bytes(*cap, *ns) / (1 << 20), HISTORY_MAX_UNPACK_BYTES >> 20);
  return 0;
}

static int unpack_body(History *h, const double *buf, size_t n, const char *names, int ns, int ne, Err *err) {
  size_t pos = PACK_HEAD;
  const char *p = names;
  int len;
  for (int i = 0; i < ns; i++) {
    const char *name = next_line(&p, 1, NAME_MAX_LEN, &len);
    if (!name) return err_set(err, "series name %d is missing or malformed", i);
    char tmp[NAME_MAX_LEN + 1];
    memcpy(tmp, name, len), tmp[len] = '\0';
    if (find(h, tmp)) return err_set(err, "series '%s' appears twice", tmp);
    if (n - pos < PACK_SERIES) return err_set(err, "truncated at series '%s'", tmp);
    const double *q = buf + pos;
    if (!is_int(q[0], 0, h->cap) || !is_int(q[1], 1, (double)HISTORY_MAX_STEP) || !is_pow2((long)q[1]))
      return err_set(err, "series '%s' has a bad bucket count or span", tmp);
    if ((n - pos - PACK_SERIES) / PACK_BUCKET < (size_t)q[0]) return err_set(err, "truncated in series '%s'", tmp);
    Series *s = add_series(h, tmp);
    if (!s) return err_set(err, "out of memory");
    s->n = (int)q[0], s->span = (long)q[1];
    if (read_series(q + PACK_SERIES, h->cap, s, err) < 0) return -1;
    pos += PACK_SERIES + PACK_BUCKET * (size_t)s->n;
  }
  if (n - pos != (size_t)ne) return err_set(err, "%zu values where %zu were expected", n, pos + ne);
  for (int i = 0; i < ne; i++) {
    const char *text = next_line(&p, 0, TEXT_MAX_LEN, &len);
    if (!text || !is_int(buf[pos + i], 0, (double)HISTORY_MAX_STEP))
      return err_set(err, "event %d is malformed", i);
    h->events[i].step = (long)buf[pos + i];
    memcpy(h->events[i].text, text, len), h->events[i].text[len] = '\0';
  }
  h->n_events = ne;
  if (*p) return err_set(err, "names hold more lines than series and events");
  return 0;
}

History *history_unpack(const double *buf, size_t n, const char *names, Err *err) {
  int cap = 0, ns = 0, ne = 0;
  if (!names) names = "";
  if (read_head(buf, n, &cap, &ns, &ne, err) < 0) {
    err_prefix(err, "history");
    return NULL;
  }
  History *h = history_new(cap);
  if (!h) {
    err_set(err, "history: out of memory");
    return NULL;
  }
  h->events_dropped = (long)buf[5];
  if (unpack_body(h, buf, n, names, ns, ne, err) < 0) {
    err_prefix(err, "history");
    history_free(h);
    return NULL;
  }
  return h;
}
