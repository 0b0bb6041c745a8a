/*
** steer.h -- the verbs a person steers a run with: the tie cycle of the
** 't' key, a setting multiplied (ui.scale), the in_scale ladder of '+' and
** '-', and settings set by name (r:set).
**
** One table of verbs serves every route an action can take: a key, the
** 'ui' table, a script's r:set and 'tielab --replay'. Each route only reads
** its arguments and finds the run; the verb checks them, plans the change
** from the run as it is, says what it did, and sets the settings through
** one function, so an action is refused, said, journaled and marked on the
** charts alike however it arrives.
*/
#ifndef TIELAB_LAB_STEER_H
#define TIELAB_LAB_STEER_H

#include "lab/lab.h"

/* One setting to set: a row of the settings table and its value, as text
** or as a number. */
typedef struct SteerPair {
  const Setting *s;
  int is_text;
  const char *text;
  double number;
} SteerPair;

/* Set 'n' settings of run 'r' together: each set on a copy of its options
** and the whole set checked before any is applied, so a bad value leaves
** the run as it was, and keys that only make sense together (schedule and
** decay_steps) may change together. Each key is an event in the history. */
int steer_set(Run *r, const SteerPair *pairs, int n, Err *err);

/* What a verb takes after the run. */
typedef enum SteerTakes {
  STEER_NOTHING,   /* the tie cycle */
  STEER_FACTOR,    /* a live number setting and a factor: ui.scale('lr', 0.5) */
  STEER_RUNG,      /* "up", "down" or a value: ui.in_scale("up") */
} SteerTakes;

typedef struct SteerArgs {
  const char *key;          /* STEER_FACTOR: the setting's name as given (steer_check reads it) */
  const Setting *setting;   /* STEER_FACTOR: found by steer_check */
  double factor;            /* STEER_FACTOR */
  int dir;                  /* STEER_RUNG: 1 up, -1 down, 0 set 'value' */
  double value;             /* STEER_RUNG with dir 0 */
} SteerArgs;

/* A run as a verb plans on it: the run itself or a copy of its last
** publication. */
typedef struct SteerRun {
  const char *name;
  const RunMetrics *m;
  const RunOptions *o;
} SteerRun;

/* What a verb does to a run: the setting it sets ('changes' 0: none, the
** ladder ends there), the value it returns, and the line that says so
** ('warn': a line that says nothing changed). */
typedef struct SteerPlan {
  SteerPair pair;
  char text[32];   /* the pair's text, when it is text */
  int changes;
  int has_result;
  double result;
  int warn;
  char note[160];
} SteerPlan;

typedef struct SteerVerb SteerVerb;
typedef int (*SteerPlanFn)(const SteerVerb *v, const SteerRun *r, const SteerArgs *a, const char *times,
                           SteerPlan *p, Err *err);

struct SteerVerb {
  const char *name;   /* in the 'ui' table; NULL: the name of its setting */
  SteerTakes takes;
  int setting;        /* the SettingId it moves; -1: the route names one */
  SteerPlanFn plan;
  int needs_now;      /* planned on the run as it is, never on a copy: its
                      ** route holds the lab for an instant, not queueing */
};

const SteerVerb *steer_verbs(int *n);
const char *steer_verb_name(const SteerVerb *v);
/* The setting a verb with a role moves, or NULL. */
const Setting *steer_verb_setting(const SteerVerb *v);

/* The value of number setting 's' in 'o'. */
double steer_value(const RunOptions *o, const Setting *s);

/* Check what a route read ('a'), the same for every route: 0, or the
** argument that is wrong (1: the first, the run not counted) with 'err'
** saying why. A setting named for STEER_FACTOR must be a live number; it is
** looked up into 'a->setting'. */
int steer_check(const SteerVerb *v, SteerArgs *a, Err *err);

/* Plan 'v' on 'r' (the run or a copy of it): what it will set and say.
** 'a' has passed steer_check. 'times' is the multiplication sign the
** speaker's terminal can show. */
int steer_plan(const SteerVerb *v, const SteerRun *r, const SteerArgs *a, const char *times, SteerPlan *p,
               Err *err);

/* Plan 'v' on the run itself and apply it. */
int steer_do(Run *r, const SteerVerb *v, const SteerArgs *a, const char *times, SteerPlan *p, Err *err);

/* The next in_scale rung from 'v' up (dir > 0) or down (dir < 0), along
** 1/50, 1/20, 1/10, 1/5, 1/3, 1/2, 1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000;
** from between two
** rungs, the nearer one in that direction. 0 past either end. */
double steer_ladder_next(double v, int dir);

#endif
