/*
** test_history.c -- bounded history against a brute-force pass over every
** point, its exports parsed back, and packed histories, honest and hostile.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/rng.h"
#include "lab/history.h"
#include "tap.h"

#define N_POINTS 1000000

/* ------------------------------------------------------------ downsampling */

/* Each bucket against the raw points it covers; returns the failures. */
static int check_buckets(const HistBucket *b, int n, const long *steps, const double *vals, long total,
                         long *points_seen) {
  int bad = 0;
  long at = 0;
  for (int i = 0; i < n; i++) {
    long c = b[i].count;
    double mn = INFINITY, mx = -INFINITY, sum = 0;
    for (long j = at; j < at + c; j++) {
      if (vals[j] < mn) mn = vals[j];
      if (vals[j] > mx) mx = vals[j];
      sum += vals[j];
    }
    double mean = sum / c;
    if (at + c > total || b[i].step_first != steps[at] || b[i].step_last != steps[at + c - 1] ||
        b[i].first != vals[at] || b[i].last != vals[at + c - 1] || b[i].min != mn || b[i].max != mx ||
        fabs(b[i].mean - mean) > 1e-9 * (1 + fabs(mean))) {
      if (bad++ < 3)
        diag("bucket %d: steps %ld-%ld count %ld min %.17g max %.17g mean %.17g (brute force %.17g %.17g %.17g)", i,
             b[i].step_first, b[i].step_last, c, b[i].min, b[i].max, b[i].mean, mn, mx, mean);
    }
    at += c;
  }
  *points_seen = at;
  return bad;
}

static void test_million(int cap) {
  long *steps = malloc(sizeof(long) * N_POINTS);
  double *vals = malloc(sizeof(double) * N_POINTS);
  Rng r;
  rng_seed(&r, 1234);
  History *h = history_new(cap);
  double x = 0;
  long step = 0;
  int over_cap = 0, moved = 0, failed = 0;
  size_t bytes = 0;
  const HistBucket *first_ptr = NULL;
  for (long i = 0; i < N_POINTS; i++) {
    x += rng_normal(&r) + (rng_below(&r, 1000) == 0 ? 50 * rng_normal(&r) : 0);  /* walk with rare jumps */
    step += (long)rng_below(&r, 3);  /* repeats and gaps */
    steps[i] = step, vals[i] = x;
    failed += history_push(h, "walk", step, x) != 0;
    int n;
    const HistBucket *b = history_series(h, "walk", &n);
    over_cap += n > cap;
    if (i == 0) first_ptr = b, bytes = history_bytes(h);
    moved += b != first_ptr || history_bytes(h) != bytes;
  }
  int n;
  const HistBucket *b = history_series(h, "walk", &n);
  long seen;
  ok(failed == 0, "cap %d: %d points pushed", cap, N_POINTS);
  ok(over_cap == 0 && n <= cap && n > cap / 2, "cap %d: never more than %d buckets (now %d)", cap, cap, n);
  ok(moved == 0, "cap %d: memory fixed at %zu bytes, buckets never moved", cap, bytes);
  ok(check_buckets(b, n, steps, vals, N_POINTS, &seen) == 0 && seen == N_POINTS,
     "cap %d: every bucket's steps, first, last, min, max exact and mean to 1e-9 (brute force)", cap);
  long span = b[0].count, uneven = 0;
  for (int i = 0; i < n - 1; i++) uneven += b[i].count != span;
  ok(uneven == 0 && b[n - 1].count <= span && (span & (span - 1)) == 0,
     "cap %d: full buckets all span %ld points, the last %ld", cap, span, b[n - 1].count);
  double mn = INFINITY, mx = -INFINITY, bmn = INFINITY, bmx = -INFINITY;
  for (long i = 0; i < N_POINTS; i++) mn = fmin(mn, vals[i]), mx = fmax(mx, vals[i]);
  for (int i = 0; i < n; i++) bmn = fmin(bmn, b[i].min), bmx = fmax(bmx, b[i].max);
  ok(bmn == mn && bmx == mx && b[0].first == vals[0] && b[n - 1].last == vals[N_POINTS - 1],
     "cap %d: global min %.3f, max %.3f, first and last survive exactly", cap, mn, mx);
  history_free(h);
  free(steps);
  free(vals);
}

static void test_small_merges(void) {
  History *h = history_new(4);
  for (int i = 0; i < 5; i++) history_push(h, "s", 10 * i, i);
  int n;
  const HistBucket *b = history_series(h, "s", &n);
  ok(n == 3 && b[0].count == 2 && b[1].count == 2 && b[2].count == 1, "cap 4, 5 points: buckets of 2, 2, 1");
  ok(b[0].step_first == 0 && b[0].step_last == 10 && b[1].first == 2 && b[1].last == 3 && b[1].mean == 2.5 &&
         b[2].step_first == 40,
     "merged buckets keep their ends and mean");
  for (int i = 5; i < 9; i++) history_push(h, "s", 10 * i, i);
  b = history_series(h, "s", &n);
  ok(n == 3 && b[0].count == 4 && b[1].count == 4 && b[2].count == 1 && b[0].mean == 1.5 && b[1].min == 4,
     "9 points: buckets of 4, 4, 1");
  history_free(h);
}

static void test_rules(void) {
  History *h = history_new(0);
  int n;
  ok(h != NULL, "cap 0 means the default");
  ok(!history_new(3) && !history_new(-2) && !history_new(1) && !history_new(HISTORY_MAX_CAP + 2),
     "odd, negative or huge caps refused");
  ok(history_push(h, "a", 5, 1) == 0 && history_push(h, "a", 5, 2) == 0, "equal steps allowed");
  ok(history_push(h, "a", 4, 3) < 0, "a decreasing step is refused");
  ok(history_push(h, "b", -1, 3) < 0 && history_push(h, "b", HISTORY_MAX_STEP + 1, 3) < 0,
     "steps outside 0..2^53 refused");
  char name[80];
  memset(name, 'x', 63), name[63] = '\0';
  ok(history_push(h, name, 0, 1) == 0, "a 63-byte name is fine");
  memset(name, 'x', 64), name[64] = '\0';
  ok(history_push(h, name, 0, 1) < 0, "a 64-byte name is refused");
  ok(history_push(h, "", 0, 1) < 0 && history_push(h, "a\nb", 0, 1) < 0 && history_push(h, "\xff", 0, 1) < 0 &&
         history_push(h, NULL, 0, 1) < 0,
     "empty, newline, invalid UTF-8 and NULL names refused");
  ok(history_push(h, "kl.\xc3\xa9", 0, 1) == 0, "a UTF-8 name is fine");
  ok(history_n_series(h) == 3 && !history_series_name(h, 3) && !history_series_name(h, -1) &&
         strcmp(history_series_name(h, 0), "a") == 0,
     "three series, looked up by index");
  ok(history_series(h, "nope", &n) == NULL && n == 0, "absent series: NULL, 0");
  int refused = 0;
  for (int i = 0; i < HISTORY_MAX_SERIES + 5; i++) {
    snprintf(name, sizeof name, "s%d", i);
    refused += history_push(h, name, 0, i) < 0;
  }
  ok(history_n_series(h) == HISTORY_MAX_SERIES && refused == 8, "at most %d series (%d refused)",
     HISTORY_MAX_SERIES, refused);
  history_free(h);

  h = history_new(8);
  history_push(h, "x", 0, NAN);
  history_push(h, "x", 1, 2);
  history_push(h, "x", 2, -1);
  const HistBucket *b = history_series(h, "x", &n);
  ok(n == 3, "NaN is kept as a point");
  history_push(h, "y", 0, 1);
  history_push(h, "y", 1, NAN);
  for (int i = 0; i < 7; i++) history_push(h, "y", 2 + i, 3);  /* merges: 9 points in cap 8 */
  b = history_series(h, "y", &n);
  ok(b[0].min == 1 && b[0].max == 1 && isnan(b[0].mean) && isnan(b[0].last), "min and max skip NaN, mean carries it");
  history_free(h);
  history_free(NULL);
}

static void test_events(void) {
  History *h = history_new(16);
  char text[300];
  for (int i = 0; i < 600; i++) {
    snprintf(text, sizeof text, "e%d", i);
    history_event(h, i, text);
  }
  int n;
  const HistEvent *e = history_events(h, &n);
  ok(n == HISTORY_MAX_EVENTS && history_events_dropped(h) == 600 - HISTORY_MAX_EVENTS,
     "600 events: %d kept, %ld counted as dropped", n, history_events_dropped(h));
  ok(strcmp(e[0].text, "e88") == 0 && e[0].step == 88 && strcmp(e[n - 1].text, "e599") == 0,
     "the oldest go first, the order stays");
  history_free(h);

  h = history_new(16);
  text[0] = '\0';
  for (int i = 0; i < 100; i++) strcat(text, "\xc3\xa9");  /* 200 bytes of 'e acute' */
  history_event(h, 1, text);
  history_event(h, 2, "tie\nuntie\t!");
  history_event(h, 3, "bad \xff byte");
  history_event(h, -5, NULL);
  e = history_events(h, &n);
  ok(strlen(e[0].text) == 94 && memcmp(e[0].text, text, 94) == 0, "long text cut to 94 bytes, between characters");
  ok(strcmp(e[1].text, "tie untie !") == 0 && strcmp(e[2].text, "bad ? byte") == 0,
     "control characters become spaces, bad bytes '?'");
  ok(e[3].step == 0 && e[3].text[0] == '\0', "NULL text and negative step are tamed");
  history_free(h);
}

/* ------------------------------------------------------------ exports */

/* A history with awkward names, values and events. */
static History *sample(void) {
  History *h = history_new(8);
  for (int i = 0; i < 20; i++) {
    history_push(h, "loss", i, 5.0 / (i + 1));
    if (i % 3 == 0) history_push(h, "a,b \"c\"", i, i == 9 ? INFINITY : i * 0.1);
  }
  history_push(h, "nan", 4, NAN);
  history_event(h, 0, "created");
  history_event(h, 7, "in_scale=2, \"tied\"");
  return h;
}

static int total_buckets(const History *h) {
  int t = 0, n;
  for (int i = 0; i < history_n_series(h); i++) history_series(h, history_series_name(h, i), &n), t += n;
  return t;
}

/* Split a CSV line into at most 'max' fields (quotes honoured); returns the count. */
static int csv_split(char *line, char **field, int max) {
  int n = 0;
  char *p = line;
  while (n < max) {
    char *out = p;
    field[n++] = p;
    if (*p == '"') {
      char *in = p + 1;
      for (;;) {
        if (*in == '"' && in[1] == '"') *out++ = '"', in += 2;
        else if (*in == '"') { in++; break; }
        else if (!*in) return -1;
        else *out++ = *in++;
      }
      p = in;
    } else {
      while (*p && *p != ',') p++;
      out = p;
    }
    if (*p == ',') {
      *out = '\0';
      p++;
    } else {
      *out = '\0';
      return *p ? -1 : n;
    }
  }
  return -1;
}

static void test_csv(void) {
  History *h = sample();
  char *buf;
  size_t len;
  FILE *f = open_memstream(&buf, &len);
  Err err;
  ok(history_write_csv(h, f, &err) == 0, "CSV written");
  fclose(f);
  char *save, *line = strtok_r(buf, "\n", &save);
  int lines = 0, rows = 0, header = 0, bad_rows = 0, comments = 0;
  int loss_rows = 0, awkward_ok = 0, nan_ok = 0;
  for (; line; line = strtok_r(NULL, "\n", &save), lines++) {
    if (line[0] == '#') {
      comments++;
      continue;
    }
    if (!header) {
      header = lines == 0 && strcmp(line, "series,step_first,step_last,first,last,min,mean,max,count") == 0;
      if (!header) bad_rows++;
      continue;
    }
    char *fl[12];
    int nf = csv_split(line, fl, 12);
    rows++;
    if (nf != 9) {
      bad_rows++;
      continue;
    }
    int n;
    const HistBucket *b = history_series(h, fl[0], &n);
    if (!b) {
      bad_rows++;
      continue;
    }
    if (strcmp(fl[0], "loss") == 0) {
      const HistBucket *k = &b[loss_rows++];
      if (atol(fl[1]) != k->step_first || atol(fl[2]) != k->step_last || strtod(fl[3], NULL) != k->first ||
          strtod(fl[4], NULL) != k->last || strtod(fl[5], NULL) != k->min || strtod(fl[6], NULL) != k->mean ||
          strtod(fl[7], NULL) != k->max || atol(fl[8]) != k->count)
        bad_rows++;
    }
    awkward_ok += strcmp(fl[0], "a,b \"c\"") == 0 && atol(fl[1]) == 9 && strcmp(fl[3], "inf") == 0;
    nan_ok += strcmp(fl[0], "nan") == 0 && strcmp(fl[3], "nan") == 0 && strcmp(fl[6], "nan") == 0;
  }
  ok(header && comments == 0 && bad_rows == 0, "the column header first, then only data rows");
  ok(rows == total_buckets(h), "%d data rows, one per bucket", rows);
  ok(loss_rows > 0 && awkward_ok == 1 && nan_ok == 1, "values read back exactly; quoted names and inf/nan parse");
  free(buf);
  history_free(h);
}

/* What 'write' makes of 'h', as a malloc'd string. */
static char *written(const History *h, int (*write)(const History *, FILE *, Err *), const char *what) {
  char *buf;
  size_t len;
  FILE *f = open_memstream(&buf, &len);
  Err err;
  ok(write(h, f, &err) == 0, "%s written", what);
  fclose(f);
  return buf;
}

/* The wide form: a row per step some bucket ends at, a cell per series. */
static void test_csv_wide(void) {
  History *h = sample();
  char *buf = written(h, history_write_csv_wide, "wide CSV");
  char *save, *line = strtok_r(buf, "\n", &save);
  ok(line && strcmp(line, "step,loss,\"a,b \"\"c\"\"\",nan") == 0, "header: step and each series, quoted: %s",
     line ? line : "");
  int rows = 0, bad = 0, cells = 0;
  long last_step = -1;
  while ((line = strtok_r(NULL, "\n", &save))) {
    char *fl[8];
    int nf = csv_split(line, fl, 8);
    rows++;
    long step = atol(fl[0]);
    if (nf != 4 || step <= last_step) {
      bad++;
      continue;
    }
    last_step = step;
    for (int i = 0; i < 3; i++) {
      int n, at = -1;
      const HistBucket *b = history_series(h, history_series_name(h, i), &n);
      for (int j = 0; j < n; j++)
        if (b[j].step_last == step) at = j;
      if (at < 0 ? fl[i + 1][0] != '\0' : fl[i + 1][0] == '\0') bad++;
      else if (at >= 0) {
        char want[64];
        snprintf(want, sizeof want, "%.17g", b[at].last);
        double got = strtod(fl[i + 1], NULL);
        cells++;
        if (!(got == b[at].last || (isnan(got) && isnan(b[at].last)))) bad++, diag("step %ld: %s, want %s", step, fl[i + 1], want);
      }
    }
  }
  int distinct = 0;
  for (long s = 0; s < 20; s++) {
    int seen = 0;
    for (int i = 0; i < 3; i++) {
      int n;
      const HistBucket *b = history_series(h, history_series_name(h, i), &n);
      for (int j = 0; j < n; j++) seen |= b[j].step_last == s;
    }
    distinct += seen;
  }
  ok(bad == 0 && rows == distinct, "%d rows, one per recorded step (%d), each cell its bucket's last value or empty",
     rows, distinct);
  ok(cells == total_buckets(h), "%d cells hold a value, one per bucket", cells);
  free(buf);
  history_free(h);
}

static void test_events_csv(void) {
  History *h = sample();
  char *buf = written(h, history_write_events_csv, "events CSV");
  ok(strcmp(buf, "step,text\n0,created\n7,\"in_scale=2, \"\"tied\"\"\"\n") == 0, "events as step,text, quoted as CSV");
  free(buf);
  history_event(h, 8, "two\nlines\r");   /* an event text read back from a checkpoint may hold anything */
  buf = written(h, history_write_events_csv, "events CSV");
  int lines = 0;
  for (const char *c = buf; *c; c++) lines += *c == '\n';
  ok(lines == 4 && strstr(buf, "\n8,") != NULL, "a line break inside a text makes no new row (%d lines)", lines);
  free(buf);
  history_free(h);
}

/* The JSON lines byte for byte, for a history small enough to spell out:
** whole numbers without a fraction, each number as short as it reads back,
** null for what JSON cannot hold, the strings escaped. */
static void test_jsonl_bytes(void) {
  History *h = history_new(8);
  history_push(h, "loss", 1, 2.0);
  history_push(h, "loss", 2, 0.1);
  history_push(h, "s\"q", 3, 5.567857265472412);
  history_push(h, "s\"q", 4, NAN);
  history_event(h, 2, "tie \"now\"");
  char *buf;
  size_t len;
  FILE *f = open_memstream(&buf, &len);
  Err err;
  int rc = history_write_jsonl(h, f, "r1", "dim=8", &err);
  fclose(f);
  const char *want =
      "{\"type\":\"header\",\"format\":\"tielab-history\",\"version\":1,\"run\":\"r1\",\"settings\":\"dim=8\","
      "\"cap\":8,\"events_dropped\":0,\"series\":[\"loss\",\"s\\\"q\"]}\n"
      "{\"type\":\"bucket\",\"series\":\"loss\",\"step_first\":1,\"step_last\":1,\"first\":2,\"last\":2,\"min\":2,"
      "\"mean\":2,\"max\":2,\"count\":1}\n"
      "{\"type\":\"bucket\",\"series\":\"loss\",\"step_first\":2,\"step_last\":2,\"first\":0.1,\"last\":0.1,"
      "\"min\":0.1,\"mean\":0.1,\"max\":0.1,\"count\":1}\n"
      "{\"type\":\"bucket\",\"series\":\"s\\\"q\",\"step_first\":3,\"step_last\":3,\"first\":5.567857265472412,"
      "\"last\":5.567857265472412,\"min\":5.567857265472412,\"mean\":5.567857265472412,"
      "\"max\":5.567857265472412,\"count\":1}\n"
      "{\"type\":\"bucket\",\"series\":\"s\\\"q\",\"step_first\":4,\"step_last\":4,\"first\":null,\"last\":null,"
      "\"min\":null,\"mean\":null,\"max\":null,\"count\":1}\n"
      "{\"type\":\"event\",\"step\":2,\"text\":\"tie \\\"now\\\"\"}\n";
  int same = rc == 0 && strcmp(buf, want) == 0;
  ok(same, "the JSON lines byte for byte (%zu bytes)", len);
  for (char *line = same ? NULL : strtok(buf, "\n"); line; line = strtok(NULL, "\n")) printf("#   %s\n", line);
  free(buf);
  history_free(h);
}

static void test_jsonl(void) {
  History *h = sample();
  char *buf;
  size_t len;
  FILE *f = open_memstream(&buf, &len);
  Err err;
  ok(history_write_jsonl(h, f, "run \"q\"\n\xff", "{\"tie\":\"tied\"}", &err) == 0, "JSONL written");
  fclose(f);
  char *save, *line = strtok_r(buf, "\n", &save);
  int lines = 0, parsed = 0, buckets = 0, events = 0, header_ok = 0, exact = 0, nulls = 0;
  for (; line; line = strtok_r(NULL, "\n", &save), lines++) {
    json_error_t je;
    json_t *o = json_loads(line, 0, &je);
    if (!o) {
      diag("line %d does not parse: %s", lines, je.text);
      continue;
    }
    parsed++;
    const char *type = json_string_value(json_object_get(o, "type"));
    if (lines == 0 && type && strcmp(type, "header") == 0) {
      const char *run = json_string_value(json_object_get(o, "run"));
      const char *set = json_string_value(json_object_get(o, "settings"));
      json_t *series = json_object_get(o, "series");
      header_ok = run && strcmp(run, "run \"q\"\n\xef\xbf\xbd") == 0 && set && strcmp(set, "{\"tie\":\"tied\"}") == 0 &&
                  json_array_size(series) == (size_t)history_n_series(h) &&
                  json_integer_value(json_object_get(o, "cap")) == 8;
    } else if (type && strcmp(type, "bucket") == 0) {
      int n;
      const char *name = json_string_value(json_object_get(o, "series"));
      const HistBucket *b = history_series(h, name ? name : "", &n);
      long sf = (long)json_integer_value(json_object_get(o, "step_first"));
      for (int i = 0; b && i < n; i++)
        if (b[i].step_first == sf && isfinite(b[i].mean))
          exact += json_number_value(json_object_get(o, "mean")) == b[i].mean;
      nulls += json_is_null(json_object_get(o, "first"));
      buckets++;
    } else if (type && strcmp(type, "event") == 0) {
      events++;
    }
    json_decref(o);
  }
  ok(parsed == lines, "every line parses as JSON (%d)", lines);
  ok(header_ok, "the header object names run (escaped, bad byte replaced), settings, series and cap");
  ok(buckets == total_buckets(h) && events == 2, "%d bucket lines and %d event lines", buckets, events);
  ok(exact == buckets - 2 && nulls == 2, "finite means read back exactly (%d); NaN and inf written as null", exact);
  free(buf);
  history_free(h);
}

/* ------------------------------------------------------------ pack */

static int same_history(const History *a, const History *b) {
  if (history_n_series(a) != history_n_series(b) || history_events_dropped(a) != history_events_dropped(b))
    return 0;
  for (int i = 0; i < history_n_series(a); i++) {
    const char *name = history_series_name(a, i);
    int na, nb;
    const HistBucket *ba = history_series(a, name, &na), *bb = history_series(b, name, &nb);
    if (strcmp(name, history_series_name(b, i)) != 0 || na != nb || memcmp(ba, bb, sizeof *ba * na) != 0) return 0;
  }
  int ea, eb;
  const HistEvent *xa = history_events(a, &ea), *xb = history_events(b, &eb);
  if (ea != eb) return 0;
  for (int i = 0; i < ea; i++)
    if (xa[i].step != xb[i].step || strcmp(xa[i].text, xb[i].text) != 0) return 0;
  return 1;
}

static History *unpack_expect_fail(const double *buf, size_t n, const char *names, const char *what) {
  Err err = {{0}};
  History *h = history_unpack(buf, n, names, &err);
  ok(h == NULL && err.msg[0], "hostile: %s -> %s", what, err.msg);
  history_free(h);
  return NULL;
}

static void test_pack(void) {
  History *h = sample(), *u;
  for (int i = 0; i < 40; i++) history_event(h, 30 + i, "");
  history_push(h, "long", 0, 1);
  for (int i = 1; i < 100; i++) history_push(h, "long", i, i);
  double *buf, *buf2;
  size_t n, n2;
  char *names, *names2;
  Err err;
  ok(history_pack(h, &buf, &n, &names, &err) == 0, "packed into %zu doubles", n);
  ok((u = history_unpack(buf, n, names, &err)) != NULL, "unpacked");
  ok(u && same_history(h, u), "round trip keeps every bucket, name and event");
  ok(u && history_pack(u, &buf2, &n2, &names2, &err) == 0 && n2 == n && memcmp(buf, buf2, n * sizeof *buf) == 0 &&
         strcmp(names, names2) == 0,
     "packing again gives the same bytes");
  ok(u && history_push(u, "long", 100, 100) == 0 && history_push(u, "long", 99, 1) < 0,
     "an unpacked history keeps growing and keeps its rules");
  free(buf2), free(names2);
  history_free(u);

  History *empty = history_new(2);
  ok(history_pack(empty, &buf2, &n2, &names2, &err) == 0 && (u = history_unpack(buf2, n2, names2, &err)) != NULL &&
         history_n_series(u) == 0 && names2[0] == '\0',
     "an empty history round-trips");
  history_free(u), history_free(empty), free(buf2), free(names2);

  /* Hand-made hostile packs. */
  double *b = malloc(sizeof(double) * (n + 1));
  int nser = history_n_series(h);
  size_t s0 = 6;  /* first series: "loss", n at s0, span at s0+1, buckets after */
#define MUTATE(idx, val, what)                         \
  do {                                                 \
    memcpy(b, buf, sizeof(double) * n);                \
    b[idx] = (val);                                    \
    unpack_expect_fail(b, n, names, what);             \
  } while (0)
  unpack_expect_fail(NULL, n, names, "NULL buffer");
  unpack_expect_fail(buf, 5, names, "shorter than a header");
  unpack_expect_fail(buf, n - 1, names, "truncated by one value");
  memcpy(b, buf, sizeof(double) * n), b[n] = 0;
  unpack_expect_fail(b, n + 1, names, "one value too many");
  MUTATE(0, 1.0, "wrong magic");
  MUTATE(1, 2.0, "wrong version");
  MUTATE(2, 7.0, "odd cap");
  MUTATE(2, 0.0, "zero cap");
  MUTATE(2, 1e12, "huge cap");
  MUTATE(3, 257.0, "too many series");
  MUTATE(3, nser + 1.0, "one series more than there are");
  MUTATE(3, 2.5, "fractional series count");
  MUTATE(3, NAN, "NaN series count");
  MUTATE(4, 513.0, "too many events");
  MUTATE(5, -1.0, "negative dropped count");
  MUTATE(5, INFINITY, "infinite dropped count");
  MUTATE(s0, 9.0, "more buckets than cap");
  MUTATE(s0, -1.0, "negative bucket count");
  MUTATE(s0 + 1, 3.0, "span not a power of two");
  MUTATE(s0 + 1, 0.0, "zero span");
  MUTATE(s0 + 2, -4.0, "negative step");
  MUTATE(s0 + 2, 1e300, "step beyond 2^53");
  MUTATE(s0 + 3, -1.0, "step_last before step_first");
  MUTATE(s0 + 2 + 8, 0.0, "a bucket starting before the previous one ends");
  MUTATE(s0 + 2 + 7, 1e9, "bucket count above span");
  MUTATE(s0 + 2 + 7, 0.0, "empty bucket");
  MUTATE(s0 + 2 + 7, 1.5, "fractional bucket count");
  MUTATE(s0 + 2 + 4, 1e9, "min above max");
  MUTATE(s0 + 2 + 2, -1e9, "first below min");
  unpack_expect_fail(buf, n, NULL, "no names");
  unpack_expect_fail(buf, n, "loss\n", "names cut short");
  size_t nl = strlen(names);
  char *bad = malloc(nl + 100);
  snprintf(bad, nl + 100, "%sextra\n", names);
  unpack_expect_fail(buf, n, bad, "an extra name line");
  memcpy(bad, names, nl + 1);
  memcpy(bad, "long", 4);  /* "loss" renamed to a later series' name */
  unpack_expect_fail(buf, n, bad, "a duplicated series name");
  memcpy(bad, names, nl + 1), bad[1] = '\x01';
  unpack_expect_fail(buf, n, bad, "a control character in a name");
  memcpy(bad, names, nl + 1), bad[nl - 1] = 'x';
  unpack_expect_fail(buf, n, bad, "the last line not ended");
  free(bad);

  /* Random damage: must never crash; what it accepts must be sane. */
  Rng r;
  rng_seed(&r, 77);
  static const double nasty[] = {0, -1, 1, 2, 0.5, 1e300, -1e300, NAN, INFINITY, -INFINITY, 9007199254740993.0,
                                 4294967296.0, 1024, 8, 7, 3};
  int accepted = 0, sane = 1;
  for (int it = 0; it < 3000; it++) {
    memcpy(b, buf, sizeof(double) * n);
    int hits = 1 + (int)rng_below(&r, 3);
    for (int k = 0; k < hits; k++) {
      size_t at = rng_below(&r, n);
      b[at] = rng_below(&r, 2) ? nasty[rng_below(&r, sizeof nasty / sizeof nasty[0])] : b[at] + rng_normal(&r);
    }
    size_t len = rng_below(&r, 8) == 0 ? rng_below(&r, n + 1) : n;
    char *nm = strdup(names);
    if (rng_below(&r, 4) == 0) nm[rng_below(&r, nl)] = (char)(1 + rng_below(&r, 255));
    History *x = history_unpack(b, len, nm, &err);
    if (x) {
      accepted++;
      for (int i = 0; i < history_n_series(x); i++) {
        int bn;
        const HistBucket *bb = history_series(x, history_series_name(x, i), &bn);
        sane &= bn <= 8;
        for (int j = 0; j < bn; j++) sane &= bb[j].count >= 1 && bb[j].step_first <= bb[j].step_last;
      }
      sane &= history_push(x, "loss", HISTORY_MAX_STEP, 1) == 0;
    }
    history_free(x);
    free(nm);
  }
  ok(sane, "3000 damaged packs: no crash, %d accepted, all of them sane", accepted);
  free(b);
  free(buf);
  free(names);
  history_free(h);
}

/* ------------------------------------------------------------ copies */

static void test_copy(void) {
  History *a = sample(), *big = history_new(8), *other = history_new(16);
  for (int i = 0; i < 30; i++) {
    char name[16];
    snprintf(name, sizeof name, "s%d", i);
    for (int j = 0; j < 40; j++) history_push(big, name, j, j);
  }
  History *c = history_clone(a);
  ok(c && same_history(a, c), "clone equals the original");
  history_push(a, "loss", 100, -7);
  history_event(a, 100, "later");
  ok(!same_history(a, c), "the clone is deep: changing the original leaves it");
  ok(history_copy(c, a) == 0 && same_history(a, c), "copy brings it up to date");
  size_t before = history_bytes(big);
  ok(history_copy(big, a) == 0 && same_history(a, big) && history_bytes(big) == before,
     "copying a smaller history reuses memory (%zu bytes)", before);
  ok(history_copy(big, a) == 0 && history_bytes(big) == before, "and copying again allocates nothing new");
  ok(history_copy(other, a) == 0 && same_history(a, other), "copy into a history of another cap");
  int n;
  history_series(other, "loss", &n);
  ok(history_push(other, "loss", 200, 1) == 0 && history_copy(other, other) == 0, "the copy works on, self-copy is a no-op");
  history_free(a), history_free(big), history_free(other), history_free(c);
}

int main(void) {
  test_million(HISTORY_DEFAULT_CAP);
  test_million(6);
  test_small_merges();
  test_rules();
  test_events();
  test_csv();
  test_csv_wide();
  test_events_csv();
  test_jsonl();
  test_jsonl_bytes();
  test_pack();
  test_copy();
  return tap_done();
}
