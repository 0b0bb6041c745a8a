/*
** inspect.h -- tielab --inspect: a released model described and measured,
** and with --against the paper's Table 1 for a pair (see inspect.c).
*/
#ifndef TIELAB_APP_INSPECT_H
#define TIELAB_APP_INSPECT_H

#include "app/cli.h"

/* Returns the exit status (base/err.h). */
int inspect_main(const CliOptions *o);

#endif
