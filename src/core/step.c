/*
** step.c -- one training step (step.h): the model's calls in the order
** every caller needs them, the hooks at their two points, and the checks
** that keep a step that went wrong from touching the weights.
**
** A step refuses a non-finite loss before the backward (every rank agrees
** on it: 'after_forward' has averaged it) and a non-finite gradient norm
** after the clip, which also catches a NaN a hook wrote. Either way, and
** when a hook or the Reducer fails, 'model_update' never runs.
*/
#include <math.h>

#include "core/step.h"

/* Whether the hooks' 'on_hidden' runs at any of the positions 0..L. */
static int reports_aux(const StepHooks *hooks, int layers) {
  if (!hooks || !hooks->on_hidden) return 0;
  uint64_t positions = layers >= 63 ? ~(uint64_t)0 : ((uint64_t)1 << (layers + 1)) - 1;
  return (hooks->hidden_positions & positions) != 0;
}

/* 'on_grad', with a message of its own when the hook gave none. */
static int grad_hook(Model *m, const StepHooks *hooks, long step, Err *err) {
  if (err) err->msg[0] = '\0';
  if (hooks->on_grad(hooks->ctx, m, step, err) == 0) return STEP_OK;
  if (err && !err->msg[0]) err_set(err, "the gradient hook failed at step %ld", step);
  return STEP_HOOK;
}

/* Forward, after_forward, backward with its hooks, on_grad, the scales.
** The step reads its own copy of the hooks: a hook that adds or removes
** hooks changes the next step's, never the rest of this one. */
static int step_gradient(Model *m, const StepPlan *p, StepResult *res, Err *err) {
  StepHooks copy;
  const StepHooks *hooks = p->hooks ? (copy = *p->hooks, &copy) : NULL;
  res->loss = model_forward_part(m, p->inputs, p->targets, p->rows, p->t, p->batch_rows);
  if (p->after_forward) {
    int rc = p->after_forward(p->after_forward_ctx, &res->loss, err);
    if (rc < 0) return rc;
  }
  if (!isfinite(res->loss) && !p->gradient_only)
    return err_set(err, "loss is %s at step %ld", isnan(res->loss) ? "NaN" : "infinite", p->step), STEP_NOT_FINITE;
  switch (model_backward_hooked(m, &res->grad, p->red, hooks, p->step, &res->aux_loss, err)) {
    case BACKWARD_RANKS: return STEP_RANKS;
    case BACKWARD_HOOK: return STEP_HOOK;
  }
  res->aux_reported = reports_aux(hooks, model_config(m)->layers);
  if (hooks && hooks->on_grad && grad_hook(m, hooks, p->step, err) < 0) return STEP_HOOK;
  model_combine(m, p->in_scale, p->out_scale);
  return STEP_OK;
}

int train_step(Model *m, const StepPlan *p, StepResult *res, Err *err) {
  *res = (StepResult){0};
  int rc = step_gradient(m, p, res, err);
  if (rc < 0 || p->gradient_only) return rc;
  res->grad.total_norm = model_clip_scaled(m, p->optim.grad_scale, p->optim.clip);
  if (!isfinite(res->grad.total_norm))
    return err_set(err, "gradient is not finite at step %ld", p->step), STEP_NOT_FINITE;
  model_update(m, &p->optim);
  return STEP_OK;
}
