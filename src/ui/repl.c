/*
** repl.c -- readline fed from curses, drawn by us.
**
** The flow of one key: the UI loop reads bytes with wgetch and hands them
** to 'repl_feed', which queues them where 'rl_getc_function' finds them and
** calls rl_callback_read_char until the queue is empty. The queue doubles as
** 'rl_input_available_hook', so readline sees a whole escape sequence as
** available and never waits to tell a lone ESC from one. readline's
** redisplay only bumps a version; the loop redraws the row when it draws.
*/
#include "ui/repl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "base/utf8.h"

static ReplHooks hooks;
static char *hist_path;
static FILE *devnull;
static long version;
static char prompt_text[64] = "> ";

static unsigned char fifo[256];
static size_t fifo_head, fifo_n;

/* Completion candidates of the current attempt. */
static char **cands;
static int n_cands, cap_cands;

static int getc_hook(FILE *f) {
  (void)f;
  if (fifo_n == 0) return 0;   /* a look-ahead with nothing queued: a no-op key, never EOF */
  int c = fifo[fifo_head];
  fifo_head = (fifo_head + 1) % sizeof fifo;
  fifo_n--;
  return c;
}

static int available_hook(void) { return fifo_n > 0; }
static void redisplay_hook(void) { version++; }
static void prep_term(int meta) { (void)meta; }
static void deprep_term(void) {}

static void on_line(char *line) {
  version++;
  if (hooks.line) hooks.line(hooks.ctx, line);
  else free(line);
}

/* ------------------------------------------------------------ completion */

static void clear_cands(void) {
  for (int i = 0; i < n_cands; i++) free(cands[i]);
  n_cands = 0;
}

static void add_cand(void *actx, const char *word) {
  (void)actx;
  if (n_cands == cap_cands) {
    int cap = cap_cands ? cap_cands * 2 : 32;
    char **p = realloc(cands, sizeof *p * (size_t)cap);
    if (!p) return;
    cands = p;
    cap_cands = cap;
  }
  char *w = strdup(word);
  if (w) cands[n_cands++] = w;
}

static char *generator(const char *text, int state) {
  static int i;
  (void)text;
  if (state == 0) i = 0;
  return i < n_cands ? strdup(cands[i++]) : NULL;
}

static char **completer(const char *text, int start, int end) {
  (void)start;
  rl_attempted_completion_over = 1;   /* never fall back to file names */
  rl_completion_suppress_append = 1;  /* "lab.ru" -> "lab.run", then '{' or '(' */
  clear_cands();
  if (!hooks.complete) return NULL;
  char *before = strndup(rl_line_buffer, (size_t)end);
  if (!before) return NULL;
  hooks.complete(hooks.ctx, before, add_cand, NULL);
  free(before);
  return n_cands ? rl_completion_matches(text, generator) : NULL;
}

static void show_matches(char **matches, int n, int max_len) {
  (void)max_len;
  if (hooks.matches) hooks.matches(hooks.ctx, matches + 1, n);
  version++;
}

/* ------------------------------------------------------------ life */

static void history_open(const char *path) {
  hist_path = strdup(path);
  using_history();
  stifle_history(10000);
  read_history(path);   /* a missing file is no error */
  history_truncate_file(path, 10000);
}

int repl_open(const ReplHooks *h, const char *history, Err *err) {
  hooks = *h;
  devnull = fopen("/dev/null", "w");
  if (!devnull) return err_set(err, "cannot open /dev/null: %s", strerror(errno));
  rl_readline_name = "tielab";     /* for "$if tielab" in the user's inputrc */
  rl_catch_signals = 0;
  rl_catch_sigwinch = 0;
  rl_change_environment = 0;       /* exported LINES/COLUMNS would freeze curses' size */
  rl_prep_term_function = prep_term;
  rl_deprep_term_function = deprep_term;
  rl_getc_function = getc_hook;
  rl_input_available_hook = available_hook;
  rl_redisplay_function = redisplay_hook;
  rl_outstream = devnull;          /* the bell, listings: never onto the screen */
  rl_attempted_completion_function = completer;
  rl_completion_display_matches_hook = show_matches;
  rl_basic_word_break_characters = " \t\n\"'`@$><=;|&{(,+-*/%^~#)[]}";
  rl_initialize();
  /* After the user's inputrc, the few variables the screen depends on. */
  rl_variable_bind("bell-style", "none");
  rl_variable_bind("show-all-if-ambiguous", "off");
  rl_variable_bind("enable-bracketed-paste", "off");
  if (history) history_open(history);
  rl_callback_handler_install(prompt_text, on_line);
  return 0;
}

void repl_close(void) {
  rl_callback_handler_remove();
  clear_cands();
  free(cands);
  cands = NULL;
  cap_cands = 0;
  free(hist_path);
  hist_path = NULL;
  if (devnull) fclose(devnull);
  devnull = NULL;
}

/* ------------------------------------------------------------ input */

void repl_feed(const char *bytes, size_t n) {
  while (n > 0) {
    while (n > 0 && fifo_n < sizeof fifo) {
      fifo[(fifo_head + fifo_n) % sizeof fifo] = (unsigned char)*bytes++;
      fifo_n++;
      n--;
    }
    while (fifo_n > 0) rl_callback_read_char();
  }
}

/* Curses key codes back into what readline binds by default. */
static const struct {
  int key;
  const char *seq;
} key_seqs[] = {
    {KEY_UP, "\033[A"},   {KEY_DOWN, "\033[B"}, {KEY_RIGHT, "\033[C"},  {KEY_LEFT, "\033[D"},
    {KEY_HOME, "\033[H"}, {KEY_END, "\033[F"},  {KEY_DC, "\033[3~"},    {KEY_BACKSPACE, "\177"},
    {KEY_ENTER, "\r"},    {KEY_IC, "\033[2~"},  {KEY_SLEFT, "\033b"},   {KEY_SRIGHT, "\033f"},
};

int repl_key(int key) {
  for (size_t i = 0; i < sizeof key_seqs / sizeof key_seqs[0]; i++)
    if (key_seqs[i].key == key) {
      repl_feed(key_seqs[i].seq, strlen(key_seqs[i].seq));
      return 1;
    }
  return 0;
}

void repl_prompt(const char *prompt) {
  snprintf(prompt_text, sizeof prompt_text, "%s", prompt);
  rl_set_prompt(prompt_text);
  version++;
}

void repl_cancel(void) {
  fifo_n = 0;
  rl_free_line_state();
  rl_callback_sigcleanup();
  rl_callback_handler_remove();
  rl_callback_handler_install(prompt_text, on_line);
  version++;
}

void repl_history_add(const char *entry) {
  char *flat = strdup(entry);
  if (!flat) return;
  for (char *p = flat; *p; p++)
    if (*p == '\n') *p = ' ';   /* one entry per line in the file; Up recalls it whole */
  add_history(flat);
  free(flat);
  if (hist_path && append_history(1, hist_path) != 0) write_history(hist_path);
}

/* ------------------------------------------------------------ drawing */

long repl_version(void) { return version; }

void repl_set_width(int cols) { rl_set_screen_size(1, cols > 1 ? cols : 1); }

/* Skip 'cols' display columns of 's'. */
static const char *skip_cols(const char *s, int cols) {
  while (*s && cols > 0) {
    uint32_t cp;
    size_t k = utf8_decode(s, UTF8_MAX, &cp);   /* a character, or the bytes one U+FFFD stands for */
    char one[8] = {0};
    memcpy(one, s, k < sizeof one ? k : sizeof one - 1);
    cols -= term_width(one);
    s += k;
  }
  return s;
}

void repl_draw(const Term *t, WINDOW *win, int w, int focused, const char *hint) {
  werase(win);
  if (w <= 0) return;
  const char *prompt = rl_display_prompt ? rl_display_prompt : prompt_text;
  const char *line = rl_line_buffer ? rl_line_buffer : "";
  size_t np = strlen(prompt), nl = strlen(line);
  size_t point = rl_point >= 0 && (size_t)rl_point <= nl ? (size_t)rl_point : nl;
  char *all = malloc(np + nl + 1);
  if (!all) return;
  memcpy(all, prompt, np);
  memcpy(all + np, line, nl + 1);
  char saved = all[np + point];
  all[np + point] = '\0';
  int cursor = term_width(all);
  all[np + point] = saved;
  int off = cursor > w - 1 ? cursor - (w - 1) : 0;
  int used = term_print(t, win, 0, 0, w, focused ? ROLE_TEXT : ROLE_DIM, skip_cols(all, off));
  free(all);
  if (!focused && nl == 0 && hint && used + 2 < w) term_print(t, win, 0, used + 1, w - used - 1, ROLE_DIM, hint);
  wmove(win, 0, cursor - off < w ? cursor - off : w - 1);
}
