/*
** lens.h -- the tuned lens and the logit lens: what each layer of a run
** would predict if the model stopped there. The translators, how the lens
** learns online and how its state is laid out in memory: docs/architecture.md,
** 'The tuned lens's translators, step and memory'.
*/
#ifndef TIELAB_LENS_H
#define TIELAB_LENS_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "core/config.h"
#include "core/model.h"
#include "lab/lab.h"

typedef struct Lens Lens;

/* The package's SGD learning rate: lr_scale 1.0 times (1 - momentum). */
#define LENS_DEFAULT_LR 0.1f

/* A lens for models of shape 'c' (vocab, dim, layers, ctx, batch). */
Lens *lens_new(const ModelConfig *c, Err *err);
/* Bytes lens_new allocates for a model of shape 'c'. */
size_t lens_memory_bytes(const ModelConfig *c);
void lens_free(Lens *ln);
/* Floats of the translators (and of their momentum) for shape 'c'. */
size_t lens_state_floats(const ModelConfig *c);

/* One training step on the last forward of 'm', which ran on 'b' sequences
** of 't' tokens: 'n_positions' of the b*t positions (all of them when
** n_positions >= b*t), drawn from 'seed'. Returns -1 when 'm' does not match
** the lens's shape or b, t exceed it, and skips the update (-1) when the
** gradient is not finite. */
int lens_train(Lens *ln, Model *m, int b, int t, int n_positions, uint64_t seed, Err *err);

/* Forward 'm' on 'inputs' [b,t] and measure both lenses at every position
** 0..L against 'targets' [b,t] (the next tokens), averaged over all b*t
** positions, into 'tuned' and 'logit' (each stamped with 'step'; 'logit'
** may be NULL: the tuned lens alone). */
int lens_eval(Lens *ln, Model *m, const int32_t *inputs, const int32_t *targets, int b, int t,
              long step, LensStats *tuned, LensStats *logit, Err *err);

/* Learning rate of the translators (LENS_DEFAULT_LR unless set). */
float lens_lr(const Lens *ln);
void lens_set_lr(Lens *ln, float lr);

/* Rows read out through ln_f and E_out at once. lens_new picks all B*T,
** or fewer for a large vocabulary so that one [rows,V] block stays within
** 16 MiB; it can only be lowered. Results do not depend on it beyond float
** rounding. Returns the value in effect. */
int lens_set_chunk(Lens *ln, int rows);

/* Mean KL(final || tuned lens) over the translators in the last training
** step, bits per token, before the update (NaN before the first step). */
double lens_last_loss(const Lens *ln);

/* State for checkpoints: the parameter and momentum buffers, each of
** 'lens_state_size' floats in the layout at the top of this file, and the
** number of training steps taken. Writing them back restores the lens
** exactly. */
size_t lens_state_size(const Lens *ln);
int lens_n_translators(const Lens *ln);
float *lens_params(Lens *ln);
float *lens_momentum(Lens *ln);
/* The gradient of the last training step, before clipping and weight decay. */
const float *lens_grads(const Lens *ln);
long lens_step(const Lens *ln);
void lens_set_step(Lens *ln, long step);

/* ---- training in parts and between lenses (a post-hoc fit, lensfit.c)
** lens_train is lens_grad_zero, one lens_grad_add and lens_update at the
** lens's own rate. A step over more positions than one forward holds
** gathers them from several forwards, each adding its share. */

/* Clear the gradient and the loss gathered for the next update. */
void lens_grad_zero(Lens *ln);
/* Add the gradient of 'n_positions' of the b*t positions of the last
** forward of 'm' (drawn from 'seed'; all of them when >= b*t), each
** weighing 1/'n_total' of the step's mean loss. */
int lens_grad_add(Lens *ln, Model *m, int b, int t, int n_positions, int n_total, uint64_t seed,
                  Err *err);
/* Clip, weight decay and Nesterov SGD at rate 'lr' on what was gathered;
** lens_last_loss becomes its mean KL. -1, no update, when the gradient is
** not finite. */
int lens_update(Lens *ln, float lr, Err *err);
/* The translators of 'src' into 'dst' (of the same shape); the momentum
** and the step count of 'dst' are left alone. */
int lens_copy_translators(Lens *dst, const Lens *src, Err *err);
void lens_clear_momentum(Lens *ln);
/* BLAS threads for the lens's own products (1 unless set: during a
** training step the model's pool has the cores; the model's forward
** inside lens_eval keeps to its pool whatever this says). */
void lens_set_threads(Lens *ln, int threads);

#endif
