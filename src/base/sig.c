/*
** sig.c -- the self-pipes: handlers write a byte, the loop (and for the
** ending signals, the watchdog) reads it.
*/
#include "base/sig.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

static int pipe_fd[2] = {-1, -1};
static int watch_fd[2] = {-1, -1};
/* Lock-free atomics: a handler may run on any thread, even during sig_take. */
static atomic_uint pending;
static atomic_int armed;
static void (*interrupt_fn)(void *);
static void *interrupt_ctx;

static atomic_int first_end;   /* the first ending signal not taken yet */
static atomic_uint n_ending;   /* ending signals since the start */
static atomic_int unanswered;  /* ending signals since the last sig_take */
static atomic_uint unanswered_bits;
static atomic_uint seen_bits;  /* every ending signal that ever came */
static int n_handled, pipe_ignored;
static void (*arm_hook)(int on);

/* The ending signals first: n_handled counts how many a caller asked for. */
static const int handled[] = {SIGINT, SIGTERM, SIGHUP, SIGWINCH};
enum { N_ENDING = 3 };

/* A byte into pipe 'fd' (a full pipe already means "wake up"). */
static void poke(int fd, int s) {
  char b = (char)s;
  ssize_t n = fd >= 0 ? write(fd, &b, 1) : 0;
  (void)n;
}

static void on_signal(int s) {
  int saved = errno;
  atomic_fetch_or(&pending, SIG_BIT(s));
  if (s != SIGWINCH) {
    int none = 0;
    atomic_compare_exchange_strong(&first_end, &none, s);
    atomic_fetch_or(&unanswered_bits, SIG_BIT(s));
    atomic_fetch_or(&seen_bits, SIG_BIT(s));
    atomic_fetch_add(&unanswered, 1);
    atomic_fetch_add(&n_ending, 1u);
    /* Lua code running on the loop's thread keeps it from reading the
    ** pipe: stop it, so that the loop gets to this signal. */
    if (armed && interrupt_fn) interrupt_fn(interrupt_ctx);
    poke(watch_fd[1], s);
  }
  poke(pipe_fd[1], s);
  errno = saved;
}

/* A non-blocking pipe, closed on exec, into 'fd'. */
static int open_pipe(int fd[2], Err *err) {
  if (pipe(fd) < 0) return err_set(err, "cannot create a pipe for signals: %s", strerror(errno));
  for (int i = 0; i < 2; i++) {
    fcntl(fd[i], F_SETFL, fcntl(fd[i], F_GETFL) | O_NONBLOCK);
    fcntl(fd[i], F_SETFD, FD_CLOEXEC);
  }
  return 0;
}

static void close_pipe(int fd[2]) {
  for (int i = 0; i < 2; i++)
    if (fd[i] >= 0) close(fd[i]), fd[i] = -1;
}

int sig_open(int extra, Err *err) {
  if (open_pipe(pipe_fd, err) < 0) return -1;
  if (open_pipe(watch_fd, err) < 0) {
    close_pipe(pipe_fd);
    return -1;
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
  close_pipe(pipe_fd);
  close_pipe(watch_fd);
}

int sig_fd(void) { return pipe_fd[0]; }

unsigned sig_take(void) {
  /* The handled signals wait meanwhile, so that the counts, the pipe and
  ** the bits are taken together: one landing in between would otherwise
  ** be taken but still counted as not taken (or the other way round). */
  sigset_t block, old;
  sigemptyset(&block);
  for (size_t i = 0; i < sizeof handled / sizeof handled[0]; i++) sigaddset(&block, handled[i]);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  atomic_store(&first_end, 0);
  atomic_store(&unanswered, 0);
  atomic_store(&unanswered_bits, 0u);
  char buf[64];
  while (read(pipe_fd[0], buf, sizeof buf) > 0) {
  }
  unsigned taken = atomic_exchange(&pending, 0u);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return taken;
}

int sig_unanswered(unsigned *bits) {
  int n = atomic_load(&unanswered);
  if (bits) *bits = atomic_load(&unanswered_bits);
  return n;
}

int sig_watch_fd(void) { return watch_fd[0]; }

int sig_ended(void) { return atomic_load(&first_end); }

unsigned sig_count(void) { return atomic_load(&n_ending); }

unsigned sig_seen(void) { return atomic_load(&seen_bits); }

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

void sig_arm_interrupt(int on) {
  atomic_store(&armed, on);
  if (arm_hook) arm_hook(on);
}

void sig_set_arm_hook(void (*fn)(int on)) { arm_hook = fn; }

int sig_thread_start(pthread_t *t, void *(*fn)(void *), void *arg) {
  static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS};
  sigset_t block, old;
  sigfillset(&block);
  for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) sigdelset(&block, faults[i]);
  /* The new thread inherits the mask: set it before, so that no signal
  ** can land on the thread before it could block one itself. */
  pthread_sigmask(SIG_BLOCK, &block, &old);
  int rc = pthread_create(t, NULL, fn, arg);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return rc;
}
