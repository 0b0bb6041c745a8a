/*
** autosave.h -- where tielab keeps its state between sessions, and the
** autosave folder of checkpoints that 'tielab --resume' reopens. The
** folders, who saves there, and the .writer and manifest files:
** docs/architecture.md, 'The autosave folder'.
*/
#ifndef TIELAB_AUTOSAVE_H
#define TIELAB_AUTOSAVE_H

#include <stddef.h>
#include <stdio.h>

#include "lab/lab.h"

#define AUTOSAVE_EXT ".safetensors"
#define AUTOSAVE_WRITER ".writer"
#define AUTOSAVE_MANIFEST "manifest"
/* How long --resume waits for a live owner to finish its folder: one whose
** save is under way (a big lab writes for a while), and one that has not
** begun a save (another lab, running on, or one just told to end). */
#define AUTOSAVE_WAIT_SAVING 60.0
#define AUTOSAVE_WAIT_RUNNING 10.0
/* A manifest line is at most 512 bytes as written; a longer line, or a
** manifest of more bytes than this, is none tielab wrote. */
#define AUTOSAVE_MANIFEST_LINE 1024
#define AUTOSAVE_MANIFEST_MAX (64L << 20)

/* $XDG_STATE_HOME/tielab/<leaf> in 'buf'; the tielab folder is created. */
int autosave_state_path(char *buf, size_t cap, const char *leaf, Err *err);

/* This session's autosave folder in 'buf', created. */
int autosave_dir(char *buf, size_t cap, Err *err);

/* Mark this session's folder as owned by this live process (its
** '.writer', fsynced), so that a --resume started while this lab ends
** waits for its save. */
int autosave_claim(Err *err);

/* Before a save's first checkpoint: the folder 'dir' claimed and its
** manifest of every run of 'lab' (file and step) written. */
int autosave_begin(const char *dir, Lab *lab, Err *err);

/* After a save's last checkpoint: when 'complete', the folder no longer has
** a writer; otherwise its marker stays, for --resume to report. */
void autosave_end(const char *dir, int complete);

/* At the end of the session: the claim given back unless a save was cut
** short; a folder left with nothing saved is removed. */
void autosave_release(void);

/* Save 'r' as <dir>/<name>.safetensors (written whole, then renamed). */
int autosave_run(const char *dir, Run *r, Err *err);

/* Remove checkpoints in this session's folder 'dir' of runs that are no
** longer in 'lab', so that --resume brings back exactly this lab. */
void autosave_prune(Lab *lab, const char *dir);

/* Each run a save tried, as it ends: saved ('failed' NULL) or not ('failed'
** says why); 'r' NULL: the manifest could not be written. */
typedef void (*AutosaveEach)(void *ctx, Run *r, const Err *failed);

/* Save every run of 'lab' into this session's folder, named in 'dir' (""
** when it cannot be made): the manifest, then every run, one that fails
** told to 'each' and the others saved still; once all are saved, the
** checkpoints of runs no longer in the lab are pruned and the folder has
** no writer left. 0 when all were saved, else -1 with 'err' saying the
** first failure. The screen, headless mode and the watchdog all save so. */
int autosave_lab(Lab *lab, char *dir, size_t cap, AutosaveEach each, void *ctx, Err *err);

/* Checkpoint file names in 'dir', sorted, every one (malloc'd; free each
** and the array). Returns the count, or -1 with 'err'. */
int autosave_list(const char *dir, char ***names, Err *err);

/* ------------------------------------------------------------ reading */

/* One run a save meant to write: its checkpoint's file name and step. */
typedef struct {
  char file[160];
  char name[128];
  long step;
} AutosaveEntry;

/* The folder --resume reopens, as autosave_latest found it. */
typedef struct {
  char dir[4096];
  AutosaveEntry *want;   /* the manifest's runs (malloc'd), or NULL: none */
  int n_want;            /* -1: no manifest (a folder of an older tielab, or one unreadable) */
  char manifest_error[ERR_MSG_MAX];   /* why the manifest there could not be read ("<path>:<line>: ..."), or "" */
  long writer;           /* pid of a save that never finished, 0, or -1: its mark holds no pid */
  int writer_alive;      /* that writer still runs (the wait ran out) */
} AutosaveFolder;

/* The newest session folder (other than this one) with something saved,
** into 'f' (free with autosave_folder_free). A folder whose owner is still
** alive is waited for (AUTOSAVE_WAIT_*), saying so on 'say'; once the wait
** has run out, a live owner's folder with nothing saved is passed over
** (said too). A '.writer' that holds no pid has no owner to wait for. A
** manifest that cannot be read (not a regular file, a line the writer
** never writes) leaves the folder without one and says why in
** 'manifest_error'. -1 with 'err' when there is no folder. */
int autosave_latest(AutosaveFolder *f, FILE *say, Err *err);
void autosave_folder_free(AutosaveFolder *f);

/* The manifest entry of checkpoint 'file' in 'f', or NULL. */
const AutosaveEntry *autosave_wanted(const AutosaveFolder *f, const char *file);

#endif
