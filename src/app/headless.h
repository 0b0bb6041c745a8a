/*
** headless.h -- tielab with no UI: a Lua script run to its end on this
** thread (training steps run inline, between which Ctrl-C is checked), or,
** without a script, the built-in training loop that prints a line every few
** steps. The script's outcome becomes the exit status.
*/
#ifndef TIELAB_HEADLESS_H
#define TIELAB_HEADLESS_H

#include "app/cli.h"

/* Returns the exit status: 0 ok, 1 script or runtime error, 130 interrupted
** (SIGINT, SIGTERM or SIGHUP), or the status a script gave to os.exit. */
int headless_main(const CliOptions *o);

#endif
