/*
** steer.c -- the verbs of steer.h: one table, each verb's plan, and the one
** function that sets a run's settings for all of them and for r:set.
**
** A setting is never named here: the verbs reach theirs through the
** settings table (by its SettingId), or are handed one by the route.
*/
#include "lab/steer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/num.h"
#include "lab/run.h"

int steer_set(Run *r, const SteerPair *pairs, int n, Err *err) {
  RunOptions next = *run_options(r);
  const char *keys[64];
  if (n > (int)(sizeof keys / sizeof keys[0])) return err_set(err, "%d settings at once, at most 64", n);
  for (int i = 0; i < n; i++) {
    int rc = pairs[i].is_text ? run_options_set_text(&next, pairs[i].s->name, pairs[i].text, err)
                              : run_options_set_number(&next, pairs[i].s->name, pairs[i].number, err);
    if (rc < 0) return -1;
    keys[i] = pairs[i].s->name;
  }
  return run_set_options(r, &next, keys, n, err);
}

/* ------------------------------------------------------------ plans */

double steer_value(const RunOptions *o, const Setting *s) {
  char text[NUM_TEXT_MAX];
  double v = 0;
  if (run_options_get_text(o, s->name, text, sizeof text, NULL) == 0) num_parse(text, &v);
  return v;
}

static void set_number(SteerPlan *p, const Setting *s, double v) {
  p->pair = (SteerPair){.s = s, .number = v};
  p->changes = 1;
}

/* tied -> untied -> half the columns tied -> tied. */
static int plan_cycle_tie(const SteerVerb *v, const SteerRun *r, const SteerArgs *a, const char *times,
                          SteerPlan *p, Err *err) {
  const Setting *s = steer_verb_setting(v);
  int k = r->m->tie_k, d = r->m->dim;
  if (k >= d) snprintf(p->text, sizeof p->text, "untied");
  else if (k == 0) snprintf(p->text, sizeof p->text, "%d", d / 2);
  else snprintf(p->text, sizeof p->text, "tied");
  if (k == 0) snprintf(p->note, sizeof p->note, "%s: %s %d of %d columns", r->name, s->name, d / 2, d);
  else snprintf(p->note, sizeof p->note, "%s: %s %s", r->name, s->name, p->text);
  p->pair = (SteerPair){.s = s, .is_text = 1, .text = p->text};
  p->changes = 1;
  return 0;
}

static int plan_scale(const SteerVerb *v, const SteerRun *r, const SteerArgs *a, const char *times, SteerPlan *p,
                      Err *err) {
  set_number(p, a->setting, steer_value(r->o, a->setting) * a->factor);
  snprintf(p->note, sizeof p->note, "%s: %s %s %g", r->name, a->setting->name, times, a->factor);
  return 0;
}

/* "3", "1/3", "0.37". */
static void rung_text(double v, char *buf, size_t cap) {
  double inv = v > 0 ? 1 / v : 0;
  if (v < 1 && inv > 0 && fabs(inv - round(inv)) < 1e-6 * inv) snprintf(buf, cap, "1/%.0f", round(inv));
  else snprintf(buf, cap, "%g", v);
}

/* A rung up or down the ladder, or a value; past the ladder's end nothing
** changes, and the line says how to go further. */
static int plan_rung(const SteerVerb *v, const SteerRun *r, const SteerArgs *a, const char *times, SteerPlan *p,
                     Err *err) {
  const Setting *s = steer_verb_setting(v);
  double was = steer_value(r->o, s), now = a->dir ? steer_ladder_next(was, a->dir) : a->value;
  char text[32];
  if (now > 0) set_number(p, s, now);
  p->has_result = 1;
  p->result = now > 0 ? now : was;
  p->warn = !(now > 0);
  rung_text(p->result, text, sizeof text);
  if (now > 0) snprintf(p->note, sizeof p->note, "%s: %s %s (+ - step, 0 resets)", r->name, s->name, text);
  else snprintf(p->note, sizeof p->note, "%s: %s %s, the %s step (ui.%s(x) sets any)", r->name, s->name, text,
                a->dir > 0 ? "highest" : "lowest", steer_verb_name(v));
  return 0;
}

/* ------------------------------------------------------------ the table */

static const SteerVerb verbs[] = {
    {"cycle_tie", STEER_NOTHING, SETTING_TIE, plan_cycle_tie, 0},
    {"scale", STEER_FACTOR, -1, plan_scale, 0},
    {NULL, STEER_RUNG, SETTING_IN_SCALE, plan_rung, 1},   /* ui.in_scale: it returns the value it moved to */
};

#define N_VERBS ((int)(sizeof verbs / sizeof verbs[0]))

const SteerVerb *steer_verbs(int *n) {
  *n = N_VERBS;
  return verbs;
}

const Setting *steer_verb_setting(const SteerVerb *v) { return v->setting < 0 ? NULL : lab_setting(v->setting); }

const char *steer_verb_name(const SteerVerb *v) {
  const Setting *s = v->name ? NULL : steer_verb_setting(v);
  return v->name ? v->name : s ? s->name : "?";
}

int steer_check(const SteerVerb *v, SteerArgs *a, Err *err) {
  switch (v->takes) {
    case STEER_NOTHING: return 0;
    case STEER_FACTOR: {
      const Setting *s = a->setting = a->key ? lab_setting_find(a->key) : a->setting;
      if (!s || !s->live || s->type != SET_NUMBER) {
        err_set(err, "invalid option '%s'", a->key ? a->key : "?");
        return 1;
      }
      if (a->factor > 0 && isfinite(a->factor)) return 0;
      err_set(err, "must be a positive number");
      return 2;
    }
    case STEER_RUNG:
      if (a->dir || (a->value > 0 && isfinite(a->value))) return 0;
      err_set(err, "must be 'up', 'down' or a positive number");
      return 1;
  }
  err_set(err, "unknown verb");
  return 1;
}

int steer_plan(const SteerVerb *v, const SteerRun *r, const SteerArgs *a, const char *times, SteerPlan *p,
               Err *err) {
  memset(p, 0, sizeof *p);
  return v->plan(v, r, a, times, p, err);
}

int steer_do(Run *r, const SteerVerb *v, const SteerArgs *a, const char *times, SteerPlan *p, Err *err) {
  SteerArgs checked = *a;
  if (steer_check(v, &checked, err) != 0) return -1;
  a = &checked;
  SteerRun now = {run_name(r), run_metrics(r), run_options(r)};
  if (steer_plan(v, &now, a, times, p, err) < 0) return -1;
  return p->changes ? steer_set(r, &p->pair, 1, err) : 0;
}

/* ------------------------------------------------------------ the ladder */

/* Round numbers a speaker can say. */
static const double ladder[] = {1.0 / 50, 1.0 / 20, 1.0 / 10, 1.0 / 5, 1.0 / 3, 1.0 / 2, 1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000};
#define N_LADDER ((int)(sizeof ladder / sizeof ladder[0]))

double steer_ladder_next(double v, int dir) {
  const double tol = 1e-9;   /* 1/3 set by hand is on the rung */
  if (dir > 0) {
    for (int i = 0; i < N_LADDER; i++)
      if (ladder[i] > v * (1 + tol)) return ladder[i];
  } else {
    for (int i = N_LADDER - 1; i >= 0; i--)
      if (ladder[i] < v * (1 - tol)) return ladder[i];
  }
  return 0;
}
