/*
** status.c -- the lines of text around the charts: the status line at the
** top, the hint line at the bottom (a question, a message, the script's
** caption or the key hints). What each gives up when room is short:
** docs/architecture.md, 'The status and hint lines'.
*/
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "ui/fit.h"
#include "ui/names.h"
#include "ui/uistate.h"

/* ------------------------------------------------------------ throughput */

/* Tokens the lab trains per wall-clock second, across its runs: the steps
** each run made between two measurements a second or more apart, times its
** tokens per step, over the time between them. Per run by id, so a run
** added or loaded at step 5000 adds nothing. */
static double tokens_per_step(const TrainerRun *r) { return (double)r->opt.model.batch * r->opt.model.ctx; }

static long meter_last_step(const UiMeter *m, int id) {
  for (int k = 0; k < m->n; k++)
    if (m->run[k].id == id) return m->run[k].step;
  return -1;
}

static void meter_update(UiMeter *m, const TrainerSnap *s, double now) {
  if (s->n_runs == 0) {   /* nothing trains: no rate, and measure afresh */
    m->n = 0;
    m->rated = 0;
    return;
  }
  if (m->n > 0 && now - m->t0 < 1.0) return;
  if (m->n > 0 && now - m->t0 <= 5.0) {
    double tokens = 0;
    for (int i = 0; i < s->n_runs; i++) {
      long before = meter_last_step(m, s->runs[i].id);
      if (before >= 0 && s->runs[i].m.step > before) tokens += (double)(s->runs[i].m.step - before) * tokens_per_step(&s->runs[i]);
    }
    m->rate = tokens / (now - m->t0);
    m->rated = 1;
  } else if (m->n > 0) {
    m->rated = 0;   /* not drawn for a while (paused): measure afresh */
  }
  m->t0 = now;
  m->n = 0;
  for (int i = 0; i < s->n_runs && m->n < UI_METER_RUNS; i++, m->n++) {
    m->run[m->n].id = s->runs[i].id;
    m->run[m->n].step = s->runs[i].m.step;
  }
}

/* "12.3k tok/s" (wall-clock, every run together). */
static void rate_text(double v, char *buf, size_t cap) {
  if (!isfinite(v)) snprintf(buf, cap, "- tok/s");   /* measuring */
  else if (v >= 1e7) snprintf(buf, cap, "%.0fM tok/s", v / 1e6);
  else if (v >= 1e6) snprintf(buf, cap, "%.1fM tok/s", v / 1e6);
  else if (v >= 1e4) snprintf(buf, cap, "%.0fk tok/s", v / 1e3);
  else if (v >= 1e3) snprintf(buf, cap, "%.1fk tok/s", v / 1e3);
  else snprintf(buf, cap, "%.0f tok/s", v);
}

/* ------------------------------------------------------------ the status line */

/* A piece of the status line in one role. */
typedef struct Seg {
  char text[96];
  int role;
} Seg;

typedef struct Segs {
  Seg seg[8];
  int n;
} Segs;

static void seg_add(Segs *l, int role, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void seg_add(Segs *l, int role, const char *fmt, ...) {
  if (l->n >= (int)(sizeof l->seg / sizeof l->seg[0])) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(l->seg[l->n].text, sizeof l->seg[l->n].text, fmt, ap);
  va_end(ap);
  l->seg[l->n++].role = role;
}

static int segs_cols(const Segs *l) {
  int c = 0;
  for (int i = 0; i < l->n; i++) c += fit_cols(l->seg[i].text);
  return c;
}

static int segs_draw(const Term *t, WINDOW *w, int x, int maxw, const Segs *l) {
  int x0 = x;
  for (int i = 0; i < l->n && x - x0 < maxw; i++) x += term_print(t, w, 0, x, maxw - (x - x0), l->seg[i].role, l->seg[i].text);
  return x - x0;
}

/* How much of each run the line says, from the most to the least; the
** first that fits every run is used for all of them. */
typedef enum Detail {
  DETAIL_LOSS,    /* name, tie, in×, out×, loss */
  DETAIL_TIE,     /* name, tie, in× (out× when not 1) */
  DETAIL_MARK,    /* name, a tie mark, ×in when not 1 */
  DETAIL_AFFIX,   /* ... and the names without their shared parts */
  DETAIL_CUT,     /* ... and names shortened to an equal share */
  DETAIL_COUNT
} Detail;

/* A one-letter tie mark: T tied, U untied, else the tied columns. */
static void tie_mark(const RunMetrics *m, char *buf, size_t cap) {
  if (m->tie_k >= m->dim) snprintf(buf, cap, "T");
  else if (m->tie_k == 0) snprintf(buf, cap, "U");
  else snprintf(buf, cap, "%d", m->tie_k);
}

/* Names as the line shows them when short of room, at most SHORT_RUNS. */
#define SHORT_RUNS 64
#define NAME_ALL (1 << 20)   /* a longest name that cuts none */
typedef char ShortName[sizeof ((TrainerRun *)0)->name + 8];   /* a name and an ellipsis */

/* Each run's name without what the names share, cut in the middle to at
** most 'max' columns (names.c, as in the charts' legends); 0 when two would
** then read alike. */
static int shorten(const TrainerSnap *s, int max, const char *ell, ShortName *out) {
  int n = s->n_runs < SHORT_RUNS ? s->n_runs : SHORT_RUNS;
  const char *names[SHORT_RUNS];
  NameCut cut[SHORT_RUNS];
  for (int i = 0; i < n; i++) names[i] = s->runs[i].name;
  int distinct = names_fit(names, n, 1, max, fit_cols(ell), cut);
  for (int i = 0; i < n; i++) names_text(names[i], &cut[i], ell, out[i], sizeof out[i]);
  return distinct;
}

/* Run 'i' at 'detail', named from 'names' from DETAIL_AFFIX on. */
static void run_segs(Ui *ui, int i, Detail detail, ShortName *names, Segs *l) {
  const Term *t = &ui->term;
  const TrainerRun *r = &ui->snap->runs[i];
  const RunMetrics *m = &r->m;
  const TrainerRun *selected = ui_selected(ui);
  int sel = selected && r->id == selected->id;
  const char *times = term_glyph(t, GLYPH_TIMES);
  l->n = 0;
  if (sel) seg_add(l, ROLE_SELECT, "%s", term_glyph(t, GLYPH_SELECTED));
  int name_role = sel ? ROLE_SELECT : ROLE_SERIES + i % TERM_SERIES_COLORS;
  seg_add(l, name_role, "%s", detail >= DETAIL_AFFIX && i < SHORT_RUNS ? names[i] : r->name);
  char tie[16];
  if (detail <= DETAIL_TIE) {
    seg_add(l, ROLE_TEXT, " %s in%s%g", config_tie_name(m->tie_k, m->dim, tie), times, m->in_scale);
    if (detail == DETAIL_LOSS || m->out_scale != 1) seg_add(l, ROLE_TEXT, " out%s%g", times, m->out_scale);
    if (detail == DETAIL_LOSS && isfinite(m->loss)) seg_add(l, ROLE_TEXT, " loss %.3f", m->loss);
  } else {
    tie_mark(m, tie, sizeof tie);
    seg_add(l, ROLE_TEXT, " %s", tie);
    if (m->in_scale != 1) seg_add(l, ROLE_TEXT, "%s%g", times, m->in_scale);
  }
  if (m->paused) seg_add(l, ROLE_ERROR, detail <= DETAIL_TIE ? " paused" : " %s", term_glyph(t, GLYPH_PAUSE));
}

/* Columns of run 'i' at 'detail' with its separator. */
static int run_cols(Ui *ui, int i, Detail detail, ShortName *names, int sep) {
  Segs l;
  run_segs(ui, i, detail, names, &l);
  return sep + segs_cols(&l);
}

/* Columns every run takes at 'detail', with the separators. */
static int runs_cols(Ui *ui, Detail detail, ShortName *names, int sep) {
  int cols = 0;
  for (int i = 0; i < ui->snap->n_runs; i++) cols += run_cols(ui, i, detail, names, sep);
  return cols;
}

/* Names cut to the longest length that lets every run fit 'room' columns
** and keeps the names apart; 0 when none does, and the names are left
** NAME_SHORT long (or longer, to stay apart): shorter ones say too little,
** the line then shows fewer runs. */
#define NAME_SHORT 5   /* "ti…x2" */
static int cut_names(Ui *ui, int room, const char *ell, ShortName *names) {
  for (int max = 63; max >= NAME_SHORT; max--)
    if (shorten(ui->snap, max, ell, names) && runs_cols(ui, DETAIL_CUT, names, 1) <= room) return 1;
  for (int max = NAME_SHORT; max < 63; max++)
    if (shorten(ui->snap, max, ell, names)) return 0;
  return 0;
}

/* The line's beginning: running or paused, the steps owed to scripts
** ('owed'), the selected run's step, the job in progress and the lab's
** throughput. */
static void head_segs(Ui *ui, int running, int owed, Segs *head) {
  const Term *t = &ui->term;
  const TrainerRun *sel = ui_selected(ui);
  head->n = 0;
  seg_add(head, running ? ROLE_OK : ROLE_WARN, " %s %s", term_glyph(t, running ? GLYPH_RUN : GLYPH_PAUSE),
          running ? "RUNNING" : "PAUSED");
  if (owed) seg_add(head, ROLE_OK, " +%ld", ui->snap->owed);
  seg_add(head, ROLE_TEXT, " step %ld", sel ? sel->m.step : 0L);
  /* The job the trainer runs instead of steps, and how far it is. */
  if (ui->snap->job[0]) seg_add(head, ROLE_WARN, " %.60s %ld/%ld", ui->snap->job, ui->snap->job_done, ui->snap->job_total);
  if (running && ui->snap->n_runs > 0 && !ui->snap->job[0]) {   /* a job holds training */
    char rate[32];
    rate_text(ui->meter.rated ? ui->meter.rate : NAN, rate, sizeof rate);
    seg_add(head, ROLE_LABEL, " %s", rate);
  }
}

/* The most detail that fits every run in 'room' columns (DETAIL_CUT when
** only cut names do). */
static Detail runs_detail(Ui *ui, ShortName *names, int room, int wide) {
  Detail d = wide ? DETAIL_LOSS : DETAIL_TIE;   /* narrow: the loss is on the chart */
  while (d < DETAIL_CUT && runs_cols(ui, d, names, d < DETAIL_MARK ? 3 : 1) > room) d++;
  return d;
}


void panel_status(Ui *ui, WINDOW *w, int h, int wd) {
  (void)h;
  werase(w);
  const Term *t = &ui->term;
  const TrainerSnap *s = ui->snap;
  /* The flag itself, so a key shows at once; a script's owed steps train
  ** while continuous training is paused. */
  int running = trainer_running(ui->trainer) || (s->owed > 0 && !s->holding);
  meter_update(&ui->meter, s, clock_seconds());
  const char *ell = term_glyph(t, GLYPH_ELLIPSIS);
  ShortName names[SHORT_RUNS];
  shorten(s, NAME_ALL, ell, names);
  int script = ui->api && luaapi_scripts(ui->api) > 0, paused = script && luaapi_paused(ui->api);
  const char *script_tag = paused ? " script paused" : " script";
  int tag_w = fit_cols(script_tag);

  /* Every run comes first: the owed count, then the script mark, give way
  ** before a name is cut. */
  Segs head;
  int owed = s->owed > 0, tag = script, room = 0;
  Detail d = DETAIL_CUT;
  for (int k = 0; k < 3; k++) {
    owed = s->owed > 0 && k < 1;
    tag = script && k < 2;
    head_segs(ui, running, owed, &head);
    room = wd - segs_cols(&head) - (tag ? tag_w : 0);
    d = runs_detail(ui, names, room, wd >= 120);
    if (d < DETAIL_CUT) break;
  }
  int x = segs_draw(t, w, 0, wd, &head);
  int sep = d < DETAIL_MARK ? 3 : 1;
  if (d == DETAIL_CUT) cut_names(ui, room, ell, names);
  /* When even the shortest names do not fit, the runs that do, then how
  ** many more there are. */
  int end = wd - (tag ? tag_w : 0), all = x + runs_cols(ui, d, names, sep) <= end;
  const char *vline = term_glyph(t, GLYPH_VLINE);
  for (int i = 0; i < s->n_runs && x < wd; i++) {
    char more[32];
    int left = s->n_runs - i - 1;
    snprintf(more, sizeof more, " +%d run%s", left + 1, left + 1 == 1 ? "" : "s");
    int need = run_cols(ui, i, d, names, sep) + (left > 0 ? fit_cols(more) + 1 : 0);
    if (!all && x + need > end) {
      x += term_print(t, w, 0, x, wd - x, ROLE_LABEL, more);
      break;
    }
    x += term_printf(t, w, 0, x, wd - x, ROLE_AXIS, sep == 3 ? " %s " : "%s", vline);
    Segs l;
    run_segs(ui, i, d, names, &l);
    x += segs_draw(t, w, x, wd - x, &l);
  }
  if (tag && x + tag_w <= wd) term_print(t, w, 0, wd - tag_w, tag_w, paused ? ROLE_WARN : ROLE_OK, script_tag);
}

/* ------------------------------------------------------------ the hint line */

/* Hints kept whatever the width: the present view, help and quit. */
static int essential(int key) { return key == 'p' || key == '?' || key == 'q'; }

static int hint_cols(const UiKey *k) { return fit_cols(k->hint) + 2; }

/* Which key hints fit 'wd' columns: the essential ones always, with
** 'all' the others in the table's order while they fit. Returns their
** columns. */
static int pick_hints(const UiKey *k, int n, int wd, int all, char *keep) {
  int used = 0;
  for (int i = 0; i < n; i++) {
    keep[i] = k[i].hint && essential(k[i].key);
    if (keep[i]) used += hint_cols(&k[i]);
  }
  for (int i = 0; all && i < n; i++)
    if (k[i].hint && !keep[i] && used + hint_cols(&k[i]) <= wd + 2) keep[i] = 1, used += hint_cols(&k[i]);
  return used - 2;
}

/* The key hints from column 'x' (the essential ones only, unless 'all'),
** in the table's order. */
static void key_hints(const Term *t, WINDOW *w, int x, int wd, int all) {
  int n;
  const UiKey *k = ui_keys(&n);
  char keep[128];
  if (n > 128) n = 128;
  pick_hints(k, n, wd - x, all, keep);
  for (int i = 0; i < n && x < wd; i++) {
    if (!keep[i]) continue;
    const char *sp = strchr(k[i].hint, ' ');
    int kl = sp ? (int)(sp - k[i].hint) : (int)strlen(k[i].hint);
    char key[16];
    snprintf(key, sizeof key, "%.*s", kl, k[i].hint);
    x += term_print(t, w, 0, x, wd - x, ROLE_KEY, key);
    x += term_printf(t, w, 0, x, wd - x, ROLE_LABEL, "%s  ", sp ? sp : "");
  }
}

/* Columns of the essential hints. */
static int essential_cols(void) {
  int n;
  const UiKey *k = ui_keys(&n);
  char keep[128];
  return pick_hints(k, n > 128 ? 128 : n, 0, 0, keep);
}

/* Items joined by two spaces, as many as fit from the first. */
static void items_line(const Term *t, WINDOW *w, int wd, int role, const char *const *items, int n) {
  int x = 0;
  for (int i = 0; i < n; i++) {
    int c = fit_cols(items[i]);
    if (x + c > wd) break;
    x += term_print(t, w, 0, x, wd - x, role, items[i]) + 2;
  }
}

void panel_hint(Ui *ui, WINDOW *w, int h, int wd) {
  (void)h;
  werase(w);
  const Term *t = &ui->term;
  const char *ell = term_glyph(t, GLYPH_ELLIPSIS);
  char buf[1024];
  if (ui->ask == ASK_QUIT) {
    char v[2][128];
    int unsaved = ui_unsaved(ui);
    snprintf(v[0], sizeof v[0], "Save %d run(s) with unsaved steps before quitting?  y yes  n no  Esc stay", unsaved);
    snprintf(v[1], sizeof v[1], "Save %d run(s) first?  y yes  n no  Esc stay", unsaved);
    const char *const vs[] = {v[0], v[1]};
    term_print(t, w, 0, 0, wd, ROLE_WARN, fit_choose(vs, 2, wd, ell, buf, sizeof buf));
    return;
  }
  if (ui->msg_until > clock_seconds()) {
    term_print(t, w, 0, 0, wd, ui->msg_role, fit_text(ui->msg, wd, ell, buf, sizeof buf));
    return;
  }
  /* A script waits for the speaker: say which key goes on, first. */
  int x = 0;
  if (ui->key_wait_seen && !ui->focus) {
    x = term_print(t, w, 0, 0, wd, ROLE_KEY, ".");
    x += term_print(t, w, 0, x, wd - x, ROLE_WARN, " next phase  ");
  }
  const char *caption = ui->api ? luaapi_caption(ui->api) : "";
  /* The present view shows the caption in large type already. */
  int shown = ui->view == VIEW_PRESENT && ui->lay.r[P_CAPTION].h > 0;
  if (caption && *caption && !shown) {
    /* The caption, and at the right the keys a speaker must find. */
    int keys = essential_cols(), room = wd - x - keys - 2;
    if (room < 20) room = wd - x;
    term_print(t, w, 0, x, room, ROLE_TITLE, fit_text(caption, room, ell, buf, sizeof buf));
    if (x + room < wd) key_hints(t, w, wd - keys, wd, 0);
    return;
  }
  if (ui->focus) {
    static const char *const items[] = {"Esc keys", "Enter run", "Tab complete", "Up/Down history", "PgUp/PgDn output",
                                        "C-c clear"};
    items_line(t, w, wd, ROLE_LABEL, items, (int)(sizeof items / sizeof items[0]));
    return;
  }
  key_hints(t, w, x, wd, 1);
}
