/*
** replay.h -- 'tielab --replay FILE': a journal (journal.h) played again
** with no UI and no terminal. How the lab is rebuilt, entries applied and
** the end compared: docs/architecture.md, 'Replaying a journal'.
*/
#ifndef TIELAB_REPLAY_H
#define TIELAB_REPLAY_H

#include "app/cli.h"

/* Plays the journal o->replay. A journal is code: unless o->trust, its Lua
** runs sandboxed in the current folder, and its runs, files and heap cap
** obey the sandbox as a sandboxed script's do (replay_check.h); with
** o->trust in its recorded folder, sandboxed as it was; o->sandbox always
** sandboxes. Key entries run only the Lua of the lab's keys. Returns the exit status: 0 the figures
** match, 1 they differ, there is nothing to compare (no runs at the end),
** the replay diverged or the journal could not be read. */
int replay_main(const CliOptions *o);

#endif
