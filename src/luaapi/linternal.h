/*
** linternal.h -- what the files of the Lua binding share: the LuaApi
** structure, script coroutines, the lock on the lab, protected calls and
** the entry points of each file. Outsiders include luaapi.h only. What
** each file of src/luaapi/ holds: docs/architecture.md, 'The binding's
** files'.
*/
#ifndef TIELAB_LINTERNAL_H
#define TIELAB_LINTERNAL_H

#include <limits.h>
#include <stdatomic.h>

#include <lauxlib.h>
#include <lua.h>

#include "base/buf.h"
#include "lab/steer.h"
#include "luaapi/lmatrix.h"
#include "luaapi/luaapi.h"

/* Where 'make install' puts the scripts (Makefile.am defines it). */
#ifndef TIELAB_DATADIR
#define TIELAB_DATADIR "/usr/local/share/tielab"
#endif

#define LAPI_RUN_META "tielab.run"
#define LAPI_HOOK_EVERY 1000      /* instructions between interrupt checks */
#define LAPI_SLICE_SECONDS 0.05   /* a UI script yields after this long */
#define LAPI_CLOSE_DEPTH 100      /* coroutine.close calls nested in '__close' handlers */
#define LAPI_CLOSE_STACK (1 << 20) /* bytes of C stack those may take */

/* Why a script coroutine is not running. */
typedef enum Wait { WAIT_READY, WAIT_TICKET, WAIT_TIME, WAIT_KEY } Wait;

#define LAPI_PRINTED_MAX (1 << 20)   /* bytes of a script's output kept for its results */

typedef struct Script {
  lua_State *co;
  int ref;            /* keeps the thread alive in the registry */
  int repl;           /* a REPL entry: print what it returns */
  int nargs;          /* values on its stack for the first resume */
  Wait wait;
  long ticket;
  double wake_at;     /* monotonic seconds (WAIT_TIME, and WAIT_KEY when > 0) */
  int advanced;       /* the speaker's '.' ended its wait */
  int result;         /* of the ticket: 1 done, -1 failed */
  Err err;
} Script;

/* lhooks.c: a run's step hooks, one per run that has any. */
typedef struct RunHooks RunHooks;

struct LuaApi {
  lua_State *L;
  Host *host;
  LuaApiOptions opt;
  size_t mem_used, mem_cap;
  /* Under the sandbox the runs a script makes count against mem_cap too:
  ** their ids and estimated bytes, and the sum. */
  struct { int id; size_t bytes; } *own_runs;
  int n_own_runs, cap_own_runs;
  size_t own_runs_bytes;
  atomic_int interrupt;
  int depth;              /* nesting of top-level calls */
  int close_depth;        /* nesting of coroutine.close calls */
  const void *close_base; /* the C stack at the outermost one */
  int exit_code;
  int exiting;            /* os.exit was called: the script ends, however it is wrapped */
  int errors_to_caller;   /* an error is only returned (the init file's: its caller says it once) */
  int locks;              /* lapi_lock calls not yet matched by lapi_unlock */
  Lab *lab;               /* valid while locks > 0 */
  int warn_on, warn_cont; /* the state of Lua's warning system */
  char carry[2][4];       /* per stream: the start of a character the next write ends */
  size_t n_carry[2];
  char last_error[ERR_MSG_MAX];
  lua_State *stepping;    /* the thread inside a stepping call, for after_step */
  int in_callback;        /* on_step callbacks are running */
  Script *scripts;
  int n_scripts, cap_scripts;
  int running;            /* index of the script being resumed, or -1 */
  double slice_end;
  long lab_step;          /* last step reported by the host */
  int next_hook;          /* id of the next lab.on_step callback */
  int watching;           /* the host hands every step over to the callbacks */
  int paused;             /* the script files wait (the speaker's ',') */
  int lab_held;           /* the caller holds the lab across this call (luaapi_hold_lab) */
  int follower;           /* a rank other than 0 of an mpirun job: its writes go nowhere */
  int phase;              /* lab.phase calls so far */
  long progress_id;       /* lab.progress calls so far: the newest is shown */
  Buf printed;            /* what the script files running print (max LAPI_PRINTED_MAX) */
  Buf results;            /* what the last one to end had printed */
  long results_seq;       /* grows each time a script file ends having printed */
  History *plots;
  /* step hooks (lhooks.c) */
  RunHooks *run_hooks;
  lua_State *hook_L;      /* the thread hooks run on */
  int hook_ref;
  int in_hook;            /* a hook runs: the step is in progress */
  int hooks_closed;       /* lhooks_free ran: no hook is added or installed */
  int hook_run;           /* its run's id */
  struct Model *hook_model; /* its run's model, as it is at that step */
  Lab *hook_lab;          /* the lab, lent without waiting while a hook runs */
  char caption[256];
  char cwd[PATH_MAX], script_dir[PATH_MAX], data_dir[PATH_MAX];
};

/* luaapi.c */
LuaApi *lapi_get(lua_State *L);
/* Push the list in the registry at 'key' and a copy of it, to walk while
** what is walked changes the list; returns the copy's index, '*n' its length. */
int lapi_push_list_copy(lua_State *L, const char *key, lua_Integer *n);
Lab *lapi_lock(LuaApi *api);
void lapi_unlock(LuaApi *api);
void lapi_unlock_all(LuaApi *api);
int lapi_view(LuaApi *api, int id, HostViewFn fn, void *ctx);
void lapi_write(LuaApi *api, const char *s, size_t n, int is_err);
/* The handle metatable at -2 gets the table of methods on top (popped) as
** its __methods, an __index closure 'index' with that table as upvalue,
** and package.loaded[name] is that table too (so methods have names in
** argument errors: "bad argument #2 to 'tielab.run.step'"). */
void lapi_set_methods(lua_State *L, const char *name, lua_CFunction index);
/* The message of lab.args's error object at 'idx' (a bad script argument),
** or NULL for any other value. */
const char *largs_usage_message(lua_State *L, int idx);
/* lpath.c: the sandbox's verdict on a path a script names; 'real' gets
** the name to open (the resolved one under the sandbox, else the name as
** given). */
typedef enum PathVerdict { PATH_OK, PATH_OUTSIDE, PATH_LINK, PATH_BAD } PathVerdict;
PathVerdict lapi_path_resolve(LuaApi *api, const char *path, int write, char real[PATH_MAX]);
/* The sandbox's first look at 'path', by its letters alone: 'lex' gets it
** absolute with "." and ".." taken out (under the sandbox; else as given),
** and PATH_OUTSIDE says it points outside, no file looked at. */
PathVerdict lapi_path_lexical(LuaApi *api, const char *path, int write, char lex[PATH_MAX]);
const char *lapi_path_refusal(PathVerdict v);
int lapi_path_ok(LuaApi *api, const char *path, int write);
/* Raise the sandbox's refusal, or return the name to open ('real'). */
const char *lapi_check_path(lua_State *L, const char *fname, const char *path, int write, char real[PATH_MAX]);
/* The string (or number) at 'idx' as a name: one with a NUL byte raises,
** for C would cut it short there. */
const char *lapi_name_arg(lua_State *L, int idx, const char *fname);
/* lapi_name_arg, then lapi_check_path. */
const char *lapi_path_arg(lua_State *L, int idx, const char *fname, int write, char real[PATH_MAX]);
/* A corpus policy for lab_load_with on the sandbox's rule (lapi_path_ok,
** reading); 'ctx' is a LapiCorpusGuard, which keeps the corpus it refused. */
typedef struct LapiCorpusGuard {
  LuaApi *api;
  int refused;
  char corpus[1024];
} LapiCorpusGuard;
int lapi_corpus_allowed(void *ctx, char *corpus, size_t cap);
void lapi_set_script_dir(LuaApi *api, const char *script);

/* lfile.c: load the chunk of file 'path' (named 'name' in its chunk name
** and messages) in 'mode' ("t", or NULL for text or binary), as
** luaL_loadfilex does, never waiting on a FIFO or a device: the status,
** and the chunk or the message on the stack. */
int lapi_load_file(lua_State *L, const char *path, const char *name, const char *mode);
/* The same for a script or an init file the user named: it may be a FIFO
** or a pipe (tielab --headless <(...)), waited for until a writer wrote
** while a stop (Ctrl-C) is listened to. */
int lapi_load_script(lua_State *L, const char *path, const char *mode);
/* The index of io.open's 'mode' ("r", "w+", "ab", ...), or -1 when it is
** none; whether that mode writes. */
int lapi_file_mode(const char *mode);
int lapi_mode_writes(int mode);
/* Push a Lua file handle for the regular file 'path' opened in 'mode' and
** return 1; or return 0 with errno set (0: refused for what it is, a FIFO
** or a device) and 'why' saying it, without the name. */
int lapi_open_handle(lua_State *L, const char *path, int mode, char *why, size_t cap);
/* Push a handle that writes to /dev/null (a follower rank's); 0 when it
** cannot be opened. */
int lapi_open_null(lua_State *L);
/* Close the handle at 'idx' if lapi_open_handle made it and it is open. */
void lapi_close_handle(lua_State *L, int idx);

/* lrequire.c: package.searchpath on the sandbox's rule: the file's name
** pushed (1), or nil and what was tried (0). */
int lapi_searchpath(lua_State *L, const char *name, const char *path, const char *sep, const char *rep);
/* require's searcher for Lua files on package.path. */
int lapi_path_searcher(lua_State *L);
/* Put the searcher of the running script's folder after preload. */
void lapi_add_script_searcher(lua_State *L);

/* lsandbox.c: make the state a sandbox (luaapi_new, with 'sandbox'). */
void lapi_sandbox(lua_State *L);
/* Give the metatable at 'idx' a __metatable field: getmetatable then
** returns a copy of its public fields (__name, __methods, __fields), never
** the table itself, so that no finaliser can be swapped into it. */
void lapi_seal_metatable(lua_State *L, int idx);
/* The memory of the runs a sandboxed script made counts against its heap
** cap: what a new run may take (0: no limit), a run made (0, or -1 out of
** memory) and a run gone. */
size_t lapi_run_budget(LuaApi *api);
int lapi_own_run(LuaApi *api, int id, size_t bytes);
void lapi_forget_run(LuaApi *api, int id);

/* lscript.c */
/* $XDG_DATA_HOME/tielab (else ~/.local/share/tielab) into 'dir'; 0 when
** neither variable gives an absolute folder. */
int lapi_user_data_dir(char dir[PATH_MAX]);
/* The installed scripts: BIN/../share/tielab beside a binary in a bin/
** folder, where that exists, else TIELAB_DATADIR. */
const char *lapi_data_dir(void);
/* Wrap dofile and loadfile so that a bare name not in the working
** directory is looked for beside the running script. */
void lapi_find_beside_script(lua_State *L);

/* lcall.c */
void lapi_enter(LuaApi *api);
void lapi_leave(LuaApi *api);
int lapi_docall(lua_State *L, int narg, int nres);
LuaApiStatus lapi_report(LuaApi *api, lua_State *L, int status);
int lapi_message(lua_State *L);
int lapi_protect(LuaApi *api, lua_CFunction f, void *ud);
void lapi_install_hook(lua_State *L);
void lapi_hook_soon(lua_State *L);
int lapi_stop_pending(const LuaApi *api);
int lapi_raise_stop(lua_State *L);
void lapi_guard_catchers(lua_State *L);

/* lsched.c */
int lapi_wait_steps(lua_State *L, int id, long n, lua_KContext ctx, lua_KFunction k);
int lapi_step_result(lua_State *L);
/* A job (host.h) waited for as steps are: 'lapi_push_job' pushes its
** handle, a to-be-closed value that owns 'arg' until 'lapi_wait_job'
** submits it and drops the job when closed; 'k' then reads 'arg' (the job
** ended) through the handle, at its stack index, and a failure raises
** through lapi_step_result as a step's does. */
typedef struct LapiJob {
  Host *host;
  long ticket;            /* -1: not submitted (or dropped) */
  void *arg;
  HostJobFree free_arg;
} LapiJob;
LapiJob *lapi_push_job(lua_State *L, void *arg, HostJobFree free_arg);
int lapi_wait_job(lua_State *L, LapiJob *j, HostJobFn fn, lua_KContext ctx, lua_KFunction k);
int lapi_sleep(lua_State *L, double seconds);
int lapi_new_script(LuaApi *api, lua_State *L, int nargs, int repl);
int lapi_resume(LuaApi *api, int i);
void lapi_free_scripts(LuaApi *api);
int lapi_wait_key(lua_State *L, double seconds);
int lapi_file_scripts(const LuaApi *api);   /* script files alive (not REPL entries) */
extern char lapi_exit_marker;

/* lrepl.c */
void lrepl_print_values(LuaApi *api, lua_State *L, int first, int n);

/* llab.c */
int luaopen_tielab(lua_State *L);
/* Add a run of options 'o' as lab.run does: under the sandbox its memory
** counts against the heap cap, and with 'check_corpus' (a corpus named by
** a script or a journal, not by the user's command line) its corpus must
** pass the sandbox's rule. The run's id, or -1 with 'err' said. */
int lapi_add_run(LuaApi *api, RunOptions *o, int check_corpus, Err *err);
void llab_after_step(void *ctx, long step);
void llab_unwatch(LuaApi *api);

/* ljson.c: pushes the table lab.json */
void ljson_open(lua_State *L);

/* lmatrix.c: what the matrix files share (lmatrix.h is for the lab). */
#define LMATRIX_META "tielab.matrix"
/* Push a new rows x cols matrix of zeros for 'fname' ("m:mul"); one that
** does not fit is refused (raising) before anything is allocated. */
LMatrix *lmatrix_alloc(lua_State *L, int rows, int cols, const char *fname);
/* Push an owned copy of 'a'. */
LMatrix *lmatrix_copy(lua_State *L, const LMatrix *a, const char *fname);
/* Push a block of 'bytes' of scratch for one call of 'fname' (the
** collector frees it), refused as a matrix that does not fit is. */
void *lmatrix_scratch(lua_State *L, size_t bytes, const char *fname);
/* The matrix at 'idx', which 'fname' changes: a read-only view raises. */
LMatrix *lmatrix_writable(lua_State *L, int idx, const char *fname);
/* Raise unless 'a' and 'b' have the same shape. */
void lmatrix_same_shape(lua_State *L, const LMatrix *a, const LMatrix *b, const char *fname);
/* How many numbers 'm' holds. */
size_t lmatrix_count(const LMatrix *m);
/* lmatrix_ops.c: the arithmetic methods and the operators (__add, ...);
** lmatrix_lapack.c: the decompositions. */
extern const luaL_Reg lmatrix_ops_methods[], lmatrix_ops_meta[], lmatrix_lapack_methods[];

/* lsys.c: sets lab.executable, lab.cwd and lab.mkdir in the table on top */
void lsys_open(lua_State *L);
/* lmodel.c: lab.open_model, lab.shared_rows, lab.compare_models into the
** table on top, and the models' metatable. */
void lmodel_register(lua_State *L);
/* Under the sandbox, raise unless every file of the model folder at
** 'path' (or of a model file's folder) passes the sandbox's rule. */
void lapi_check_model_files(lua_State *L, LuaApi *api, const char *fname, const char *path);

/* lrunaway.c: string.rep, table.move and (lpattern_open) string.find,
** match, gmatch and gsub replaced by ones that stop on an interrupt */
void lrunaway_open(lua_State *L);
void lpattern_open(lua_State *L);
/* Count 'units' of a long library call's work in '*work'; every million
** or so, raise the stop (an interrupt, an os.exit) if one is pending. */
void lapi_spend(lua_State *L, LuaApi *api, size_t *work, size_t units);

/* lprogress.c */
int lprogress_new(lua_State *L);
/* A lab.progress object's state, for C that advances it (a lens fit). */
typedef struct LProgress LProgress;
/* The lab.progress object at 'idx', or NULL when it is something else. */
LProgress *lprogress_test(lua_State *L, int idx);
/* 'k' more units done, as p:step(k) without a label; nothing once the
** progress ended. On the Lua thread only: the count is the Lua layer's. */
void lprogress_add(LuaApi *api, LProgress *p, long k);

/* lrun.c */
void lrun_open(lua_State *L);
/* lhooks.c */
void lhooks_open(lua_State *L, int methods);   /* r:on_grad, r:on_hidden into the run methods at 'methods' */
int lhooks_off(lua_State *L, lua_Integer id);  /* 1 when 'id' was a step hook's handle */
int lhooks_refuse(lua_State *L);               /* raises inside a step hook */
void lhooks_free(LuaApi *api);
void lrun_push(lua_State *L, int id);
int lrun_check(lua_State *L, int idx);
Run *lrun_lock(lua_State *L, int idx, LuaApi *api);
/* Read the batch at 'idx' (1 to B rows of 2 to T+1 token ids, all alike)
** into a buffer pushed on the stack: b rows of t+1; errors name 'fname'. */
int32_t *lrun_read_batch(lua_State *L, int idx, const ModelConfig *c, const char *fname, int *b, int *t);
/* lrun_data.c: put the data methods into the methods table on top. */
void lrun_data_methods(lua_State *L);
/* A run copied out of the view: lrun_copy is the HostViewFn that fills it. */
typedef struct RunCopy {
  char name[64];
  RunMetrics m;
  RunOptions o;
} RunCopy;
void lrun_copy(void *ctx, const HostRunView *v);

/* lmetrics.c */
void lmetrics_push(lua_State *L, const RunMetrics *m, const char *name);
/* {loss=, ppl=, step=}: the validation loss of 'm' and the step it was measured at. */
void lmetrics_push_val(lua_State *L, const RunMetrics *m);
void lmetrics_push_align(lua_State *L, const AlignStats *a);
/* One pair's scores in a new table, by the names lab.align gives them. */
void lmetrics_push_scores(lua_State *L, const AlignScores *s);
void lmetrics_push_fitted(lua_State *L, const LensStats *s, const LensFitInfo *f);
int lmetrics_push_history(lua_State *L, const HistBucket *b, int n);

/* largs.c */
void largs_run_options(lua_State *L, int idx, const char *fname, RunOptions *o);
typedef SteerPair LargsPair;   /* a setting and its value, as steer_set takes them */
int largs_live_pairs(lua_State *L, int idx, const char *fname, LargsPair *out, int cap);
void largs_push_options(lua_State *L, const RunOptions *o);
int largs_args(lua_State *L);

#endif
