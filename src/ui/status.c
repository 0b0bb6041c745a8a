/*
** status.c -- the lines of text around the charts: the status line at the
** top, the hint line at the bottom (a question, a message, the script's
** caption or the key hints).
**
** The status line names every run, however many: with less room each run
** says less (its loss, then its scales, then a one-letter tie mark), then
** names lose what they share ("_s1"), then are cut in the middle with an
** ellipsis. Its throughput is the lab's, by the wall clock. The hint line
** always keeps the present view, help and quit; text that does not fit is
** shortened on purpose (fit.c), never cut by the edge.
*/
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../core/clock.h"
#include "fit.h"
#include "uistate.h"

/* ------------------------------------------------------------ throughput */

/* Tokens the lab trains per wall-clock second, across its runs: the steps
** each run made between two measurements a second or more apart, times its
** tokens per step, over the time between them. Per run by id, so a run
** added or loaded at step 5000 adds nothing. The screen is one per
** process, and so is this. */
#define METER_RUNS 64
static struct {
  double t0, rate;
  int n;
  struct {
    int id;
    long step;
  } run[METER_RUNS];
} meter = {.rate = NAN};

static double tokens_per_step(const TrainerRun *r) { return (double)r->opt.model.batch * r->opt.model.ctx; }

static long meter_last_step(int id) {
  for (int k = 0; k < meter.n; k++)
    if (meter.run[k].id == id) return meter.run[k].step;
  return -1;
}

static void meter_update(const TrainerSnap *s, double now) {
  if (meter.n > 0 && now - meter.t0 < 1.0) return;
  if (meter.n > 0 && now - meter.t0 <= 5.0) {
    double tokens = 0;
    for (int i = 0; i < s->n_runs; i++) {
      long before = meter_last_step(s->runs[i].id);
      if (before >= 0 && s->runs[i].m.step > before) tokens += (double)(s->runs[i].m.step - before) * tokens_per_step(&s->runs[i]);
    }
    meter.rate = tokens / (now - meter.t0);
  } else if (meter.n > 0) {
    meter.rate = NAN;   /* not drawn for a while (paused): measure afresh */
  }
  meter.t0 = now;
  meter.n = 0;
  for (int i = 0; i < s->n_runs && meter.n < METER_RUNS; i++, meter.n++) {
    meter.run[meter.n].id = s->runs[i].id;
    meter.run[meter.n].step = s->runs[i].m.step;
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
typedef char ShortName[64];

static int is_sep(char c) { return c == '_' || c == '-' || c == '.'; }

/* 1 when 'name' equals another run's shortened name or full name. */
static int taken(const TrainerSnap *s, ShortName *out, int upto, const char *name) {
  for (int i = 0; i < s->n_runs && i < SHORT_RUNS; i++)
    if ((i < upto && strcmp(out[i], name) == 0) || strcmp(s->runs[i].name, name) == 0) return 1;
  return 0;
}

/* Each run's name with what tells nothing apart dropped: the beginning and
** end every name shares (up to a '_', '-' or '.', so the rest is a word),
** then a last part such as "_s1" that several names end with. A name is
** kept whole when dropping would leave it empty or equal to another. */
static void short_names(const TrainerSnap *s, ShortName *out) {
  int n = s->n_runs < SHORT_RUNS ? s->n_runs : SHORT_RUNS;
  size_t p = 0, q = 0;
  if (n >= 2) {
    const char *a = s->runs[0].name;
    size_t la = strlen(a);
    p = q = la;
    for (int i = 1; i < n; i++) {
      const char *b = s->runs[i].name;
      size_t lb = strlen(b), k = 0;
      while (k < p && k < lb && a[k] == b[k]) k++;
      p = k;
      k = 0;
      while (k < q && k < lb && a[la - 1 - k] == b[lb - 1 - k]) k++;
      q = k;
    }
    while (p > 0 && !is_sep(a[p - 1])) p--;
    while (q > 0 && !is_sep(a[la - q])) q--;
    for (int i = 0; i < n; i++)
      if (strlen(s->runs[i].name) <= p + q) p = q = 0;
  }
  for (int i = 0; i < n; i++) {
    const char *nm = s->runs[i].name;
    snprintf(out[i], sizeof out[i], "%.*s", (int)(strlen(nm) - p - q), nm + p);
  }
  /* Where each name's last part begins (0: none), all found before any is dropped. */
  size_t last[SHORT_RUNS] = {0};
  for (int i = 0; i < n; i++)
    for (size_t c = 1; out[i][c]; c++)
      if (is_sep(out[i][c])) last[i] = c;
  int drop[SHORT_RUNS] = {0};
  for (int i = 0; i < n; i++) {
    if (!last[i]) continue;
    const char *part = out[i] + last[i];
    size_t lp = strlen(part);
    for (int j = 0; j < n; j++) {
      size_t lj = strlen(out[j]);
      if (j != i && lj > lp && strcmp(out[j] + lj - lp, part) == 0) drop[i] = 1;
    }
  }
  for (int i = 0; i < n; i++) {
    if (!drop[i]) continue;
    char cut[64];
    snprintf(cut, sizeof cut, "%.*s", (int)last[i], out[i]);
    if (!taken(s, out, n, cut)) snprintf(out[i], sizeof out[i], "%s", cut);
  }
}

/* Run 'i' at 'detail'; 'name_cols' bounds the name at DETAIL_CUT. */
static void run_segs(Ui *ui, int i, Detail detail, ShortName *names, int name_cols, Segs *l) {
  const Term *t = &ui->term;
  const TrainerRun *r = &ui->snap->runs[i];
  const RunMetrics *m = &r->m;
  const TrainerRun *selected = ui_selected(ui);
  int sel = selected && r->id == selected->id;
  const char *times = term_glyph(t, GLYPH_TIMES);
  l->n = 0;
  if (sel) seg_add(l, ROLE_SELECT, "%s", term_glyph(t, GLYPH_SELECTED));
  int name_role = sel ? ROLE_SELECT : ROLE_SERIES + i % TERM_SERIES_COLORS;
  char buf[96];
  const char *name = detail >= DETAIL_AFFIX && i < SHORT_RUNS ? names[i] : r->name;
  seg_add(l, name_role, "%s", detail >= DETAIL_CUT ? fit_middle(name, name_cols, term_glyph(t, GLYPH_ELLIPSIS), buf, sizeof buf) : name);
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

/* Columns every run takes at 'detail', with the separators. */
static int runs_cols(Ui *ui, Detail detail, ShortName *names, int name_cols, int sep) {
  int cols = 0;
  for (int i = 0; i < ui->snap->n_runs; i++) {
    Segs l;
    run_segs(ui, i, detail, names, name_cols, &l);
    cols += sep + segs_cols(&l);
  }
  return cols;
}

/* The longest name length that lets every name fit 'room' columns: names
** shorter than it stay whole, the longer ones are cut to it. */
static int name_share(Ui *ui, int room, ShortName *names) {
  int n = ui->snap->n_runs, best = 2;
  for (int cut = 2; cut <= 64; cut++) {
    int cols = 0;
    for (int i = 0; i < n; i++) {
      int c = fit_cols(i < SHORT_RUNS ? names[i] : ui->snap->runs[i].name);
      cols += c < cut ? c : cut;
    }
    if (cols > room) break;
    best = cut;
  }
  return best;
}

/* The line's beginning: running or paused, the steps owed to scripts
** ('owed'), the selected run's step and the lab's throughput. */
static void head_segs(Ui *ui, int running, int owed, Segs *head) {
  const Term *t = &ui->term;
  const TrainerRun *sel = ui_selected(ui);
  head->n = 0;
  seg_add(head, running ? ROLE_OK : ROLE_WARN, " %s %s", term_glyph(t, running ? GLYPH_RUN : GLYPH_PAUSE),
          running ? "RUNNING" : "PAUSED");
  if (owed) seg_add(head, ROLE_OK, " +%ld", ui->snap->owed);
  seg_add(head, ROLE_TEXT, " step %ld", sel ? sel->m.step : 0L);
  if (running) {
    char rate[32];
    rate_text(meter.rate, rate, sizeof rate);
    seg_add(head, ROLE_LABEL, " %s", rate);
  }
}

/* The most detail that fits every run in 'room' columns (DETAIL_CUT when
** only cut names do). */
static Detail runs_detail(Ui *ui, ShortName *names, int room, int wide) {
  Detail d = wide ? DETAIL_LOSS : DETAIL_TIE;   /* narrow: the loss is on the chart */
  while (d < DETAIL_CUT && runs_cols(ui, d, names, 64, d < DETAIL_MARK ? 3 : 1) > room) d++;
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
  meter_update(s, clock_seconds());
  ShortName names[SHORT_RUNS];
  short_names(s, names);
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
  int sep = d < DETAIL_MARK ? 3 : 1, name_cols = 64;
  if (d == DETAIL_CUT) name_cols = name_share(ui, room - runs_cols(ui, DETAIL_CUT, names, 0, sep), names);
  const char *vline = term_glyph(t, GLYPH_VLINE);
  for (int i = 0; i < s->n_runs && x < wd; i++) {
    x += term_printf(t, w, 0, x, wd - x, ROLE_AXIS, sep == 3 ? " %s " : "%s", vline);
    Segs l;
    run_segs(ui, i, d, names, name_cols, &l);
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
  const char *caption = ui->api ? luaapi_caption(ui->api) : "";
  /* The present view shows the caption in large type already. */
  int shown = ui->view == VIEW_PRESENT && ui->lay.r[P_CAPTION].h > 0;
  if (caption && *caption && !shown) {
    /* The caption, and at the right the keys a speaker must find. */
    int keys = essential_cols(), room = wd - keys - 2;
    if (room < 20) room = wd;
    term_print(t, w, 0, 0, room, ROLE_TITLE, fit_text(caption, room, ell, buf, sizeof buf));
    if (room < wd) key_hints(t, w, wd - keys, wd, 0);
    return;
  }
  if (ui->focus) {
    static const char *const items[] = {"Esc keys", "Enter run", "Tab complete", "Up/Down history", "PgUp/PgDn output",
                                        "C-c clear"};
    items_line(t, w, wd, ROLE_LABEL, items, (int)(sizeof items / sizeof items[0]));
    return;
  }
  key_hints(t, w, 0, wd, 1);
}
