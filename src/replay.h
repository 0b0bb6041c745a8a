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
** recorded one. At the end the final figures are compared bit for bit.
*/
#ifndef TIELAB_REPLAY_H
#define TIELAB_REPLAY_H

/* Returns the exit status: 0 the figures match, 1 they differ, the replay
** diverged or the journal could not be read. */
int replay_main(const char *path);

#endif
