/*
** ui.h -- the interactive lab: the screen, its keys and the Lua REPL.
**
** 'ui_main' builds the lab from the command line (a tied and an untied run
** on the same batches unless a tie mode was given; the autosaved runs with
** --resume; none when a script is given, which builds its own), starts the trainer thread and the Lua layer, and runs the
** screen until the user quits. With TERM=dumb, or without a terminal that
** can address the cursor, it runs a plain line REPL instead.
*/
#ifndef TIELAB_UI_UI_H
#define TIELAB_UI_UI_H

#include "app/cli.h"

/* Returns the exit status: 0, 1 (runtime error), 130 (ended by a signal). */
int ui_main(const CliOptions *o);

#endif
