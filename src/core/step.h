/*
** step.h -- one training step, written once: forward, backward, the
** script's hooks, scales, clip and update, in the order every caller
** (the lab's runs, the benchmark, r:evaluate's gradient) needs it.
**
** Hooks are how a client reaches into a step without the core knowing who
** it is (a Lua script, a test): 'on_hidden' runs inside the backward at a
** residual position, with the loss's gradient there, which it may change
** so that its own term's gradient flows into the blocks below and the
** embeddings; 'on_grad' runs after the backward, with the two embedding
** gradients still apart, before in_scale/out_scale, the clip and the
** optimizer. A step with no hook costs what it cost before hooks existed.
*/
#ifndef TIELAB_STEP_H
#define TIELAB_STEP_H

#include <stdint.h>

#include "base/err.h"
#include "core/config.h"
#include "core/model.h"
#include "core/reduce.h"

/* A step's hooks. Every function may be NULL. A hook returns 0, or -1 with
** 'err' set (a message is made for it when it sets none): the step then
** stops before the update, weights untouched. */
typedef struct StepHooks {
  void *ctx;
  /* Residual positions 0..L (0 after the embeddings, p after block p-1)
  ** whose 'on_hidden' is called: bit p set (positions past 63 cannot be
  ** asked for). */
  uint64_t hidden_positions;
  /* During the backward, when the gradient at residual position 'p' is
  ** complete: 'h' [n,d] the residual stream there (read only), 'dh' [n,d]
  ** the loss's gradient there (writable); 'n' = rows*t of this process's
  ** part. '*aux' (0 on entry) may be set to a loss term the hook added,
  ** reported as the step's aux_loss. 'step' is the step this update
  ** completes. Called on the thread that called 'train_step', from the
  ** top position down; it changes 'dh' only (the gradients above 'p' are
  ** done, and under a Reducer already on their way to the other ranks).
  ** Under a Reducer 'dh' is the gradient of this process's share of the
  ** whole batch's mean loss: a term added should be its share too. */
  int (*on_hidden)(void *ctx, Model *m, int p, const float *h, float *dh, int n, int d, long step, double *aux,
                   Err *err);
  /* After the backward: the gradient arena holds G_in in E_in's slot and
  ** G_out in E_out's, both unscaled and unfolded, and every other
  ** parameter's gradient; all writable. The GradStats are taken already.
  ** Under a Reducer every rank holds the whole batch's gradient here and
  ** must change it alike. A NaN left in it stops the step at the clip
  ** (STEP_NOT_FINITE). */
  int (*on_grad)(void *ctx, Model *m, long step, Err *err);
} StepHooks;

/* What one step trains on and how. */
typedef struct StepPlan {
  const int32_t *inputs, *targets;   /* [rows,t] this process's part */
  int rows, t;
  int batch_rows;                    /* the whole batch's rows across processes (>= rows) */
  float in_scale, out_scale;
  OptimConfig optim;                 /* at this step (the schedule's rate) */
  const Reducer *red;                /* NULL: one process */
  long step;                         /* the step this update completes */
  const StepHooks *hooks;            /* NULL: none */
  /* Optional: the loss after the forward, before the backward (the lab
  ** averages it across ranks here, so that every rank agrees on whether
  ** it is finite); a negative return stops the step with that code. */
  int (*after_forward)(void *ctx, double *loss, Err *err);
  void *after_forward_ctx;
  /* 1: the gradient only (r:evaluate): stop after the scales, the
  ** combined gradient left in the arena, no clip, no update; 'optim' is
  ** not read, and a loss that is not finite is not refused (nothing is
  ** updated), its gradient computed as it comes. */
  int gradient_only;
} StepPlan;

typedef struct StepResult {
  double loss;       /* this process's mean loss, as 'after_forward' left it (the lab's: every rank's mean) */
  double aux_loss;   /* sum of what the hooks reported (every rank's); 0 without hooks */
  int aux_reported;  /* an 'on_hidden' hook ran: 'aux_loss' is its report (0 included) */
  GradStats grad;    /* as the backward computed them (hooks included);
                     ** total_norm from the clip (0 with gradient_only) */
} StepResult;

/* How a step ended. */
enum {
  STEP_OK = 0,
  STEP_NOT_FINITE = -1,   /* loss or gradient not finite: weights untouched */
  STEP_RANKS = -2,        /* the Reducer failed (a rank is gone) */
  STEP_HOOK = -3          /* a hook failed: 'err' is its message */
};

/* One step of 'm' as 'p' says: forward, after_forward, backward (with
** on_hidden), on_grad, in/out scales, grad_scale and clip, update.
** Returns STEP_OK with 'res' filled, or a STEP_* code with 'err' set and
** 'res' filled as far as the step went ('res->loss' once the forward ran,
** 'res->grad' once the backward did), the weights untouched. With no hook
** it is exactly the sequence of model.h's calls, bit for bit. */
int train_step(Model *m, const StepPlan *p, StepResult *res, Err *err);

#endif
