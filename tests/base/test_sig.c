/*
** test_sig.c -- base/sig.h: a thread started by sig_thread_start takes
** none of the process's signals (its mask blocks them from the start) but
** the ones a fault raises on it; the starting thread's mask is left as it was.
*/
#include <pthread.h>
#include <signal.h>

#include "base/sig.h"
#include "tap.h"

static void *read_mask(void *arg) {
  pthread_sigmask(SIG_BLOCK, NULL, (sigset_t *)arg);
  return NULL;
}

int main(void) {
  sigset_t before, after, seen;
  sigemptyset(&seen);
  pthread_sigmask(SIG_BLOCK, NULL, &before);
  pthread_t t;
  int rc = sig_thread_start(&t, read_mask, &seen);
  ok(rc == 0, "the thread starts");
  if (rc == 0) pthread_join(t, NULL);
  static const int ending[] = {SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGPIPE, SIGUSR1, SIGALRM};
  int all = 1;
  for (size_t i = 0; i < sizeof ending / sizeof ending[0]; i++) all &= sigismember(&seen, ending[i]) == 1;
  ok(all, "it blocks SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGPIPE, SIGUSR1 and SIGALRM");
  ok(sigismember(&seen, SIGRTMIN + 4) == 1, "and the real-time signals");
  static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
  int none = 1;
  for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) none &= sigismember(&seen, faults[i]) == 0;
  ok(none, "but not SIGSEGV, SIGBUS, SIGFPE or SIGILL, which a fault raises on it");
  pthread_sigmask(SIG_BLOCK, NULL, &after);
  int same = 1;
  for (int s = 1; s < SIGRTMIN; s++) same &= sigismember(&before, s) == sigismember(&after, s);
  ok(same && sigismember(&after, SIGINT) == 0, "the starting thread's mask is as it was");
  return tap_done();
}
