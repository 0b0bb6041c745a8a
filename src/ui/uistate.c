/*
** uistate.c -- the screen's shared state, as every file of src/ui changes
** or asks about it: which panels to draw again, the message on the hint
** line, the selected run, which runs are saved at which step and the
** saving of them all, quitting, and a key's Lua call. ui.c starts and ends
** the lab around it.
*/
#include <errno.h>
#include <lauxlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/safeopen.h"
#include "base/text.h"
#include "lab/autosave.h"
#include "ui/uistate.h"

void ui_dirty(Ui *ui, unsigned bits) { ui->dirty |= bits; }

/* A message may quote a script's text or a file name: its control
** characters are shown as print shows them, never sent to the terminal. */
void ui_message(Ui *ui, int role, const char *fmt, ...) {
  char raw[sizeof ui->msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(raw, sizeof raw, fmt, ap);
  va_end(ap);
  text_escape(raw, strlen(raw), ui->msg, sizeof ui->msg);
  ui->msg_role = role;
  ui->msg_until = clock_seconds() + 5;
  ui_dirty(ui, 1u << P_HINT);
  if (!ui->screen) {   /* the line REPL has no hint line: print it */
    char line[sizeof ui->msg + 1];
    int n = snprintf(line, sizeof line, "%s\n", ui->msg);
    ui_line_print(line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1, role == ROLE_ERROR);
  }
}

const TrainerRun *ui_selected(const Ui *ui) {
  const TrainerRun *r = trainer_snap_find(ui->snap, ui->sel_id);
  return r ? r : ui->snap->n_runs > 0 ? &ui->snap->runs[0] : NULL;
}

const char *ui_entry_add(Ui *ui, const char *line) {
  size_t old = ui->entry ? strlen(ui->entry) : 0, n = strlen(line);
  char *entry = realloc(ui->entry, old + n + 2);
  if (!entry) return NULL;
  if (old) entry[old++] = '\n';
  memcpy(entry + old, line, n + 1);
  return ui->entry = entry;
}

/* The state folder belongs to autosave.c; the UI keeps its name for it.
** readline opens the file there (the REPL's history) as it is, and would
** wait forever on a FIFO: anything but a regular file (or none yet) is
** refused, and said on stderr. */
int ui_state_path(char *buf, size_t cap, const char *leaf, Err *err) {
  if (autosave_state_path(buf, cap, leaf, err) < 0) return -1;
  errno = 0;
  int fd = safeopen_read(buf, 0, NULL, err);
  if (fd >= 0) close(fd);
  if (fd >= 0 || errno == ENOENT) return 0;
  fprintf(stderr, "tielab: %s (the REPL's history is neither read nor kept)\n", err->msg);
  return -1;
}

/* ------------------------------------------------------------ saving */

static SavedStep *saved_for(Ui *ui, int id) {
  for (int i = 0; i < ui->n_saved; i++)
    if (ui->saved[i].id == id) return &ui->saved[i];
  SavedStep *p = realloc(ui->saved, sizeof *p * (size_t)(ui->n_saved + 1));
  if (!p) return NULL;
  ui->saved = p;
  p[ui->n_saved] = (SavedStep){id, 0};
  return &p[ui->n_saved++];
}

/* Out of memory, the run merely counts as unsaved: quitting asks once more. */
void ui_mark_saved(Ui *ui, int id, long step) {
  SavedStep *s = saved_for(ui, id);
  if (s) s->step = step;
}

int ui_unsaved(const Ui *ui) {
  int n = 0;
  for (int i = 0; i < ui->snap->n_runs; i++) {
    const TrainerRun *r = &ui->snap->runs[i];
    long saved = 0;
    for (int k = 0; k < ui->n_saved; k++)
      if (ui->saved[k].id == r->id) saved = ui->saved[k].step;
    if (r->m.step != saved) n++;
  }
  return n;
}

/* "tied (step 812), untied (step 812)": one run more in 'buf'. */
static void note_run(char *buf, size_t cap, const char *name, long step) {
  size_t n = strlen(buf);
  if (n + 1 < cap) snprintf(buf + n, cap - n, "%s%s (step %ld)", n ? ", " : "", name, step);
}

/* What ui_save_all hears of each run: marked saved, and named in the note. */
typedef struct SaveNote {
  Ui *ui;
  char runs[2048];
} SaveNote;

static void saved_run(void *ctx, Run *r, const Err *failed) {
  SaveNote *n = ctx;
  if (!r || failed) return;   /* the first failure is the one said */
  ui_mark_saved(n->ui, run_id(r), run_metrics(r)->step);
  note_run(n->runs, sizeof n->runs, run_name(r), run_metrics(r)->step);
}

/* Save every run into the autosave folder; 'saved_note' then says which
** runs went where. */
int ui_save_all(Ui *ui, Err *err) {
  char dir[4096];
  SaveNote note = {.ui = ui};
  /* A folder that cannot be had fails the save before anything stops: the
  ** lab goes on as it was, its fit too. */
  if (autosave_dir(dir, sizeof dir, err) < 0) return -1;
  /* Saving ends the session: a job (a lens fit) stops at its next lens
  ** step, leaving the lab as before it, instead of keeping the save
  ** waiting for all of it. */
  trainer_stop_jobs(ui->trainer);
  watchdog_busy(ui->watchdog, 1);   /* a save ends by itself: no deadline cuts it short */
  Lab *lab = trainer_acquire(ui->trainer);
  int rc = autosave_lab(lab, dir, sizeof dir, saved_run, &note, err);
  trainer_release(ui->trainer);
  watchdog_busy(ui->watchdog, 0);
  if (rc == 0) {
    size_t cap = strlen(note.runs) + strlen(dir) + 32;
    char *text = malloc(cap);
    if (text) snprintf(text, cap, "saved %s to %s", note.runs[0] ? note.runs : "no run", dir);
    free(ui->saved_note);
    ui->saved_note = text;
  }
  return rc;
}

void ui_request_quit(Ui *ui, int save) {
  if (save < 0 && ui_unsaved(ui) > 0) {
    ui->ask = ASK_QUIT;
    ui_dirty(ui, 1u << P_HINT);
    return;
  }
  if (save > 0) {
    Err err = {{0}};
    if (ui_save_all(ui, &err) < 0) {
      ui_message(ui, ROLE_ERROR, "not quitting: %s", err.msg);
      return;
    }
  }
  ui->quit = 1;
}

/* ------------------------------------------------------------ Lua */

void ui_lua(Ui *ui, const char *chunk) {
  lua_State *L = luaapi_state(ui->api);
  int top = lua_gettop(L);
  if (luaL_loadbuffer(L, chunk, strlen(chunk), "=key") != LUA_OK || lua_pcall(L, 0, 0, 0) != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    ui_message(ui, ROLE_ERROR, "%s: %s", chunk, msg ? msg : "error");
  }
  lua_settop(L, top);
}
