/*
** live_set.h -- a live setting changed by name, as the tests change one:
** through steer_set, the one route the keys, the 'ui' table, r:set and a
** replay take, so a test sees what every caller sees.
*/
#ifndef TIELAB_LIVE_SET_H
#define TIELAB_LIVE_SET_H

#include "lab/steer.h"

static inline int live_set(Run *r, const char *key, const char *text, double number, Err *err) {
  SteerPair p = {.s = lab_setting_find(key), .is_text = text != NULL, .text = text, .number = number};
  if (!p.s) return err_set(err, "unknown setting '%s'", key);
  return steer_set(r, &p, 1, err);
}

static inline int live_text(Run *r, const char *key, const char *value, Err *err) {
  return live_set(r, key, value, 0, err);
}

static inline int live_number(Run *r, const char *key, double value, Err *err) {
  return live_set(r, key, NULL, value, err);
}

#endif
