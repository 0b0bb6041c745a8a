/*
** recipe.c -- presets of settings: 'recipe=olmo' sets each of its keys that
** was not given explicitly (RunOptions.given), so an explicit key wins
** whether it comes before or after the recipe. The keys any recipe sets go
** back to their defaults under another recipe (or none), so changing the
** recipe never leaves another's values behind.
*/
#include <stdint.h>

#include "lab/recipe.h"

/* Each with its pairs in 'recipes'. */
const char *const recipe_names[] = {"", "olmo", NULL};

/* A recipe's keys and values. */
typedef struct RecipePair {
  SettingId key;
  const char *value;
} RecipePair;

/* The paper's training recipe, OLMo's: its cosine_with_warmup warms up
** from 0.1*lr (warmup_min_lr unset) and decays to alpha_f*lr = 0.1*lr. */
static const RecipePair olmo_pairs[] = {
  {SETTING_LR, "3e-4"}, {SETTING_EPS, "1e-5"}, {SETTING_BETA1, "0.9"}, {SETTING_BETA2, "0.95"},
  {SETTING_WEIGHT_DECAY, "0.1"}, {SETTING_DECAY_ALL, "true"}, {SETTING_WARMUP, "1000"},
  {SETTING_WARMUP_START, "0.1"}, {SETTING_SCHEDULE, "cosine"}, {SETTING_DECAY_STEPS, "10000"},
  {SETTING_LR_MIN_RATIO, "0.1"}, {SETTING_CLIP, "1"},
};

/* A recipe's key that an explicit other key replaces: 'lr_min' given under
** a recipe with a relative floor is the floor, as an explicit key wins. */
static const SettingId yields_to[][2] = {{SETTING_LR_MIN_RATIO, SETTING_LR_MIN}};

#define N_YIELDS ((int)(sizeof yields_to / sizeof yields_to[0]))

/* By the recipe's number in recipe_names. */
static const struct {
  const RecipePair *pairs;
  int n;
} recipes[] = {{NULL, 0}, {olmo_pairs, (int)(sizeof olmo_pairs / sizeof olmo_pairs[0])}};

#define N_RECIPES ((int)(sizeof recipes / sizeof recipes[0]))
_Static_assert(N_RECIPES + 1 == sizeof recipe_names / sizeof recipe_names[0], "a pair list per recipe name");

static int is_given(const RunOptions *o, int i) { return i >= 0 && (o->given & (UINT64_C(1) << i)); }

/* Whether a key given explicitly replaces recipe key 'i' (then at its default). */
static int yielded(const RunOptions *o, int i) {
  for (int y = 0; y < N_YIELDS; y++)
    if ((int)yields_to[y][0] == i && is_given(o, yields_to[y][1])) return 1;
  return 0;
}

int recipe_steers(int i) {
  if (i == SETTING_RECIPE) return 1;
  for (int y = 0; y < N_YIELDS; y++)
    if ((int)yields_to[y][1] == i) return 1;
  return 0;
}

void recipe_apply(RunOptions *o, RecipeSet set) {
  int in_force = o->recipe;
  for (int r = 0; r < N_RECIPES; r++)
    for (int p = 0; p < recipes[r].n; p++) {
      int i = recipes[r].pairs[p].key;
      const char *value = NULL;
      if (is_given(o, i)) continue;
      for (int q = 0; q < recipes[in_force].n && !yielded(o, i); q++)
        if ((int)recipes[in_force].pairs[q].key == i) value = recipes[in_force].pairs[q].value;
      set(o, i, value ? value : lab_setting((SettingId)i)->deflt, NULL);
    }
}
