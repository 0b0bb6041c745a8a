/*
** cancel.h -- how a caller stops one of core's long computations early
** (training a tokenizer on a large corpus, encoding it): a question the
** computation asks now and then, giving up with an error when the answer
** is yes.
**
** Core knows nothing of signals, threads or Lua; the caller does (a
** Ctrl-C, a closing lab) and answers for them here.
*/
#ifndef TIELAB_BASE_CANCEL_H
#define TIELAB_BASE_CANCEL_H

typedef struct Cancel {
  int (*asked)(void *ctx);   /* nonzero: stop now */
  void *ctx;
} Cancel;

/* Whether 'c' asks to stop (never, when 'c' or its question is NULL). */
static inline int cancel_asked(const Cancel *c) { return c && c->asked && c->asked(c->ctx); }

/* How much work (bytes, words, merges) goes between two questions: about
** a millisecond, so that an answer is heard at once and asking costs
** nothing. */
#define CANCEL_EVERY (1 << 16)

#endif
