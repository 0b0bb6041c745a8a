/*
** autosave.h -- where tielab keeps its state between sessions, and the
** autosave folder of checkpoints that 'tielab --resume' reopens.
**
** $XDG_STATE_HOME/tielab (default ~/.local/state/tielab) holds the REPL
** history and autosave/, with one folder per session of the lab (named by
** its start time and process id) holding one checkpoint per run. Both the
** lab's screen (on SIGHUP, SIGTERM and quit) and headless mode (on an
** interrupt) save there, so a dropped link never loses a run; a new session
** never touches an older one's files, and --resume reopens the newest.
*/
#ifndef TIELAB_AUTOSAVE_H
#define TIELAB_AUTOSAVE_H

#include <stddef.h>

#include "lab/lab.h"

#define AUTOSAVE_EXT ".safetensors"

/* $XDG_STATE_HOME/tielab/<leaf> in 'buf'; the tielab folder is created. */
int autosave_state_path(char *buf, size_t cap, const char *leaf, Err *err);

/* This session's autosave folder in 'buf', created. */
int autosave_dir(char *buf, size_t cap, Err *err);

/* The newest session folder (other than this one) that holds a checkpoint;
** -1 with 'err' when there is none. */
int autosave_latest(char *buf, size_t cap, Err *err);

/* Save 'r' as <dir>/<name>.safetensors (written whole, then renamed). */
int autosave_run(const char *dir, Run *r, Err *err);

/* Remove checkpoints in this session's folder 'dir' of runs that are no
** longer in 'lab', so that --resume brings back exactly this lab. */
void autosave_prune(Lab *lab, const char *dir);

/* Checkpoint file names in 'dir', sorted, at most 'cap' (malloc'd; free
** each and the array). Returns the count, or -1 with 'err'. */
int autosave_list(const char *dir, char ***names, Err *err);

#endif
