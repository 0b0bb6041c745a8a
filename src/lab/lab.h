/*
** lab.h -- the lab: named runs stepped in lockstep, with their instruments.
** The one header the Lua API, the trainer thread, the UI and headless mode
** include from below. Who may use a lab when, what a run is, and what each
** part below holds: docs/architecture.md, 'The lab'.
**
** The parts below, each under the file that implements it: settings.c,
** metrics, lab.c, run.c, lensfit.c, readout.c, params.c, tokens.c,
** ckpt.c, pretrained.c (live.c is reached through steer.h).
*/
#ifndef TIELAB_LAB_H
#define TIELAB_LAB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/cancel.h"
#include "base/err.h"
#include "core/config.h"
#include "core/reduce.h"
#include "core/schedule.h"
#include "core/step.h"
#include "lab/align.h"
#include "lab/history.h"
#include "lab/settings.h"

typedef struct Lab Lab;
typedef struct Run Run;

/* ---------------------------------------------------------------- settings.c
** Every option of a run, in one table (lab/settings.h) shared by the command
** line, Lua and the UI. Clients set options by name, so a misspelled key is
** an error naming it. */

typedef struct RunOptions {
  char name[64];
  ModelConfig model;          /* vocab dim layers heads ctx batch, tie_k */
  int tie_given;              /* tie_k was set explicitly */
  char tie_text[16];          /* "tied", "untied" or "K" before dim is known */
  uint64_t init_seed, data_seed, corpus_seed;
  int init_seed_given, data_seed_given;
  double lr, in_scale, out_scale;
  char corpus[1024];          /* "" for the built-in synthetic language */
  int corpus_max_mb;          /* largest corpus file read */
  int lens_every;             /* train the tuned lens every N steps (0 = off) */
  int eval_every;             /* validation loss every N steps */
  int align_every;            /* alignment with the partner every N steps (0 = off) */
  char partner[64];           /* name of the untied run to align with ("" = auto) */
  TieMerge tie_merge;         /* which matrix survives when tying */
  int threads;
  /* the optimizer and its schedule (core/schedule.h, OptimConfig) */
  int warmup, decay_steps, emb_warmup;   /* in steps */
  ScheduleKind schedule;
  double lr_min, eps, beta1, beta2, weight_decay, momentum, clip, grad_scale, emb_lr_scale;
  double warmup_start, lr_min_ratio;     /* fractions of lr; lr_min_ratio > 0 replaces lr_min */
  int decay_all, nesterov;
  OptimKind optimizer;
  int recipe;                 /* 0: none, 1: olmo */
  uint64_t given;             /* bit i: setting i of lab_settings was set explicitly */
  int corpus_nofollow;        /* a symbolic link in place of the corpus is refused (not a setting) */
} RunOptions;

/* Defaults for every field. */
void run_options_default(RunOptions *o);

/* Set one option by name from text ("128", "tied", "1e-3") or a number.
** Errors name the key: "unknown setting 'in_scal'", "'dim' must be an
** integer in [8, 8192], got 3.5". 'seed' sets both seeds unless one was
** given on its own. */
int run_options_set_text(RunOptions *o, const char *key, const char *value, Err *err);
int run_options_set_number(RunOptions *o, const char *key, double value, Err *err);

/* The learning-rate schedule and the optimizer the options describe (at
** the peak rate); the rate of step 'step' (1-based) and the embeddings'
** factor on it (emb_lr_scale times their own warmup); the optimizer of
** that one step. */
Schedule run_options_schedule(const RunOptions *o);
OptimConfig run_options_optim(const RunOptions *o);
void run_options_rates(const RunOptions *o, long step, double *lr, double *emb_factor);
OptimConfig run_options_optim_at(const RunOptions *o, long step);

/* Write option 'key' as text that run_options_set_text accepts back. */
int run_options_get_text(const RunOptions *o, const char *key, char *buf, size_t cap, Err *err);

/* Check the whole set's values (sizes, heads divide dim, tie K <= dim, the
** schedule); whether a run of them fits in memory is lab_check_memory's. */
int run_options_check(const RunOptions *o, Err *err);

/* ---------------------------------------------------------------- metrics
** What a run reports after each step: run.c fills it, lens.c, align.c and
** lensfit.c measure their parts (types only). */

#define LAB_MAX_POS (CONFIG_MAX_LAYERS + 1)

/* One lens evaluated per layer position 0..n-1 (n = L+1; the last position
** is the model's own output), on fixed held-out data, bits per token. */
typedef struct LensStats {
  int n;
  long step;                       /* when last evaluated (-1: never) */
  double kl[LAB_MAX_POS];          /* KL(final || lens) */
  double ce[LAB_MAX_POS];          /* cross-entropy against the next token */
  double entropy[LAB_MAX_POS];
  double acc[LAB_MAX_POS];         /* top-1 accuracy against the next token */
  double agree[LAB_MAX_POS];       /* top-1 agreement with the final layer */
  double contrib[LAB_MAX_POS];     /* kl[i-1] - kl[i]; 0 at i = 0 */
} LensStats;

typedef struct AlignStats {
  long step;                       /* -1: never computed */
  char partner[64];
  long partner_step;               /* the partner's step when compared */
  int partner_shares_init;         /* partner's E_in equalled ours at step 0 */
  AlignResult vs_in, vs_out;       /* our shared matrix vs partner's E_in / E_out */
} AlignStats;

/* How the last post-hoc fit of the tuned lens went (lensfit.h). */
/* Why a fit stopped: its held-out KL no longer improved (converged), the
** live lens ended well above the kept one (diverged), or it reached its
** step limit still improving (max_steps). Names: lensfit_stop_name. */
typedef enum LensFitStop { LENSFIT_STOP_CONVERGED, LENSFIT_STOP_DIVERGED, LENSFIT_STOP_MAX_STEPS } LensFitStop;

typedef struct LensFitInfo {
  long steps;                      /* lens steps it took */
  int converged;                   /* stopped by its tolerance, not its step limit */
  double lr, tol;                  /* its starting rate and tolerance */
  int tokens_per_step;
  int patience;                    /* lens steps over which the tolerance is judged */
  LensFitStop stopped;             /* why it stopped */
  double seconds;                  /* wall time of the fit */
} LensFitInfo;

typedef struct RunMetrics {
  long step;
  double loss, val_loss, val_ppl;  /* val_* NaN until first evaluated */
  double aux_loss;                 /* what the step hooks' on_hidden reported at the last
                                   ** step (summed over ranks); NaN when none ran */
  long val_step;
  GradStats grad;
  double grad_ratio, grad_ratio_act;        /* L2: out/in, out/in_act */
  double grad_ratio_l1, grad_ratio_act_l1;
  double tokens_per_s;
  double drift_in, drift_out;      /* mean row cosine to step 0 */
  double normfreq_in, normfreq_out; /* correlation of row norm with log token frequency */
  int tie_k, dim;
  double in_scale, out_scale;
  double lr, emb_lr;               /* rates of the last step taken (before any: of step 1) */
  int paused;
  LensStats lens, logit_lens;
  AlignStats align;
  /* ---- the fitted lens (lensfit.h): the last post-hoc fit, measured on
  ** a second fixed held-out set, apart from the positions of 'lens' the
  ** fit chose it on; fitted_lens.step is the run step it was fitted at,
  ** -1 before any fit. */
  LensStats fitted_lens;
  LensFitInfo fitted;
} RunMetrics;

/* ---------------------------------------------------------------- lab.c */

Lab *lab_new(Err *err);
void lab_free(Lab *lab);

/* Data-parallel training: every run of the lab takes its share of each
** batch (rank 'red->rank' of 'red->world', by rows) and sums the gradient
** across the ranks through 'red' before the scales, the clip and the
** optimizer, so that every rank holds the same weights as one process
** stepping the whole batch would; every instrument is the whole batch's.
** On the steps the online lens trains, every rank steps the whole batch
** itself (the lens learns from every row's hidden states). Set before the
** first run; 'red' outlives the lab. Only rank 0 writes files: run_save
** and the exports do nothing on the others, which hold the same runs. */
void lab_set_reducer(Lab *lab, const Reducer *red);
int lab_rank(const Lab *lab);    /* 0 in a plain process */

/* Reading a new run's corpus (training its tokenizer, encoding it) is the
** one piece of long work outside a step: it stops early, the run refused
** with an error that says so, once 'c' asks (an interrupt, which the lab's
** owner knows of and the lab does not). 'c' is copied; NULL: never. */
void lab_set_cancel(Lab *lab, const Cancel *c);
int lab_world(const Lab *lab);   /* 1 in a plain process */

/* A write 'verb' ("r:save") of run 'r' that every rank's script makes and
** rank 0 alone carries out, with result 'rc' there: every rank returns
** rank 0's result (-1, and on rank > 0 an error naming it, when it
** failed), so that the ranks' scripts go on alike. Every rank must call it
** at the same point; -1 with 'err' saying so when they do not. One
** process: rc. */
int run_agree(Run *r, const char *verb, int rc, Err *err);

/* Would a new run of options 'o' fit? The run at its largest and a corpus
** it would add are compared with what this process can still get (the
** smallest of MemAvailable, the cgroup's memory.max and
** RLIMIT_AS/RLIMIT_DATA) less what the lab's runs may still allocate,
** and, when 'budget' is not 0, with 'budget' bytes. Refuses with both
** figures (sysmem_check_in's message) and what to lower. A NULL 'lab' is
** one not made yet: the command line checks its run so before a lab
** exists. lab_add_run and lab_load_with check first; a live change checks
** what it adds; lab_align checks its workspace. */
int lab_check_memory(Lab *lab, const RunOptions *o, size_t budget, Err *err);
/* What a new run of options 'o' adds to the lab: the run at its largest and
** its corpus, unless a run of the lab reads it already. */
size_t lab_memory_need(Lab *lab, const RunOptions *o);

Run *lab_add_run(Lab *lab, const RunOptions *o, Err *err);
/* The same within a budget of bytes for the run and its corpus (0: none). */
Run *lab_add_run_within(Lab *lab, const RunOptions *o, size_t budget, Err *err);
/* -1 when 'r' is not the lab's, or is in a lens fit (run_fitting). */
int lab_remove_run(Lab *lab, Run *r);

int lab_n_runs(const Lab *lab);
/* The lab-wide step: the step of its furthest run (0 with no runs). */
long lab_max_step(const Lab *lab);
Run *lab_run(Lab *lab, int i);
Run *lab_find(Lab *lab, const char *name);
Run *lab_run_by_id(Lab *lab, int id);

/* Step every run that is not paused once, then run the alignment
** instrument of every tied run that is due (so that it compares runs at the
** same step). A run whose loss turns NaN or infinite is paused with a
** message naming the step, and the call returns -1 with that message (the
** first failing run's, in the lab's order); the other runs have stepped.
**
** With one worker (the default) the runs step one after another, in order.
** With more, as many runs step at once, each on a thread of the lab's own
** pool, OpenBLAS held at one thread meanwhile (its thread count is the
** process's); a run's kernel pool of 'threads' is its own either way, so a
** run's weights after a step are the same bits whatever the workers. Runs
** with step hooks (whose calls one thread serves, one at a time) and runs
** that share their batches with other ranks (whose sums go in order) step
** after the others, one at a time, as with one worker. */
int lab_step(Lab *lab, Err *err);

/* How many runs lab_step steps at once: 1..LAB_WORKERS_MAX, else an
** error saying so. Small models gain most from several workers of one
** kernel thread each; one large run from one worker of several. */
#define LAB_WORKERS_MAX 256
int lab_set_workers(Lab *lab, int workers, Err *err);
int lab_workers(const Lab *lab);

/* Alignment of a's shared (input) matrix against b's E_in and E_out. */
int lab_align(Run *a, Run *b, AlignStats *out, Err *err);

/* ---------------------------------------------------------------- run.c */

int run_id(const Run *r);
const char *run_name(const Run *r);
const RunOptions *run_options(const Run *r);
const RunMetrics *run_metrics(const Run *r);
const ModelConfig *run_config(const Run *r);   /* the model's shape */
int run_tensor_count(const Run *r);           /* tensors of its checkpoint */
History *run_history(Run *r);

/* One step of this run alone (its alignment, if due, compares with the
** partner as it stands). */
int run_step(Run *r, Err *err);
/* Validation loss, lens evaluation and drift now, whatever the intervals. */
int run_measure(Run *r, Err *err);
/* The validation loss alone, now: on the held-out batches the periodic
** evaluation uses, so that at step s it gives what eval_every dividing s
** would have; sets val_loss, val_ppl and val_step (the current step). */
int run_measure_val(Run *r, Err *err);
/* A validation number as shown: "4.5123" when measured at the current
** step, "4.5123@50" when it is step 50's (a stale value says its step),
** "-" before any. 'v' is m->val_loss or m->val_ppl. */
const char *run_val_text(const RunMetrics *m, double v, int decimals, char *buf, size_t cap);
int run_set_paused(Run *r, int paused);

/* One training step on explicit rows [b, t+1] (b <= B, t <= T, checked as
** run_evaluate checks them) with the run's schedule, scales and clip; the
** step count advances and the instruments due run, as after run_step. */
int run_train_on(Run *r, const int32_t *rows, int b, int t, Err *err);

/* The hooks every training step of 'r' runs with from now on (r:step,
** r:train_on, lab_step; not r:evaluate), or none with NULL. The pointer is
** the caller's: what it points to must live, unchanged or changed only
** between steps (each step works on its own copy), until it is cleared or
** the run is gone. A hook that fails stops the step before the update
** (weights untouched), the run pauses, and the step's caller returns -1
** with the hook's message. */
void lab_run_set_hooks(Run *r, const StepHooks *hooks);

/* The rows [B, T+1] that training step 'step' (1-based: the update that
** makes the step count 'step') trains on, into 'rows'. */
int run_batch(Run *r, long step, int32_t *rows, Err *err);

/* Row norms of E_in and E_out against log frequency of each token in the
** training split (tokens never seen are left out): fills up to 'cap'
** entries of each array and returns how many, or -1. */
int run_row_norms(Run *r, double *norm_in, double *norm_out, double *log_freq, int cap, Err *err);

/* Bytes a run of these options holds at most: model, moments, activations,
** step-0 copies, lens, alignment workspace, history (not the corpus). */
size_t run_memory_bytes(const RunOptions *o);

/* ---------------------------------------------------------------- lensfit.c */

/* Nonzero while run 'r' is in a lens fit (r:fit_lens), whose weights stay
** frozen while it lasts: it is not trained, re-tied or removed until the
** fit ends (a host may let other work in between the fit's lens steps). */
int run_fitting(const Run *r);
/* An error saying run 'r' cannot 'what' while its lens fit lasts, or 0
** when no fit is in progress. */
int run_refuse_if_fitting(const Run *r, const char *what, Err *err);

/* ---------------------------------------------------------------- readout.c */

/* Loss and gradients on explicit rows [b, t+1] without updating weights. */
typedef struct EvalResult {
  double loss;
  GradStats grad;
  int n_tensors;
  char (*names)[64];         /* points into the run; valid until the next call */
  double *grad_norm;         /* per tensor, after scales, before the clip */
} EvalResult;
int run_evaluate(Run *r, const int32_t *rows, int b, int t, EvalResult *out, Err *err);

/* Sample 'n' tokens of text continuing 'prompt' (may be NULL), temperature
** 'temp', from seed 'seed'; writes at most cap-1 bytes and a NUL. The text
** is valid UTF-8, cut between characters: a character the tokens leave
** incomplete, and bytes that form none, are written as U+FFFD. */
int run_sample(Run *r, const char *prompt, int n, double temp, uint64_t seed, char *out,
               size_t cap, Err *err);

/* The same sample as run_sample, as the tokens' bytes: whole tokens while
** they fit 'cap' bytes, nothing decoded or replaced, no NUL added (a token
** may hold a 0); '*len' is how many. For a display that shows each byte
** that forms no character for what it is. */
int run_sample_bytes(Run *r, const char *prompt, int n, double temp, uint64_t seed, char *out, size_t cap,
                     size_t *len, Err *err);

/* The residual stream of a forward on rows [b, t+1] (checked as
** run_evaluate checks them; the last id of a row is a target, not read)
** at every position p in 0..L (0 after the embeddings, p after block
** p-1): 'out[p]' gets [b*t, d] floats, row i*t+j for position j of row i.
** No targets, no gradient, nothing stored: the activations a backward
** would need are overwritten, so this runs between steps only. */
int run_hidden(Run *r, const int32_t *rows, int b, int t, float *const *out, Err *err);

/* Export the history as CSV or JSONL. */
/* By extension: .jsonl, or .csv (the long form; run_export_wide: a column
** per series) beside NAME.events.csv and NAME.meta.json (docs/export.md). */
int run_export(Run *r, const char *path, Err *err);
int run_export_wide(Run *r, const char *path, Err *err);
/* The sidecar of a .csv export with 'suffix' in 'buf' (NULL when the path
** is no .csv or too long), so that clients can check it as they check 'path'. */
#define RUN_EXPORT_EVENTS ".events.csv"
#define RUN_EXPORT_META ".meta.json"
const char *run_export_sidecar(const char *path, const char *suffix, char *buf, size_t cap);

/* ---------------------------------------------------------------- params.c
** A run's parameters as matrices, by their nanoGPT names (the checkpoint's
** tensors, in its order) or the aliases RUN_PARAM_E_IN (the token
** embedding, transformer.wte.weight) and RUN_PARAM_E_OUT (the logits side,
** lm_head.weight). A 2-D tensor is rows x cols as stored (row-major); a
** 1-D tensor of n entries (a bias, a LayerNorm) is an n x 1 column.
**
** E_out is read as the logits see it: its first tie_k columns hold E_in's
** (the shared columns), so a tied run reads the shared matrix from both.
** Those columns are E_in's parameters: writing E_out writes them into
** E_in and the rest into lm_head's own columns, then mirrors, so writing
** E_out of a tied run writes the shared matrix. Writing E_in re-mirrors
** the shared columns into E_out.
**
** A write is refused, the weights untouched, when the shape differs (the
** error names both), an entry is not finite (the error names the first),
** or a lens fit holds the weights (run_fitting). It leaves the optimizer's
** moments and step count as they were, and marks the run changed for the
** next save. Between steps only: the caller holds the lab. */

#define RUN_PARAM_E_IN "E_in"
#define RUN_PARAM_E_OUT "E_out"

int run_param_count(const Run *r);
const char *run_param_name(const Run *r, int i);   /* NULL outside 0..count-1 */
int run_param_shape(const Run *r, const char *name, int *rows, int *cols, Err *err);
/* Copy parameter 'name' into 'out' of rows x cols floats (its shape). */
int run_param_read(const Run *r, const char *name, float *out, int rows, int cols, Err *err);
int run_param_write(Run *r, const char *name, const float *in, int rows, int cols, Err *err);

/* ---------------------------------------------------------------- tokens.c
** The run's tokenizer (byte-level, or BPE trained on its corpus), also
** there for a run loaded without its corpus; a run with none (a model
** made without a byte vocabulary) refuses with an error saying so. */

/* The number of ids the tokenizer knows (at most the model's vocab). */
int run_token_count(const Run *r, Err *err);
/* Where the tokenizer comes from, for what a run's samples are decoded
** with: a run loaded from a weights file that held none decodes with one
** learned here, not the one its model was trained with. */
typedef struct TokenizerInfo {
  const char *kind;   /* "text" (learned from the corpus), "checkpoint" (the merges its file holds,
                      ** the corpus gone) or "synthetic" (learned from the built-in language) */
  char source[1024];  /* the corpus's path, the checkpoint's, or "" (synthetic) */
  int ids;            /* 256 + its merges, at most the model's vocab */
  int own;            /* 1: the one the model trained with; 0: a stand-in */
} TokenizerInfo;
int run_tokenizer_info(const Run *r, TokenizerInfo *t, Err *err);
/* The same in a few words: "learned from data/a.txt, 300 ids", "stored in
** the checkpoint m.safetensors, 300 ids"; a stand-in says so. */
const char *run_tokenizer_text(const TokenizerInfo *t, char *buf, size_t cap);
/* Encode 'len' bytes of 'text' into 'ids' (room for 'cap'; 'len' is
** always enough: a token is at least one byte); '*n' gets how many. */
int run_tokenize(const Run *r, const char *text, size_t len, int32_t *ids, size_t cap, size_t *n, Err *err);
/* Decode 'n' ids into 'out' (room for 'cap' bytes, no NUL added): '*len'
** gets the bytes they make, which may be more than 'cap' (call with cap 0
** to learn it). An id outside the tokenizer is an error naming it. */
int run_detokenize(const Run *r, const int32_t *ids, size_t n, char *out, size_t cap, size_t *len, Err *err);
/* The bytes of token 'id', owned by the run; NULL with 'err' set when out
** of range. */
const char *run_token(const Run *r, int32_t id, size_t *len, Err *err);

/* ---------------------------------------------------------------- ckpt.c */

/* Checkpoints (safetensors): model, moments, lens translators (online and
** fitted), tokenizer, history, settings. 'lab_load' also takes a
** weights-only nanoGPT file, and a released GPT-2-family model (its
** folder, or its .safetensors file beside config.json: pretrained.c),
** which becomes a run with the model's own tokenizer; the checkpoint of
** such a run holds that tokenizer's files ("tokenizer.file.NAME").
**
** run_save replaces 'path' only when it is missing or a regular file (a
** symbolic link to a regular file is followed: its target is replaced),
** never a directory, device, FIFO or socket; it removes the temporary
** files of earlier saves to 'path' whose writer died.
**
** Loading trusts nothing in the file: every tensor's shape is checked
** before anything is allocated, every float must be finite and second
** moments >= 0, metadata parses strictly and must agree with itself. Every
** refusal is one line that starts with 'path'. Tensors outside the model,
** "optim.", "lens.", "lens_fit.", "drift.", "tokenizer." and "history"
** namespaces are ignored (later versions may add some); one inside them
** that this version does not expect is refused. A checkpoint without
** "lens_fit." tensors loads with no fitted lens. */
int run_save(Run *r, const char *path, Err *err);
Run *lab_load(Lab *lab, const char *path, const char *name, Err *err);

typedef struct LabLoadOptions {
  const char *name;          /* of the new run; NULL or "": the file's */
  /* Consulted with a checkpoint's corpus path (in a buffer of 'cap' bytes)
  ** before the corpus is touched; 0 refuses the load. It may put in its
  ** place the name to open: the very file it checked, links resolved.
  ** NULL: every corpus is allowed, as named. */
  int (*corpus_allowed)(void *ctx, char *corpus, size_t cap);
  void *ctx;
  /* Bytes the new run may take (see lab_check_memory); 0: no budget. */
  size_t budget;
  /* Where the checkpoint's corpus is now (NULL or "": where it was). It
  ** must hold the same bytes (SHA-256). A corpus that is gone leaves the
  ** run on the checkpoint's held-out tokens: it does all but train. */
  const char *corpus;
  /* A symbolic link in place of the file is refused, not followed (the
  ** autosave folder, which holds only what tielab wrote there). */
  int nofollow;
  /* Only a tielab checkpoint or weights file is read: a folder in its
  ** place is refused, not read as a released model (the autosave folder). */
  int checkpoint_only;
  /* The same for the corpus the checkpoint names (a sandboxed script's). */
  int corpus_nofollow;
  /* A released model's rows per batch (0: LAB_RELEASED_BATCH); refused
  ** for a checkpoint, which keeps its own. */
  int batch;
} LabLoadOptions;

/* A released model's batch unless one is given: its context is the whole
** of the model's (1024 positions for GPT-2), and a row of it is already
** the memory of many of the lab's own batches. */
#define LAB_RELEASED_BATCH 1

Run *lab_load_with(Lab *lab, const char *path, const LabLoadOptions *o, Err *err);

/* ---------------------------------------------------------------- pretrained.c */

/* Whether lab_load_with reads 'path' as a released model: a folder, or a
** folder's model.safetensors beside its config.json (no tielab checkpoint). */
int lab_is_released_model(const char *path, int flags);

#endif
