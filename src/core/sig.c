/*
** sig.c -- the self-pipe: handlers write a byte, the loop reads it.
*/
#include "core/sig.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

static int pipe_fd[2] = {-1, -1};
/* Lock-free atomics: a handler may run on any thread, even during sig_take. */
static atomic_uint pending;
static atomic_int armed;
static void (*interrupt_fn)(void *);
static void *interrupt_ctx;

static atomic_int first_end;   /* the first ending signal not taken yet */
static atomic_uint n_ending;   /* ending signals since the start */
static int n_handled, pipe_ignored;

/* The ending signals first: n_handled counts how many a caller asked for. */
static const int handled[] = {SIGINT, SIGTERM, SIGHUP, SIGWINCH};
enum { N_ENDING = 3 };

static void on_signal(int s) {
  int saved = errno;
  atomic_fetch_or(&pending, SIG_BIT(s));
  int none = 0;
  if (s != SIGWINCH) {
    atomic_compare_exchange_strong(&first_end, &none, s);
    atomic_fetch_add(&n_ending, 1u);
  }
  /* Lua code running on the loop's thread keeps it from reading the
  ** pipe: stop it, so that the loop gets to this signal. */
  if (s != SIGWINCH && armed && interrupt_fn) interrupt_fn(interrupt_ctx);
  if (pipe_fd[1] >= 0) {
    char b = (char)s;
    ssize_t n = write(pipe_fd[1], &b, 1);   /* a full pipe already means "wake up" */
    (void)n;
  }
  errno = saved;
}

int sig_open(int extra, Err *err) {
  if (pipe(pipe_fd) < 0) return err_set(err, "cannot create a pipe for signals: %s", strerror(errno));
  for (int i = 0; i < 2; i++) {
    fcntl(pipe_fd[i], F_SETFL, fcntl(pipe_fd[i], F_GETFL) | O_NONBLOCK);
    fcntl(pipe_fd[i], F_SETFD, FD_CLOEXEC);
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  n_handled = N_ENDING + ((extra & SIG_WITH_WINCH) != 0);
  for (int i = 0; i < n_handled; i++) sigaction(handled[i], &sa, NULL);
  pipe_ignored = (extra & SIG_IGNORE_PIPE) != 0;
  if (pipe_ignored) signal(SIGPIPE, SIG_IGN);
  return 0;
}

void sig_close(void) {
  for (int i = 0; i < n_handled; i++) signal(handled[i], SIG_DFL);
  if (pipe_ignored) signal(SIGPIPE, SIG_DFL);
  n_handled = pipe_ignored = 0;
  for (int i = 0; i < 2; i++)
    if (pipe_fd[i] >= 0) close(pipe_fd[i]), pipe_fd[i] = -1;
}

int sig_fd(void) { return pipe_fd[0]; }

unsigned sig_take(void) {
  char buf[64];
  while (read(pipe_fd[0], buf, sizeof buf) > 0) {
  }
  atomic_store(&first_end, 0);
  return atomic_exchange(&pending, 0u);
}

int sig_ended(void) { return atomic_load(&first_end); }

unsigned sig_count(void) { return atomic_load(&n_ending); }

void sig_post(int s) { on_signal(s); }

static int ended(void *ctx) { return sig_ended() != 0; }

const Cancel *sig_cancel(void) {
  static const Cancel c = {ended, NULL};
  return &c;
}

void sig_set_interrupt(void (*fn)(void *ctx), void *ctx) {
  interrupt_fn = fn;
  interrupt_ctx = ctx;
}

void sig_arm_interrupt(int on) { atomic_store(&armed, on); }
