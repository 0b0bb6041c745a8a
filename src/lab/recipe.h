/*
** recipe.h -- presets of settings ('recipe=olmo'), for settings.c: the
** recipes' names, which setting steers what a recipe fills, and the fill.
*/
#ifndef TIELAB_LAB_RECIPE_H
#define TIELAB_LAB_RECIPE_H

#include "lab/lab.h"

/* The choices of the 'recipe' setting, by number, NULL-ended ("" for none). */
extern const char *const recipe_names[];

/* Whether giving setting 'id' changes what a recipe fills. */
int recipe_steers(int id);

/* Sets setting 'id' from text without marking it given (settings.c's). */
typedef int (*RecipeSet)(RunOptions *o, int id, const char *value, Err *err);

/* Each key a recipe may set and not given explicitly takes the value of
** the recipe in force, or its default. */
void recipe_apply(RunOptions *o, RecipeSet set);

#endif
