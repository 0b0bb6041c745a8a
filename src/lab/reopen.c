/* reopen.c -- see reopen.h. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "lab/autosave.h"
#include "lab/reopen.h"

/* Notes are of any number of runs, in Bufs: memory that runs out cuts a
** note short, never loses the lab. Lists take ", " between runs, "; "
** between the parts of a note. */

/* What the folder falls short of its save by: the runs it lists and that
** are not there, those of an earlier step, checkpoints of runs the save no
** longer held, and checkpoints that could not be reopened (each with why). */
typedef struct {
  Buf missing, stale, extra, unreadable, resumed;
} Shortfall;

static void shortfall_free(Shortfall *sf) {
  Buf *all[] = {&sf->missing, &sf->stale, &sf->extra, &sf->unreadable, &sf->resumed};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) buf_free(all[i]);
}

/* 'msg' without the "<path>: " that lab_load puts in front of it: the note
** names the file and ends with its folder. */
static const char *reason(const char *msg, const char *path) {
  size_t n = strlen(path);
  return strncmp(msg, path, n) == 0 && strncmp(msg + n, ": ", 2) == 0 ? msg + n + 2 : msg;
}

/* Load checkpoint 'file' of 'f' into 'lab', noting how it went in 'sf'. */
static void reopen_one(Lab *lab, const AutosaveFolder *f, const char *file, Shortfall *sf) {
  const AutosaveEntry *want = autosave_wanted(f, file);
  if (f->n_want >= 0 && !want) {
    buf_item(&sf->extra, ", ", "%s", file);
    return;
  }
  char path[4400];
  snprintf(path, sizeof path, "%s/%s", f->dir, file);
  Err err = {{0}};
  LabLoadOptions lo = {.nofollow = 1, .checkpoint_only = 1};   /* the folder holds only what tielab wrote there */
  Run *r = lab_load_with(lab, path, &lo, &err);
  if (!r && want) buf_item(&sf->unreadable, "; ", "cannot reopen %s (%s, step %ld): %s", file, want->name,
                           want->step, reason(err.msg, path));
  else if (!r) buf_item(&sf->unreadable, "; ", "cannot reopen %s: %s", file, reason(err.msg, path));
  if (!r) return;
  long step = run_metrics(r)->step;
  buf_item(&sf->resumed, ", ", "%s (step %ld)", run_name(r), step);
  if (want && want->step != step) buf_item(&sf->stale, ", ", "%s (step %ld, not %ld)", run_name(r), step, want->step);
}

/* The manifest's runs whose checkpoint is not among 'names'. */
static void note_missing(const AutosaveFolder *f, char **names, int n, Shortfall *sf) {
  for (int i = 0; i < f->n_want; i++) {
    int found = 0;
    for (int k = 0; k < n && !found; k++) found = strcmp(f->want[i].file, names[k]) == 0;
    if (!found) buf_item(&sf->missing, ", ", "%s (step %ld)", f->want[i].name, f->want[i].step);
  }
}

/* Why runs are missing or older, after the list of them. */
static void why_short(const AutosaveFolder *f, Buf *t) {
  if (f->writer_alive) buf_printf(t, " (process %ld is still writing it)", f->writer);
  else if (f->writer > 0) buf_printf(t, " (process %ld ended before its save was complete)", f->writer);
  else if (f->writer < 0) buf_printf(t, " (its writer's mark, %s, holds no process id)", AUTOSAVE_WRITER);
  else buf_printf(t, " (the folder no longer holds what its save wrote)");
}

/* What falls short, in 'note' ("" when nothing does). */
static void shortfall_note(const AutosaveFolder *f, const Shortfall *sf, Buf *note) {
  const struct {
    const char *title;
    const Buf *list;
  } parts[] = {{"not found: ", &sf->missing}, {"older than saved: ", &sf->stale},
               {"left out, not in the lab saved: ", &sf->extra}};
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
    if (parts[i].list->n) buf_item(note, "; ", "%s%s", parts[i].title, parts[i].list->s);
  if (note->n) why_short(f, note);
  if (sf->unreadable.n) buf_item(note, "; ", "%s", sf->unreadable.s);
  if (f->manifest_error[0]) buf_item(note, "; ", "manifest not read, every checkpoint reopened: %s", f->manifest_error);
}

/* The note from what happened: -1 with 'err' when nothing came back. */
static int conclude(const AutosaveFolder *f, Shortfall *sf, Reopened *out, FILE *say, Err *err) {
  Buf note = {0};
  shortfall_note(f, sf, &note);
  out->short_ = note.n > 0;
  if (!sf->resumed.n) {
    /* An error is one line of ERR_MSG_MAX bytes: a longer list goes to 'say' whole. */
    int fits = strlen(f->dir) + note.n + 32 < ERR_MSG_MAX;
    if (!fits && say) fprintf(say, "tielab: %s\n", note.s);
    if (!fits) err_set(err, "nothing to resume in %s: nothing in it could be reopened (named above)", f->dir);
    else err_set(err, "nothing to resume in %s%s%s", f->dir, note.n ? ": " : "", note.n ? note.s : "");
    free(note.s);
    return -1;
  }
  buf_item(&note, "; ", "resumed %s from %s", sf->resumed.s, f->dir);
  if (out->short_ && say && note.s) fprintf(say, "tielab: %s\n", note.s);
  out->note = note.s;
  return 0;
}

int reopen_latest(Lab *lab, FILE *say, Reopened *out, Err *err) {
  AutosaveFolder f;
  char **names = NULL;
  memset(out, 0, sizeof *out);
  if (autosave_latest(&f, say, err) < 0) return -1;
  int n = autosave_list(f.dir, &names, err), rc = -1;
  if (n >= 0) {
    Shortfall sf = {0};
    for (int i = 0; i < n; i++) reopen_one(lab, &f, names[i], &sf);
    note_missing(&f, names, n, &sf);
    rc = conclude(&f, &sf, out, say, err);
    shortfall_free(&sf);
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
  }
  autosave_folder_free(&f);
  return rc;
}

void reopen_free(Reopened *r) {
  free(r->note);
  r->note = NULL;
}
