/*
** replay.h -- 'tielab --replay FILE': a journal (journal.h) played again
** with no UI and no terminal.
**
** The lab is rebuilt as the header says (the same options and seeds), the
** runs step on this thread up to each entry's steps (every unpaused run in
** lockstep, as the trainer trains, or a run alone when only it moved), the
** entry is applied (a key's Lua call against a headless 'ui' table, a REPL
** line, a script's key binding, a script run inline with later entries
** applied at their steps), and every run's step is checked against the
** recorded one. A script's lab.wait_key takes the next recorded answer, at
** its recorded steps. At the end the final figures are compared bit for
** bit. A journal of another tielab version gets a warning, and goes on.
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
