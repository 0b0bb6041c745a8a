/*
** run.h -- the inside of a run, shared by the lab's own files (lab.c,
** run.c, ckpt.c). Clients see only the opaque handle of lab.h.
*/
#ifndef TIELAB_RUN_H
#define TIELAB_RUN_H

#include "base/sha256.h"
#include "base/sysmem.h"
#include "core/data.h"
#include "core/tokenizer.h"
#include "core/model.h"
#include "core/parallel.h"
#include "core/reduce.h"
#include "lab/lab.h"
#include "lab/lens.h"
#include "lab/lensfit.h"

/* A tokenized corpus shared by every run that names the same text and
** vocabulary size, so that their batches and tokenizers are identical. */
typedef struct SharedData {
  char key[1100];
  Dataset ds;
  double *log_freq;   /* [vocab] log of each token's count in the training split, NAN when 0 */
  char sha256[SHA256_HEX];   /* of the corpus file's bytes; "" for the synthetic language */
  /* Only what a checkpoint holds: the tokenizer, the held-out tokens (the
  ** whole of 'ds', n_train 0) and the frequencies; its corpus was not
  ** found, so runs on it evaluate and sample but do not train. */
  int held_out_only;
  char held_out_why[320];  /* what became of the corpus: "was not found", ... */
  int refs;
  struct SharedData *next;
} SharedData;

#define RUN_VAL_BATCHES 4

Model *run_model(Run *r);
/* The run's tokenizer: its data's, or its own; NULL when it has none. */
const Tokenizer *run_tok(const Run *r);

struct Run {
  int id;
  Lab *lab;
  RunOptions opt;                /* each step's optimizer follows: run_options_optim_at */
  Model *model;
  SharedData *data;
  Lens *lens;                    /* the online lens */
  LensFit *lens_fit;             /* the fitted lens: NULL before the first fit */
  int fitting;                   /* a lens fit is in progress (run_fitting) */
  History *hist;
  RunMetrics metrics;
  int paused;
  int dirty;                     /* changed since the last save */

  float *e_in0, *e_out0;         /* step-0 embeddings, for drift */
  uint64_t init_fingerprint;     /* hash of E_in at step 0 */

  int32_t *rows, *inputs, *targets;   /* one batch: [B,T+1], [B,T], [B,T] */

  /* r:evaluate's per-tensor results */
  char (*eval_names)[64];
  double *eval_norms;

  AlignWork *align_work;         /* buffers kept between alignments */
  double step_seconds_ema;       /* smoothed wall time of the training step */

  int name_given;                /* its name came from its script (or file), not from the lab */
  long next_state_check;         /* data-parallel: the step whose key holds the weights (run.c) */
  const StepHooks *hooks;        /* every training step's (lab_run_set_hooks); NULL: none */
  char origin[1024];             /* the file it was loaded from; "" when made in the lab */
  int weights_only;              /* loaded from a weights file: its tokenizer is learned here */
  /* A released model's tokenizer, held by the run itself when it has no
  ** corpus (with one, the tokenizer is its data's). */
  Tokenizer *own_tok;
};

struct Lab {
  Run **runs;
  int n_runs, cap_runs;
  int next_id;
  SharedData *data;
  long steps;                    /* lab_step calls */
  const Reducer *reducer;        /* data-parallel: the ranks sharing each batch; NULL: one process */
  char memory_note[128];         /* lab_headroom's name of the limit it shares */
  Cancel cancel;                 /* asked while a corpus is tokenized (lab_set_cancel) */
  int workers;                   /* runs lab_step steps at once (lab_set_workers) */
  Pool *pool;                    /* of 'workers' threads, made by the first step that uses it */
  Err *step_errs;                /* [cap_step] each run's error of a concurrent step */
  int *step_rcs;                 /* [cap_step] and its result */
  int cap_step;
};

/* How much more memory this process can get (sysmem_read): under a
** Reducer, the ranks on this machine share it, each its part. */
void lab_headroom(Lab *lab, SysMem *m);

/* run.c */
int run_step_alone(Run *r, Err *err);
void run_set_init_fingerprint(Run *r);     /* from e_in0 */   /* a step without the alignment */
Run *run_create(Lab *lab, const RunOptions *o, Model *model, Err *err);
/* The same on 'data', a reference the run takes over (NULL: acquired as
** run_create does). */
Run *run_create_on(Lab *lab, const RunOptions *o, Model *model, SharedData *data, Err *err);
/* The same for a released model: 'data' (may be NULL: no corpus) read
** with 'tok', or 'tok' alone, taken over, when there is no data. */
Run *run_create_pretrained(Lab *lab, const RunOptions *o, Model *model, SharedData *data, Tokenizer *tok,
                           Err *err);
/* A corpus read with a released model's tokenizer 'tok' (taken over, even
** on failure), shared by the runs that read the same text with the same
** tokenizer. No hash is checked: the model was not trained on it. */
SharedData *lab_data_acquire_pretrained(Lab *lab, const RunOptions *o, Tokenizer *tok, Err *err);
/* Put 'd' (refs 0, key set) among the lab's data. */
void lab_data_insert(Lab *lab, SharedData *d);
void run_destroy(Run *r);
void run_refresh_metrics(Run *r);
SharedData *lab_data_acquire(Lab *lab, const RunOptions *o, Err *err);
size_t run_memory_pending(const Run *r);
/* The fixed held-out lens positions into r->inputs, r->targets: returns
** the rows (of ctx positions each). */
int run_lens_heldout(Run *r);
/* A second fixed set as many, from the validation split's far end, sharing
** no token with the first: what a lens fit reports, having chosen on the
** first. Fails when the split is too short for both. */
int run_lens_report(Run *r, Err *err);
size_t data_memory_bytes(const RunOptions *o);
int lab_shares_data(const Lab *lab, const RunOptions *o);
void lab_data_release(Lab *lab, SharedData *d);

/* lensfit.c: the fitted translators as of the last fit that ended (not
** the half-way ones of a fit in progress) and their lens-step count. */
const float *lensfit_saved_params(const Run *r, long *lens_steps);

/* An error saying run 'r' needs a corpus to 'what' ("train"), when it is
** a released model loaded without one; else 0. */
int run_refuse_no_corpus(const Run *r, const char *what, Err *err);

/* readout.c: rows [b, t+1] of token ids this run can take, or an error
** naming the first that it cannot. */
int run_check_rows(const Run *r, const int32_t *rows, int b, int t, Err *err);

/* ckpt.c: the format a checkpoint's metadata names; a corpus named for a
** loaded run, put to the caller's policy (LabLoadOptions.corpus_allowed). */
#define LAB_CHECKPOINT_FORMAT "tielab-checkpoint"
int load_corpus_policy(RunOptions *o, const LabLoadOptions *lo, Err *err);

/* pretrained.c: a released model (lab_is_released_model) loaded as a run. */
Run *lab_load_released(Lab *lab, const char *path, const LabLoadOptions *lo, Err *err);

/* lab.c: lab_check_memory ending its refusal with 'advice' (what to lower). */
int lab_check_memory_advising(Lab *lab, const RunOptions *o, size_t budget, const char *advice, Err *err);
/* lab.c: would run 'r' changed to 'next' (the setting 'key' among what
** changed) fit? What the change adds is checked as lab_check_memory checks
** a new run; a change that adds nothing asks nothing. */
int lab_check_change(Run *r, const RunOptions *next, const char *key, Err *err);

/* lab.c: take a created run into the lab (giving it an id), or destroy it
** when its name is taken. */
Run *lab_adopt(Lab *lab, Run *r, Err *err);

/* live.c: change live settings (those the table marks live); steer_set
** (steer.h) is the one route to it. 'next' is the run's options with the
** 'n' 'keys' changed; the whole set is checked before anything changes (so
** schedule and decay_steps can change together), each key an event in the
** history. */
int run_set_options(Run *r, const RunOptions *next, const char *const *keys, int n, Err *err);

/* align in lab.c: run the alignment instrument of 'r' if it is due */
void lab_align_if_due(Lab *lab, Run *r);

#endif
