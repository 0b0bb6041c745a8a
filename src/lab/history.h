/*
** history.h -- every series of a run from step 0, in bounded memory.
**
** A series is a list of buckets, each summarising consecutive points:
** first and last step, min, mean, max, first and last value. A series holds
** at most 'cap' buckets (cap even); when full, neighbouring buckets are
** merged pairwise and each bucket from then on spans twice as many points.
** So min, max, first and last survive exactly, the mean is exact per bucket,
** and memory is fixed whatever the run's length. Events (settings changes)
** are kept in their own list (bounded too: the oldest are merged into a
** count when the list is full).
*/
#ifndef TIELAB_HISTORY_H
#define TIELAB_HISTORY_H

#include <stddef.h>
#include <stdio.h>

#include "base/err.h"

typedef struct HistBucket {
  long step_first, step_last;
  double first, last, min, max, mean;
  long count;
} HistBucket;

typedef struct HistEvent {
  long step;
  char text[96];
} HistEvent;

typedef struct History History;

#define HISTORY_DEFAULT_CAP 1024
#define HISTORY_MAX_CAP (1 << 20)
#define HISTORY_MAX_EVENTS 512
#define HISTORY_MAX_STEP (1L << 53)  /* steps travel as doubles in checkpoints */

/* 'cap' 0 means HISTORY_DEFAULT_CAP; NULL when cap is odd, below 2, above
** HISTORY_MAX_CAP, or memory is short. */
History *history_new(int cap);
void history_free(History *h);

/* Make 'dst' a deep copy of 'src', reusing dst's bucket arrays where it can
** (the UI copies the histories of a snapshot). On failure (-1, out of
** memory) dst is left empty. */
int history_copy(History *dst, const History *src);
History *history_clone(const History *src);

/* Bytes held, which stays fixed whatever the number of points pushed. */
size_t history_bytes(const History *h);

/* Append a point to 'series' (created on first use; names up to 63 bytes of
** UTF-8 with no control characters). Steps must not decrease within a series
** and lie in 0..HISTORY_MAX_STEP. Returns -1 when out of memory, when too
** many series exist (HISTORY_MAX_SERIES), on a bad name or a bad step; the
** point is then dropped. Values may be NaN or infinite: min and max skip
** NaN, the mean carries it. */
#define HISTORY_MAX_SERIES 2048   /* 33 run series + 4 per layer position up to 256 layers */

/* Bytes a history of 'cap' buckets per series holds with 'n_series' series. */
size_t history_memory_bytes(int cap, int n_series);
int history_push(History *h, const char *series, long step, double value);

/* Record a settings change at 'step'; the text is cut to 95 bytes (on a
** character boundary) and control characters become spaces. Events that
** are no change of training begin with these words. */
void history_event(History *h, long step, const char *text);
#define HISTORY_EVENT_CREATED "created"
#define HISTORY_EVENT_LENS_FIT "lens fitted"
#define HISTORY_EVENT_PHASE "phase"   /* "phase 2: <its caption>", a script's lab.phase */

int history_n_series(const History *h);
const char *history_series_name(const History *h, int i);
/* Buckets of a series (NULL and 0 when absent); valid until the next push. */
const HistBucket *history_series(const History *h, const char *series, int *n);
const HistEvent *history_events(const History *h, int *n);
long history_events_dropped(const History *h);

/* Export for tools, each a plain CSV with one header row: the long form
** (series,step_first,step_last,first,last,min,mean,max,count, a row per
** bucket), the wide form (step, then a column per series, a row per step
** some bucket ends at, holding that bucket's last value, empty elsewhere)
** and the events (step,text). NaN and infinities are written nan, inf and
** -inf. JSONL holds it all in one file: a header object naming 'run' and
** 'settings', then one object per bucket and per event. */
int history_write_csv(const History *h, FILE *f, Err *err);
int history_write_csv_wide(const History *h, FILE *f, Err *err);
int history_write_events_csv(const History *h, FILE *f, Err *err);
int history_write_jsonl(const History *h, FILE *f, const char *run, const char *settings, Err *err);

/* Flatten to and from plain arrays, for checkpoints: 'history_pack' returns
** a malloc'd buffer of doubles and its length, 'history_unpack' checks it
** thoroughly (a hostile checkpoint must not crash). Names travel separately
** as a malloc'd string: each series name, then each event text, each ended
** by a newline. */
int history_pack(const History *h, double **out, size_t *n, char **names, Err *err);
History *history_unpack(const double *buf, size_t n, const char *names, Err *err);

#endif
