/*
** replay.c -- a journal played again, headless (see replay.h). Its inline
** Host, when entries are applied, its 'ui' table and its "wait" entries:
** docs/architecture.md, 'The replay's host'.
*/
#include <errno.h>
#include <lauxlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/cli.h"
#include "app/replay_check.h"
#include "config.h"
#include "lab/journal.h"
#include "luaapi/luaapi.h"
#include "app/replay.h"
#include "ui/ui.h"

typedef struct Replay {
  JournalFile f;
  const char *path;
  Lab *lab;
  LuaApi *api;
  Host host;
  int next;                /* the next entry to apply */
  int running;             /* ui.toggle's state */
  char sel[64];            /* the selected run */
  int diverged;            /* the steps went apart: 'why' says how */
  char why[ERR_MSG_MAX + 128];
  long tickets;
  int ended;               /* a script was stopped at the final record */
  ReplayPlan plan;         /* sandboxed or not, the heap cap, the recorded command line */
  JournalStep *end_steps;  /* the final record's steps */
} Replay;

/* ------------------------------------------------------------ steps */

/* Stop the replay with a reason ('entry': say at which entry it went apart). */
static void halt(Replay *rp, int entry, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void halt(Replay *rp, int entry, const char *fmt, ...) {
  if (rp->diverged) return;
  rp->diverged = 1;
  /* entries count from 0; the header is the journal's line 1 */
  int n = entry ? snprintf(rp->why, sizeof rp->why, "replay diverged at entry %d (line %d): ", rp->next, rp->next + 2) : 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rp->why + n, sizeof rp->why - (size_t)n, fmt, ap);
  va_end(ap);
  luaapi_interrupt(rp->api);   /* a script that goes on would only go further apart */
}

/* The first run of the lab that 'want' does not name, or NULL. */
static Run *unrecorded_run(Replay *rp, const JournalStep *want, int n) {
  for (int i = 0; i < lab_n_runs(rp->lab); i++) {
    int k = 0;
    while (k < n && strcmp(want[k].name, run_name(lab_run(rp->lab, i))) != 0) k++;
    if (k == n) return lab_run(rp->lab, i);
  }
  return NULL;
}

/* The lab against recorded steps: -1 a run is past its step, missing or
** not recorded ('why' says which), 0 some run is still short of its
** step, 1 all equal. */
static int step_gap(Replay *rp, const JournalStep *want, int n, char *why, size_t cap) {
  int equal = 1;
  for (int i = 0; i < n; i++) {
    Run *r = lab_find(rp->lab, want[i].name);
    long s = r ? run_metrics(r)->step : 0;
    if (!r) snprintf(why, cap, "run %s is not in the lab, recorded at step %ld", want[i].name, want[i].step);
    else if (s > want[i].step) snprintf(why, cap, "run %s at step %ld, recorded %ld", want[i].name, s, want[i].step);
    if (!r || s > want[i].step) return -1;
    if (s < want[i].step) equal = 0;
  }
  Run *extra = unrecorded_run(rp, want, n);
  if (extra) {
    snprintf(why, cap, "run %s is in the lab at step %ld but not in the journal", run_name(extra),
             run_metrics(extra)->step);
    return -1;
  }
  return equal;
}

/* step_gap, and a gap that cannot close (-1) halts the replay. */
static int compare_steps(Replay *rp, const JournalStep *want, int n) {
  char why[ERR_MSG_MAX];
  int gap = step_gap(rp, want, n, why, sizeof why);
  if (gap < 0) halt(rp, 1, "%s", why);
  return gap;
}

static void apply_due(Replay *rp);

/* One step: of run 'id', or every unpaused run in lockstep (-1). */
static int step_once(Replay *rp, int id, Err *err) {
  /* The live lab applies an action between steps as soon as it happens:
  ** an entry due now (a key pressed right after 'n' queued its step) comes
  ** before the step, as it did there. */
  int entry = rp->next;
  apply_due(rp);
  if (rp->diverged || luaapi_stopping(rp->api)) return 0;
  if (rp->next != entry && id >= 0 && !lab_run_by_id(rp->lab, id)) return 0;
  if (id < 0) {
    if (lab_step(rp->lab, err) < 0) return -1;
    if (rp->host.after_step) rp->host.after_step(rp->host.after_step_ctx, lab_max_step(rp->lab));
  } else {
    Run *r = lab_run_by_id(rp->lab, id);
    if (!r) return err_set(err, "the run was removed while it trained");
    if (run_step(r, err) < 0) return -1;
    if (rp->host.after_step) rp->host.after_step(rp->host.after_step_ctx, run_metrics(r)->step);
  }
  apply_due(rp);
  return 0;
}

/* Every unpaused run and no other is short of its recorded step: the
** trainer's continuous training, one lab step at a time. */
static int in_lockstep(Replay *rp, const JournalStep *want, int n) {
  for (int i = 0; i < n; i++) {
    Run *r = lab_find(rp->lab, want[i].name);
    if ((run_metrics(r)->step < want[i].step) != !run_metrics(r)->paused) return 0;
  }
  return 1;
}

/* One step nearer to recorded steps: a lab step, or a step of each short
** run alone. Stops early when a step reached an entry and applied it. */
static int step_towards(Replay *rp, const JournalStep *want, int n, Err *err) {
  if (in_lockstep(rp, want, n)) return step_once(rp, -1, err);
  int entry = rp->next;
  for (int i = 0; i < n && rp->next == entry; i++) {
    Run *r = lab_find(rp->lab, want[i].name);
    if (r && run_metrics(r)->step < want[i].step && step_once(rp, run_id(r), err) < 0) return -1;
  }
  return 0;
}

/* Step until the lab is at the recorded steps of the next entry (or the
** final record), or a step on the way applied that entry. */
static int advance_to(Replay *rp, const JournalStep *want, int n, Err *err) {
  int entry = rp->next, c = 1;
  while (rp->next == entry && (c = compare_steps(rp, want, n)) == 0)
    if (step_towards(rp, want, n, err) < 0) return -1;
  return rp->next == entry && c < 0 ? -1 : 0;
}

/* ------------------------------------------------------------ the inline host */

static Lab *host_acquire(Host *h) { return ((Replay *)h->ud)->lab; }
static void host_release(Host *h) {}
static void host_cancel(Host *h) {}
static int host_poll(Host *h, long ticket, Err *err) { return 1; }

/* Would a step of run 'id' (-1: every unpaused run) go past the final
** record, with no entry left? Then the lab ended while a script
** trained, and the script stops here, as it did. */
static int past_end(Replay *rp, int id) {
  if (rp->next < rp->f.n || !rp->f.has_end) return 0;
  for (int i = 0; i < rp->f.n_end; i++) {
    Run *r = lab_find(rp->lab, rp->f.end[i].name);
    int steps = r && (id < 0 ? !run_metrics(r)->paused : run_id(r) == id);
    if (steps && run_metrics(r)->step >= rp->f.end[i].step) return 1;
  }
  return 0;
}

static long host_submit(Host *h, int id, long n, Err *err) {
  Replay *rp = h->ud;
  for (long k = 0; k < n; k++) {
    if (!rp->ended && past_end(rp, id)) {
      rp->ended = 1;
      fprintf(stderr, "replay: the lab ended while a script trained; it stops here\n");
      luaapi_interrupt(rp->api);
    }
    if (luaapi_stopping(rp->api)) return err_set(err, "interrupted");
    if (step_once(rp, id, err) < 0) return -1;
  }
  return ++rp->tickets;
}

/* ------------------------------------------------------------ the headless 'ui' table */

/* What the lab's training functions of 'ui' (luaapi_open_ui) need of
** the replay: its selected run and whether it trains. Their lines are not
** shown. */
static const char *owner_selected(void *ctx) { return ((Replay *)ctx)->sel; }

static void owner_select(void *ctx, int id, const char *name) {
  Replay *rp = ctx;
  snprintf(rp->sel, sizeof rp->sel, "%s", name);
}

static int owner_running(void *ctx, int on) {
  Replay *rp = ctx;
  if (on >= 0) rp->running = on;
  return rp->running;
}

static int rui_view_only(lua_State *L) { return 0; }

/* __index of 'ui': whatever else the lab's keys call only changes the view. */
static int rui_index(lua_State *L) {
  lua_pushcfunction(L, rui_view_only);
  return 1;
}

static void open_ui(Replay *rp) {
  lua_State *L = luaapi_state(rp->api);
  lua_newtable(L);
  LuaApiUiOwner owner = {.selected = owner_selected, .select = owner_select, .running = owner_running, .ctx = rp};
  luaapi_open_ui(rp->api, &owner);
  lua_newtable(L);
  lua_pushcfunction(L, rui_index);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
  lua_setglobal(L, "ui");
}

/* ------------------------------------------------------------ entries */

static void run_chunk(Replay *rp, const char *chunk) {
  lua_State *L = luaapi_state(rp->api);
  int top = lua_gettop(L);
  if (luaL_loadbuffer(L, chunk, strlen(chunk), "=key") != LUA_OK || lua_pcall(L, 0, 0, 0) != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    fprintf(stderr, "replay: %s: %s\n", chunk, msg ? msg : "error");
  }
  lua_settop(L, top);
}

static void run_script(Replay *rp, const JournalEntry *e) {
  uint64_t hash;
  long size;
  Err err;
  if (journal_file_hash(e->path, &hash, &size, &err) < 0) {
    halt(rp, 0, "replay cannot run the script: %s", err.msg);
    return;
  }
  if (hash != e->hash || size != e->size) {
    halt(rp, 0, "replay: %s changed since it was recorded (%ld bytes, recorded %ld)", e->path, size, e->size);
    return;
  }
  LuaApiStatus st = luaapi_run_file(rp->api, e->path, e->argc, e->argv, &err);
  if (st == LUAAPI_ERROR && err.msg[0]) fprintf(stderr, "replay: %s\n", err.msg);
}

/* A key entry holds the Lua of one of the lab's keys: anything else was
** not written by the lab, and is not run. */
static int is_key_call(const char *lua) {
  int n;
  const UiKey *k = ui_keys(&n);
  for (int i = 0; i < n; i++)
    if (strcmp(k[i].lua, lua) == 0) return 1;
  return 0;
}

static void run_key(Replay *rp, const JournalEntry *e) {
  if (is_key_call(e->lua)) run_chunk(rp, e->lua);
  else   /* rp->next is past this entry already */
    halt(rp, 0, "replay refused entry %d (line %d): a key entry whose Lua is no key of the lab: %.200s", rp->next - 1,
         rp->next + 1, e->lua);
}

static void apply(Replay *rp, const JournalEntry *e) {
  if (e->sel[0]) snprintf(rp->sel, sizeof rp->sel, "%s", e->sel);
  /* held as the live lab held it for the journal: the same steps refused */
  luaapi_hold_lab(rp->api, e->kind != JOURNAL_SCRIPT);
  switch (e->kind) {
    case JOURNAL_KEY: run_key(rp, e); break;
    case JOURNAL_LINE: luaapi_eval_line(rp->api, e->lua); break;
    case JOURNAL_BINDING: luaapi_key(rp->api, e->code); break;
    case JOURNAL_SCRIPT: run_script(rp, e); break;
    case JOURNAL_WAIT: break;   /* never applied: a script's lab.wait_key takes it (replay_wait_answer) */
  }
  if (e->kind != JOURNAL_SCRIPT) luaapi_hold_lab(rp->api, 0);
}

static const char *answer_name(int answer) { return answer ? "true" : "false"; }

/* Apply every entry whose recorded steps the lab has reached, in order.
** A wait entry stops it: the next lab.wait_key takes it; a lab that went
** past its steps without asking diverged there. */
static void apply_due(Replay *rp) {
  while (!rp->diverged && rp->next < rp->f.n) {
    const JournalEntry *e = &rp->f.e[rp->next];
    if (e->kind == JOURNAL_WAIT) {
      char why[ERR_MSG_MAX];
      if (step_gap(rp, e->runs, e->n_runs, why, sizeof why) < 0)
        halt(rp, 1, "the recorded answer of lab.wait_key (%s, at step %ld) was never asked for: %s",
             answer_name(e->answer), e->step, why);
      return;
    }
    if (compare_steps(rp, e->runs, e->n_runs) != 1) return;
    rp->next++;   /* first: the entry may step, and steps look for the next one */
    apply(rp, e);
  }
}

/* ------------------------------------------------------------ lab.wait_key's answers */

/* Where the lab goes next: the next entry's steps, or the final record's. */
static int next_steps(Replay *rp, const JournalStep **want) {
  if (rp->next < rp->f.n) {
    *want = rp->f.e[rp->next].runs;
    return rp->f.e[rp->next].n_runs;
  }
  *want = rp->end_steps;
  return rp->f.has_end ? rp->f.n_end : -1;
}

/* Take the wait entry 'e' (the next one) as lab.wait_key's answer. */
static int take_answer(Replay *rp, const JournalEntry *e) {
  rp->next++;
  if (e->sel[0]) snprintf(rp->sel, sizeof rp->sel, "%s", e->sel);
  return e->answer;
}

/* Say why lab.wait_key, asked now, has no answer in the journal: 'e' the
** next entry (NULL: none left), 'gap' and 'why' the lab against its steps. */
static void wait_diverged(Replay *rp, const JournalEntry *e, int gap, const char *why) {
  long now = lab_max_step(rp->lab);
  if (!e)
    halt(rp, 1, "the script asks lab.wait_key at step %ld, and the journal holds no more of its answers", now);
  else if (e->kind != JOURNAL_WAIT)
    halt(rp, 1, "the script asks lab.wait_key at step %ld, where the journal has no answer: its next entry is a %s at step %ld",
         now, journal_kind_name(e->kind), e->step);
  else if (gap < 0)
    halt(rp, 1, "the script asks lab.wait_key where its recorded answer (%s) was not given: %s", answer_name(e->answer), why);
  else
    halt(rp, 1, "the script asks lab.wait_key at step %ld, its recorded answer (%s) came at step %ld, and the lab was not training",
         now, answer_name(e->answer), e->step);
}

/* The host's 'wait_answer': no key can come in a replay, so every
** lab.wait_key takes the journal's next answer, at the steps where the
** lab gave it. The entries due first are applied (the '.' key's own
** among them); while the lab trains (ui.toggle, ui.running) it steps
** towards the answer, as the lab trained during the wait, applying the
** entries on the way at their steps. Anything else diverged: the replay
** halts, and the script stops. */
static int replay_wait_answer(void *ctx, int pressed) {
  Replay *rp = ctx;
  for (;;) {
    apply_due(rp);
    if (rp->diverged || luaapi_stopping(rp->api)) return 0;
    const JournalEntry *e = rp->next < rp->f.n ? &rp->f.e[rp->next] : NULL;
    const JournalStep *want;
    char why[ERR_MSG_MAX] = "";
    int n = next_steps(rp, &want), gap = n < 0 ? -1 : step_gap(rp, want, n, why, sizeof why);
    if (e && e->kind == JOURNAL_WAIT && gap == 1) return take_answer(rp, e);
    if (!e && gap == 1) {   /* the lab ended while the script waited */
      if (!rp->ended) fprintf(stderr, "replay: the lab ended while a script waited for '.'; it stops here\n");
      rp->ended = 1;
      luaapi_interrupt(rp->api);
      return 0;
    }
    if (gap != 0 || !rp->running) {
      wait_diverged(rp, e, gap, why);
      return 0;
    }
    Err err;
    if (step_towards(rp, want, n, &err) < 0) {
      halt(rp, 1, "a step towards the recorded answer of lab.wait_key failed: %s", err.msg);
      return 0;
    }
  }
}

/* ------------------------------------------------------------ start and end */

static void replay_out(void *ctx, const char *s, size_t n, int is_err) { fwrite(s, 1, n, is_err ? stderr : stdout); }

static void replay_log(void *ctx, LuaApiLog kind, const char *msg) {
  if (kind == LUAAPI_LOG_CAPTION) {
    if (*msg) printf("== %s ==\n", msg);
  } else {
    fprintf(stderr, "%s\n", msg);
  }
}

/* The lab, and the Lua state that replays into it. */
static int start_lua(Replay *rp, Err *err) {
  const CliOptions *o = &rp->plan.rec;
  if (!(rp->lab = lab_new(err))) return -1;
  rp->running = !o->script;   /* the lab trains from the start unless a script leads */
  rp->host = (Host){.acquire = host_acquire, .release = host_release, .submit = host_submit, .poll = host_poll,
                    .cancel = host_cancel, .inline_steps = 1, .ud = rp,
                    .wait_answer = replay_wait_answer, .wait_answer_ctx = rp};
  LuaApiOptions lo = {.heap_cap = rp->plan.heap_cap, .sandbox = rp->plan.sandbox, .out = replay_out,
                      .log = replay_log, .ctx = rp, .defaults = &o->run};
  if (!(rp->api = luaapi_new(&rp->host, &lo, err))) return -1;
  open_ui(rp);
  return 0;
}

/* The header's runs, made as a script's lab.run makes them: sandboxed,
** their corpora obey the sandbox and their memory counts against the cap. */
static int build_lab(Replay *rp, Err *err) {
  for (int i = 0; i < rp->f.n_start; i++) {
    const JournalRun *jr = &rp->f.start[i];
    if (luaapi_add_run(rp->api, &jr->opt, err) < 0) return err_prefix(err, "%s: run %s", rp->path, jr->name);
  }
  if (lab_n_runs(rp->lab) > 0) snprintf(rp->sel, sizeof rp->sel, "%s", run_name(lab_run(rp->lab, 0)));
  return 0;
}

/* One line per run; returns how many figures differ. */
static int compare_end(Replay *rp) {
  int differ = 0;
  for (int i = 0; i < rp->f.n_end; i++) {
    const JournalRun *jr = &rp->f.end[i];
    Run *r = lab_find(rp->lab, jr->name);
    if (!r) {
      printf("%s: not in the replayed lab\n", jr->name);
      differ++;
      continue;
    }
    char m[JOURNAL_N_METRICS][JOURNAL_METRIC_CHARS];
    journal_metrics(r, m);
    printf("%s: step %ld, loss %.6f", jr->name, run_metrics(r)->step, run_metrics(r)->loss);
    int same = 1;
    for (int k = 0; k < JOURNAL_N_METRICS; k++) {
      if (strcmp(m[k], jr->metric[k]) == 0) continue;
      printf("%s %s %s (recorded %s)", same ? ": differs:" : ",", journal_metric_name(k), m[k], jr->metric[k]);
      same = 0;
      differ++;
    }
    printf("%s\n", same ? ", every figure the same" : "");
  }
  return differ;
}

/* The final record's runs as steps to reach. */
static int read_end_steps(Replay *rp, Err *err) {
  rp->end_steps = calloc((size_t)rp->f.n_end + 1, sizeof *rp->end_steps);
  if (!rp->end_steps) return err_set(err, "out of memory");
  for (int i = 0; i < rp->f.n_end; i++) {
    snprintf(rp->end_steps[i].name, sizeof rp->end_steps[i].name, "%s", rp->f.end[i].name);
    rp->end_steps[i].step = rp->f.end[i].step;
  }
  return 0;
}

static int replay_run(Replay *rp, Err *err) {
  while (!rp->diverged && rp->next < rp->f.n) {
    const JournalEntry *e = &rp->f.e[rp->next];
    if (e->kind == JOURNAL_WAIT) {   /* only a script's lab.wait_key takes it, and none runs now */
      halt(rp, 1, "the recorded answer of lab.wait_key (%s, at step %ld) was never asked for: no script waits",
           answer_name(e->answer), e->step);
      break;
    }
    if (advance_to(rp, e->runs, e->n_runs, err) < 0 && !rp->diverged) return -1;
    apply_due(rp);
  }
  if (rp->diverged) return 0;
  if (!rp->f.has_end) return err_set(err, "%s: no final record (the lab did not end); %d entries replayed",
                                     rp->path, rp->f.n);
  rp->next = rp->f.n;   /* "at entry n": the final record */
  int rc = advance_to(rp, rp->end_steps, rp->f.n_end, err);
  return rc < 0 && !rp->diverged ? -1 : 0;
}

/* A journal of another tielab replays with this one's code: what a
** setting defaults to, or what a preset sets, may not be what the recorded
** lab had. It goes on: the final figures decide. */
static void warn_version(const Replay *rp) {
  if (strcmp(rp->f.version, PACKAGE_VERSION) == 0) return;
  fprintf(stderr,
          "replay: warning: %s was recorded by tielab %s, this is tielab %s: settings' defaults or presets "
          "(recipe=olmo, ...) may have changed\n",
          rp->path, rp->f.version[0] ? rp->f.version : "(version unknown)", PACKAGE_VERSION);
}

/* A journal is code: its entries are Lua, and its header names a folder.
** Trusted (--trust), it replays as recorded: in the recorded folder,
** sandboxed only if the lab was. Otherwise its Lua runs under the sandbox,
** here. The user's own --sandbox always holds. Says which on one line, and
** on a second what its Lua (and, sandboxed, its runs) may take. */
static int choose_trust(Replay *rp, const CliOptions *user, Err *err) {
  char here[4096];
  if (user->trust && rp->f.cwd[0] && chdir(rp->f.cwd) != 0)
    return err_set(err, "%s: cannot enter the recorded lab's folder %s: %s", rp->path, rp->f.cwd, strerror(errno));
  if (!getcwd(here, sizeof here)) snprintf(here, sizeof here, ".");
  if (user->trust)
    printf("replay: trusted, in the recorded folder %s%s\n", here, rp->plan.sandbox ? ", sandboxed" : "");
  else
    printf("replay: sandboxed in %s (not the recorded folder %s): --trust replays as recorded\n", here,
           rp->f.cwd[0] ? rp->f.cwd : "(none)");
  printf("replay: the Lua heap%s may take %zu MiB (the lower of --lua-mem and the journal's)\n",
         rp->plan.sandbox ? " and the runs" : "", rp->plan.heap_cap >> 20);
  return 0;
}

int replay_main(const CliOptions *user) {
  Replay rp;
  memset(&rp, 0, sizeof rp);
  const char *path = user->replay;
  rp.path = path;
  Err err = {{0}};
  int rc = journal_read(path, &rp.f, &err);
  if (rc == 0) warn_version(&rp);
  if (rc == 0) rc = read_end_steps(&rp, &err);
  if (rc == 0) rc = replay_plan(&rp.f, path, user, &rp.plan, &err);
  if (rc == 0) rc = choose_trust(&rp, user, &err);
  if (rc == 0) rc = replay_check(&rp.f, path, &rp.plan, &err);
  if (rc == 0) rc = start_lua(&rp, &err);
  if (rc == 0) rc = build_lab(&rp, &err);
  if (rc == 0) rc = replay_run(&rp, &err);
  int status = EXIT_RUNTIME;
  if (rc < 0) {
    fprintf(stderr, "tielab: %s\n", err.msg);
  } else if (rp.diverged) {
    printf("%s\n", rp.why);
  } else if (rp.f.n_end == 0) {
    printf("replay: nothing to compare: the lab ended with no runs (%d entr%s replayed)\n", rp.f.n,
           rp.f.n == 1 ? "y" : "ies");
  } else if (compare_end(&rp) == 0) {
    printf("replay: metrics match bit for bit (%d run%s, %d entr%s)\n", rp.f.n_end, rp.f.n_end == 1 ? "" : "s", rp.f.n,
           rp.f.n == 1 ? "y" : "ies");
    status = EXIT_OK;
  } else {
    printf("replay: metrics differ from the recorded run\n");
  }
  luaapi_free(rp.api);
  lab_free(rp.lab);
  free(rp.end_steps);
  journal_file_free(&rp.f);
  return status;
}
