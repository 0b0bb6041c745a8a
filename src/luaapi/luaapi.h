/*
** luaapi.h -- the Lua 5.4 binding of the lab: a Lua state with the module
** "tielab" (also the global 'lab'), run handles, and what a host program
** needs around it: running a script file, a REPL line, script coroutines
** that wait for training without blocking, Ctrl-C, key bindings, custom
** series and tab completion.
**
** Provides: luaapi_* below. Uses: lab.h (through the Host of host.h, which
** says how to get at the lab and how to ask for training steps) and Lua.
** It never touches threads, curses or the terminal: text goes out through
** the 'out' callback of LuaApiOptions. How its errors are reported:
** docs/architecture.md, 'The binding's calls into Lua'.
*/
#ifndef TIELAB_LUAAPI_H
#define TIELAB_LUAAPI_H

#include <limits.h>
#include <stddef.h>

#include <lua.h>

#include "lab/lab.h"
#include "luaapi/host.h"

typedef struct LuaApi LuaApi;

/* What a top-level call ended with. */
typedef enum LuaApiStatus {
  LUAAPI_OK = 0,
  LUAAPI_ERROR,         /* a Lua error (syntax or runtime), already reported */
  LUAAPI_INTERRUPTED,   /* stopped by luaapi_interrupt */
  LUAAPI_EXIT,          /* the script called os.exit: see luaapi_exit_code */
  LUAAPI_INCOMPLETE,    /* luaapi_eval_line: the statement needs more lines */
  LUAAPI_RUNNING        /* started as a coroutine that is still waiting */
} LuaApiStatus;

/* What a script's lab.progress object tells the 'progress' callback. */
typedef enum LuaApiProgress { LUAAPI_PROGRESS_START, LUAAPI_PROGRESS_STEP, LUAAPI_PROGRESS_DONE } LuaApiProgress;

/* Kinds of message for the 'log' callback. */
typedef enum LuaApiLog { LUAAPI_LOG_INFO, LUAAPI_LOG_CAPTION } LuaApiLog;

typedef struct LuaApiOptions {
  size_t heap_cap;   /* bytes the Lua heap may hold; 0: no cap */
  int sandbox;       /* scripts of unknown origin: see luaapi_new */
  /* print, io.write, io.stdout/io.stderr writes, warnings and error
  ** reports; NULL: stdout and stderr */
  void (*out)(void *ctx, const char *s, size_t n, int is_err);
  /* lab.log (INFO) and lab.caption (CAPTION, msg "" clears); NULL: stderr */
  void (*log)(void *ctx, LuaApiLog kind, const char *msg);
  /* lab.progress: a script's long work started (towards 'total' units),
  ** reached 'done' ('label', escaped, or NULL: unchanged), or ended; NULL:
  ** lab.progress counts and shows nothing */
  void (*progress)(void *ctx, LuaApiProgress what, long done, long total, const char *label);
  void *ctx;
  /* lab.run{} starts from these options; NULL: run_options_default */
  const RunOptions *defaults;
  /* 'out' shows a script's output on a screen: its control characters
  ** are escaped (error reports, lab.log and captions always are) */
  int escape_output;
  /* the host reports an interrupt itself (from the Err of the call that
  ** ended): its message is not written to 'out' (else it is, one line,
  ** with no traceback) */
  int quiet_interrupt;
  /* The options (one word each, NULL-terminated; NULL: none) a headless
  ** tielab must be given to run one of this script's tasks as this
  ** process runs the script: lab.command() puts them after --headless,
  ** with --sandbox before them when this state is a sandbox. The array
  ** must outlive the state. */
  const char *const *task_options;
} LuaApiOptions;

/* Create the state: standard libraries, the "tielab" module (preloaded and
** as the global 'lab'), print and io routed to 'out', os.exit replaced by
** an error that ends the script (headless mode turns it into the exit
** status), math.random seeded with 0 so scripts are reproducible, and a
** permanent count hook for interrupts. Sets host->after_step. With
** 'sandbox': no os.execute, io.popen, io.tmpfile, package.loadlib, C
** modules, binary chunks or finalisers, of the debug library only
** traceback and getinfo (no function handed out), and files only under
** the working directory (reading also the script's directory and tielab's
** lua/), never a FIFO or a device; see lsandbox.c. */
LuaApi *luaapi_new(Host *host, const LuaApiOptions *opt, Err *err);
void luaapi_free(LuaApi *api);
lua_State *luaapi_state(LuaApi *api);
/* The string (or number) at 'idx' of L as a name for function 'fname':
** one with a NUL byte raises, for C would cut it short there. */
const char *luaapi_name_arg(lua_State *L, int idx, const char *fname);

/* Whoever defines the 'ui' table (the lab's screen, a replay), and keeps
** what is its own: the selected run ('selected' its name, or NULL: the
** first run; 'select' makes run 'id' the one), whether the lab trains
** ('running': on 1 or 0, or -1 only to read; returns the state then),
** where the line each function says goes ('warn': nothing changed), and
** the multiplication sign the terminal shows. Each may be NULL. */
typedef struct LuaApiUiOwner {
  const char *(*selected)(void *ctx);
  void (*select)(void *ctx, int id, const char *name);
  int (*running)(void *ctx, int on);
  void (*say)(void *ctx, int warn, const char *line);
  const char *(*times)(void *ctx);
  void *ctx;
} LuaApiUiOwner;

/* Put the functions of 'ui' that change training into the table on top of
** the stack, for 'owner' (copied): toggle, running, step, select,
** selected, and the verbs of lab/steer.h (cycle_tie, scale, in_scale). */
void luaapi_open_ui(LuaApi *api, const LuaApiUiOwner *owner);

/* Add a run to the lab as a script's lab.run{...} does, its options from
** an untrusted source (a journal's header): under the sandbox its corpus
** must be a file the sandbox lets a script read, and its memory counts
** against the heap cap. 0, or -1 with 'err' saying why. */
int luaapi_add_run(LuaApi *api, const RunOptions *o, Err *err);

/* 0 when the sandbox lets a script read ('write': write) the file 'path',
** from the working directory and with no script folder (a journal's
** files); else -1, and 'err' says why in the sandbox's words. Nothing
** outside the working directory and tielab's data folder is looked at. */
int luaapi_sandbox_check(const char *path, int write, Err *err);

/* The file of the script named 'name' on the command line: a name with a
** '/' is a path, used as given; a bare name is looked for in the working
** directory, then $XDG_DATA_HOME/tielab (else ~/.local/share/tielab), then
** the installed data directory. Not found: -1, and 'err' lists the folders. */
int luaapi_find_script(const char *name, char found[PATH_MAX], Err *err);
/* The installed data directory that search ends in: PREFIX/share/tielab
** beside the binary when there is one, else the configured one. */
const char *luaapi_data_dir(void);

/* Run a script file to its end on this thread, as 'lua' does: the global
** 'arg' holds argv (arg[0] the path), the chunk gets them as '...'. */
LuaApiStatus luaapi_run_file(LuaApi *api, const char *path, int argc, char **argv, Err *err);

/* The init file, $XDG_CONFIG_HOME/tielab/init.lua (default
** ~/.config/tielab/init.lua), into 'buf'; 1 when it exists. */
int luaapi_init_path(char *buf, size_t cap);
/* Run the init file to its end, when there is one and the state is not a
** sandbox (LUAAPI_OK when it is not run). A failure is reported through
** 'out' as a script's is, and 'err' names the file. */
LuaApiStatus luaapi_run_init(LuaApi *api, Err *err);

/* The status given to os.exit (0 for true or none, 1 for false). */
int luaapi_exit_code(const LuaApi *api);

/* Start a script file as a coroutine (the UI): it runs until it waits for
** training ('r:step' yields while the host works), sleeps, or ends.
** Returns LUAAPI_RUNNING while it lives; call luaapi_pump to go on. */
LuaApiStatus luaapi_start_script(LuaApi *api, const char *path, int argc, char **argv, Err *err);

/* One REPL entry, as lua.c reads it: 'text' is every line of the entry so
** far joined with '\n'. "=expr" and expressions print their values (tables
** pretty-printed) through 'out'. LUAAPI_INCOMPLETE: the statement is not
** finished (the caller reads another line and calls again with both). With
** a host that does not step inline, the entry runs as a coroutine, so a
** typed 'r:step(500)' never freezes the screen (LUAAPI_RUNNING). */
LuaApiStatus luaapi_eval_line(LuaApi *api, const char *text);

/* Resume the script coroutines whose wait is over (their steps are done,
** their sleep ended, or they yielded a time slice). Returns how many are
** still alive. An interrupt pending here stops every script. */
int luaapi_pump(LuaApi *api);
int luaapi_scripts(const LuaApi *api);

/* Stop the Lua code that runs now, or, when none runs, the scripts that
** wait (at the next luaapi_pump, which then clears the flag). Async-signal-
** safe: it only sets a flag. The flag keeps raising "interrupted" (a pcall
** in the script cannot swallow it) until the outermost call returns; an
** interrupt that comes just before a call (a script still starting) stops
** that call. */
void luaapi_interrupt(LuaApi *api);
int luaapi_interrupted(const LuaApi *api);
/* An interrupt or an os.exit is pending: a host stepping inline stops. */
int luaapi_stopping(const LuaApi *api);

/* ------------------------------------------------------------ for the UI */

/* Key codes of lab.bind: a character is itself, "C-x" is x & 0x1f, "F1".."F12"
** are LUAAPI_KEY_F(n) (the UI translates its own function-key codes). */
#define LUAAPI_KEY_F(n) (0x10000 + (n))

/* Call the script's binding for 'key'; 1 when there was one. */
int luaapi_key(LuaApi *api, int key);

/* Visit every binding ('name' as the script wrote it, 'help' may be ""). */
void luaapi_bindings(LuaApi *api, void (*each)(void *ctx, int key, const char *name, const char *help),
                     void *ctx);

/* Series pushed by scripts with lab.plot(name, value), in the same bounded
** form as a run's history. */
History *luaapi_plots(LuaApi *api);

/* The caption set by lab.caption ("" when none). */
const char *luaapi_caption(const LuaApi *api);

/* The speaker's keys. 'luaapi_advance' ends the waits of lab.wait_key and
** lab.sleep now (the next phase); returns how many scripts it woke.
** 'luaapi_pause' (1) keeps every script waiting (a REPL entry still runs
** up to its first wait), and the host holds every step request, until
** 'luaapi_pause' (0) or until no script is left. */
int luaapi_advance(LuaApi *api);
/* Some script waits in lab.wait_key for the speaker's key. */
int luaapi_waiting_key(const LuaApi *api);
void luaapi_pause(LuaApi *api, int on);
int luaapi_paused(const LuaApi *api);
/* The caller holds the lab across the calls it makes (nested: a count):
** a step that cannot yield would wait for a trainer that waits for the
** lab, so it is refused with an error instead. */
void luaapi_hold_lab(LuaApi *api, int on);
/* Phases marked by lab.phase so far. */
int luaapi_phase(const LuaApi *api);

/* What the last script file to end had printed (stdout only, as the host
** was given it: escaped for a screen), its length in '*n', and in '*seq'
** a number that grows each time a script file ends having printed. "" and
** seq 0 before any. */
const char *luaapi_results(const LuaApi *api, size_t *n, long *seq);

/* Tab completion of the last word of 'line': globals, fields of tables
** ("lab.ru" -> "lab.run", "lab.runs") and methods of a run ("r:st" ->
** "r:step"). Calls 'add' once per candidate, sorted; returns how many. */
int luaapi_complete(LuaApi *api, const char *line, void (*add)(void *ctx, const char *word), void *ctx);

/* Bytes the Lua heap holds now. */
size_t luaapi_mem_used(const LuaApi *api);

#endif
