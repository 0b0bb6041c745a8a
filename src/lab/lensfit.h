/*
** lensfit.h -- the tuned lens fitted post hoc: the run's model frozen, a
** second lens trained to convergence on it, on the tuned-lens package's
** loss and step (KL(final || lens); SGD with Nesterov momentum 0.9, the
** rate decaying linearly to 0 over the step limit, weight decay 1e-3,
** clip 1.0), started from least squares and stopped early. How it starts,
** steps and stops, what it keeps and where that is measured:
** docs/architecture.md, 'The fitted lens'.
*/
#ifndef TIELAB_LENSFIT_H
#define TIELAB_LENSFIT_H

#include <stddef.h>

#include "lab/lab.h"
#include "lab/lens.h"

#define LENSFIT_EVAL_EVERY 10     /* lens steps between held-out measurements */
#define LENSFIT_DIVERGED_GAP 0.25 /* live mean KL this far (relative) above the kept: diverged */
#define LENSFIT_DIVERGED_FLOOR 0.02 /* ... and this many bits above it (below, the held-out noise) */
#define LENSFIT_BACKOFFS 5        /* halvings of the rate before a fit is called diverged */
#define LENSFIT_LSQ_POSITIONS 4096 /* positions of the least-squares start (at least 8 (d+1)) */
#define LENSFIT_LSQ_RCOND 1e-7    /* singular values below this share of the largest count as 0 */

/* The defaults (docs/architecture.md has the measurements behind them). */
#define LENSFIT_DEFAULT_STEPS 1000
#define LENSFIT_DEFAULT_LR 0.5
#define LENSFIT_DEFAULT_TOKENS 1024
#define LENSFIT_DEFAULT_TOL 1e-2
#define LENSFIT_DEFAULT_PATIENCE 50

typedef struct LensFitOptions {
  int steps;                /* at most this many lens steps (>= 1): a safety cap */
  double lr;                /* the starting rate (> 0), linearly decayed to 0 over 'steps' */
  int tokens_per_step;      /* positions per lens step (>= 1) */
  double tol;               /* relative fall of the held-out mean KL that still counts (> 0) */
  int patience;             /* lens steps over which that fall is judged (>= 1) */
  /* Called after every lens step and between the forwards of one (and of
  ** the least-squares start, as step 0), with the lens steps taken and the
  ** limit; nonzero stops the fit, which then fails and leaves the fitted
  ** lens as it was. May be NULL. */
  int (*progress)(void *ctx, int step, int steps);
  void *ctx;
} LensFitOptions;

/* One point of the curve, after 'step' lens steps: the mean KL on the
** choice set over the translators, bits per token, of the lens as it is
** ('kl', the live curve) and of the translators kept so far ('kept': the
** best of the checkpoints so far, per translator, on these same positions). */
typedef struct LensFitPoint {
  int step;
  double kl, kept;
} LensFitPoint;

typedef struct LensFitResult {
  LensStats stats;          /* the kept translators on the report set */
  LensStats chosen;         /* the same on the choice set (n 0 until measured) */
  LensStats start;          /* the translators the fit found, on the choice set (n 0 until measured) */
  LensStats lsq;            /* their least-squares maps, there (n 0 until measured) */
  LensFitInfo info;
  LensFitPoint *curve;      /* the caller's buffer of 'curve_cap' points */
  int curve_cap, n_curve;   /* at least lensfit_curve_cap(options) points */
  int cancelled;            /* the progress callback stopped it */
  int diverged;             /* the live lens ended well above the kept (see above) */
} LensFitResult;

/* Defaults for every option, no callback. */
void lensfit_default_options(LensFitOptions *o);
/* Check 'o': an error names the offending key ("'steps' must be ..."). */
int lensfit_check_options(const LensFitOptions *o, Err *err);
/* Points the curve of a fit with options 'o' can have. */
int lensfit_curve_cap(const LensFitOptions *o);
/* "converged", "diverged" or "max_steps". */
const char *lensfit_stop_name(LensFitStop s);

/* Fit the run's fitted lens on its model as it stands; fills 'out' and
** the run's metrics (fitted_lens, fitted) and records the fit as an event.
** Fails, with the fitted lens (its translators and step count) as it was,
** on bad options, a curve buffer too small, a run without training data,
** memory that does not allow the fitted lens, a failed step or
** measurement, or a stop from the progress callback ('out->cancelled'
** then set). 'out->cancelled', 'diverged', 'n_curve' and 'info' (its
** 'seconds' the wall time) are set on every path. */
int run_fit_lens(Run *r, const LensFitOptions *o, LensFitResult *out, Err *err);

/* ---- inside the lab (run.c, ckpt.c) */

typedef struct LensFit LensFit;   /* a run's fitted lens and the fit's buffers */
/* Bytes lensfit_new allocates for a model of shape 'c'. */
size_t lensfit_memory_bytes(const ModelConfig *c);
LensFit *lensfit_new(const ModelConfig *c, Err *err);
void lensfit_free(LensFit *f);
/* The fitted lens itself (its translators, its lens-step count). */
Lens *lensfit_lens(LensFit *f);

#endif
