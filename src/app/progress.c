/*
** progress.c -- the progress line of long work (see progress.h).
**
** One mutex covers the state and every write to the terminal, so that the
** timer thread's redraw never lands in the middle of the program's own
** output: that output goes through progress_write, which clears the line
** first. The line is drawn only where a line begins (a script that wrote
** half a line keeps it until it ends it).
*/
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "app/progress.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/sig.h"
#include "ui/width.h"

#define PROGRESS_REDRAW_SECONDS 0.1   /* the fastest the line changes as work advances */
#define PROGRESS_TIMER_SECONDS 1.0    /* the slowest: the timer's redraw */
#define PROGRESS_PLAIN_SECONDS 30.0   /* plain lines when the total is unknown */
#define PROGRESS_PLAIN_PARTS 10       /* plain lines over a known total */

struct Progress {
  FILE *f;
  int tty, plain;
  pthread_mutex_t mu;
  pthread_cond_t wake;
  pthread_t timer;
  int has_timer, quit;
  int active;            /* between progress_start and progress_finish */
  long total, done;
  char label[512], note[256];
  double start, last_draw, last_plain;
  int parts_shown;       /* tenths of the total said in plain lines */
  int shown;             /* the line is on the terminal */
  int at_line_start;     /* the program's last output ended a line */
};

int progress_columns(int fd) {
  struct winsize ws;
  if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  const char *env = getenv("COLUMNS");
  char *end;
  long n = env ? strtol(env, &end, 10) : 0;
  if (env && *env && !*end && n > 0 && n < 10000) return (int)n;
  return 80;
}

static void format_duration(double seconds, char *buf, size_t cap) {
  long s = seconds > 0 ? (long)(seconds + 0.5) : 0;
  if (s >= 3600) snprintf(buf, cap, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else snprintf(buf, cap, "%ld:%02ld", s / 60, s % 60);
}

/* The line's text, whole: the count, percent, elapsed, ETA, label, note. */
static void format_line(const Progress *p, char *buf, size_t cap) {
  char elapsed[32], eta[32];
  double t = clock_seconds() - p->start;
  format_duration(t, elapsed, sizeof elapsed);
  const char *sep = p->label[0] && p->note[0] ? "  " : "";
  if (p->total <= 0) {
    snprintf(buf, cap, "%s%s%s  elapsed %s", p->label, sep, p->note, elapsed);
    return;
  }
  long done = p->done < p->total ? p->done : p->total;
  if (done > 0) format_duration(t * (double)(p->total - done) / (double)done, eta, sizeof eta);
  else snprintf(eta, sizeof eta, "-");
  snprintf(buf, cap, "%ld/%ld  %3d%%  elapsed %s  ETA %s  %s%s%s", done, p->total,
           (int)(100.0 * (double)done / (double)p->total), elapsed, eta, p->label, sep, p->note);
}

/* Cut 's' to 'cols' columns of the terminal: a wide character (CJK, most
** emoji) takes two, and none is split. */
static void fit(char *s, int cols) { s[width_prefix(s, strlen(s), cols)] = '\0'; }

/* With the lock held. The last column stays free: a terminal that wraps
** there would push the line down at every redraw. */
static void draw(Progress *p) {
  if (!p->tty || !p->active || !p->at_line_start) return;
  char line[1024];
  format_line(p, line, sizeof line);
  fit(line, progress_columns(fileno(p->f)) - 1);
  fprintf(p->f, "\r\033[K%s", line);
  fflush(p->f);
  p->shown = 1;
  p->last_draw = clock_seconds();
}

static void clear(Progress *p) {
  if (!p->shown) return;
  fputs("\r\033[K", p->f);
  fflush(p->f);
  p->shown = 0;
}

static void plain_line(Progress *p) {
  char line[1024];
  format_line(p, line, sizeof line);
  fprintf(p->f, "tielab: %s\n", line);
  fflush(p->f);
  p->last_plain = clock_seconds();
}

static void *timer_main(void *arg) {
  Progress *p = arg;
  pthread_mutex_lock(&p->mu);
  while (!p->quit) {
    struct timespec ts = clock_deadline_mono(PROGRESS_TIMER_SECONDS);   /* 'wake' waits on it */
    pthread_cond_timedwait(&p->wake, &p->mu, &ts);
    if (!p->quit) draw(p);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

/* The timer takes no signal: they go to the thread that does the work. */
static int start_timer(Progress *p) {
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  int rc = pthread_cond_init(&p->wake, &ca);
  pthread_condattr_destroy(&ca);
  if (rc != 0) return -1;
  rc = sig_thread_start(&p->timer, timer_main, p);
  if (rc != 0) {
    pthread_cond_destroy(&p->wake);
    return -1;
  }
  p->has_timer = 1;
  return 0;
}

Progress *progress_new(FILE *f, int plain) {
  Progress *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->f = f;
  p->tty = isatty(fileno(f));
  p->plain = plain;
  p->at_line_start = 1;
  p->start = p->last_plain = clock_seconds();
  pthread_mutex_init(&p->mu, NULL);
  if (p->tty) start_timer(p);   /* without it the line still moves with the work */
  return p;
}

void progress_free(Progress *p) {
  if (!p) return;
  if (p->has_timer) {
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->timer, NULL);
    pthread_cond_destroy(&p->wake);
  }
  clear(p);
  pthread_mutex_destroy(&p->mu);
  free(p);
}

void progress_start(Progress *p, long total) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->active = 1;
  p->total = total > 0 ? total : 0;
  p->done = 0;
  p->label[0] = p->note[0] = '\0';
  p->start = p->last_plain = clock_seconds();
  p->parts_shown = 0;
  draw(p);
  pthread_mutex_unlock(&p->mu);
}

void progress_set(Progress *p, long done, const char *label) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  if (!p->active) {
    pthread_mutex_unlock(&p->mu);
    return;
  }
  p->done = done;
  if (label) snprintf(p->label, sizeof p->label, "%s", label);
  double now = clock_seconds();
  if (p->tty) {
    if (now - p->last_draw >= PROGRESS_REDRAW_SECONDS) draw(p);
  } else if (p->plain && p->total > 0) {
    /* In double: a script's count may be as large as 2^62, and ten times
    ** that is no long (exact below 2^49, where a tenth must not come early). */
    double shown = (double)PROGRESS_PLAIN_PARTS * (double)(done < p->total ? done : p->total);
    int parts = (int)(shown / (double)p->total);
    if (parts > p->parts_shown) {
      p->parts_shown = parts;
      plain_line(p);
    }
  } else if (p->plain && now - p->last_plain >= PROGRESS_PLAIN_SECONDS) {
    plain_line(p);
  }
  pthread_mutex_unlock(&p->mu);
}

void progress_note(Progress *p, const char *note) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  snprintf(p->note, sizeof p->note, "%s", note ? note : "");
  if (p->tty && clock_seconds() - p->last_draw >= PROGRESS_REDRAW_SECONDS) draw(p);
  pthread_mutex_unlock(&p->mu);
}

void progress_finish(Progress *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  if (p->active && !p->tty && p->plain && p->total > 0 && p->parts_shown < PROGRESS_PLAIN_PARTS)
    plain_line(p);
  clear(p);
  p->active = 0;
  pthread_mutex_unlock(&p->mu);
}

int progress_active(const Progress *p) { return p && p->active; }

void progress_write(Progress *p, FILE *to, const char *s, size_t n) {
  if (!p) {
    fwrite(s, 1, n, to);
    return;
  }
  pthread_mutex_lock(&p->mu);
  clear(p);
  fwrite(s, 1, n, to);
  if (p->tty) fflush(to);
  if (n > 0) p->at_line_start = s[n - 1] == '\n';
  draw(p);
  pthread_mutex_unlock(&p->mu);
}

void progress_printf(Progress *p, FILE *to, const char *fmt, ...) {
  Buf line = {.max = 4095};
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(&line, fmt, ap);
  va_end(ap);
  if (line.s) progress_write(p, to, line.s, line.n);
  buf_free(&line);
}
