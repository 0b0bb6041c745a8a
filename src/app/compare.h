/*
** compare.h -- the paper's comparison with no UI and no script: a tied run,
** an untied run on the same batches, and a tied run with in_scale 5, trained
** side by side, then one table of the paper's measures.
*/
#ifndef TIELAB_COMPARE_H
#define TIELAB_COMPARE_H

#include <stdio.h>

#include "app/cli.h"

/* What becomes of the runs of an interrupted comparison (saved, and said
** in one line with 'why'). */
typedef void (*CompareInterrupted)(Lab *lab, const char *why);

/* Returns the exit status; the table goes to 'out', progress to stderr.
** Interrupted (SIGINT, SIGTERM, SIGHUP): 'on_interrupt' gets the runs
** (NULL: they are dropped), and the status is 130. */
int compare_paper(const CliOptions *o, FILE *out, CompareInterrupted on_interrupt);

#endif
