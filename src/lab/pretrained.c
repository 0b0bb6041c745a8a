/*
** pretrained.c -- a released GPT-2-family model as a run: its folder (or
** its .safetensors file beside config.json) read through core/hfmodel.h
** into the reference model, with the model's own tokenizer (core/hftok.h)
** in place of one learned here, so that its ids are the ones its embedding
** rows were trained for. The run's settings, its corpus and its memory:
** docs/architecture.md, 'A released model as a run'.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "base/safeopen.h"
#include "core/hfmodel.h"
#include "core/weights.h"
#include "lab/run.h"

/* A header larger than this is no checkpoint tielab wrote. */
#define HEADER_PEEK_MAX (64u << 20)

/* The "format" of a safetensors file's metadata, read from its header
** alone ("" when it has none or cannot be read: the loader that reads
** the file says why). */
static void header_format(const char *path, int flags, char *out, size_t cap) {
  uint8_t len8[8];
  out[0] = '\0';
  int fd = safeopen_read(path, flags, NULL, NULL);
  if (fd < 0) return;
  uint64_t n = 0;
  if (read(fd, len8, 8) == 8)
    for (int i = 7; i >= 0; i--) n = n << 8 | len8[i];
  char *json = n > 0 && n <= HEADER_PEEK_MAX ? malloc(n) : NULL;
  if (json && read(fd, json, n) == (ssize_t)n) {
    json_t *root = json_loadb(json, n, 0, NULL);
    const char *f = json_string_value(json_object_get(json_object_get(root, "__metadata__"), "format"));
    snprintf(out, cap, "%s", f ? f : "");
    json_decref(root);
  }
  free(json);
  close(fd);
}

int lab_is_released_model(const char *path, int flags) {
  struct stat st;
  if (stat(path, &st) < 0) return 0;
  if (S_ISDIR(st.st_mode)) return 1;
  char config[4096], format[64];
  const char *slash = strrchr(path, '/');
  /* Only a folder's own weights file stands for the folder: a nanoGPT
  ** weights file that happens to sit beside some config.json stays one. */
  if (strcmp(slash ? slash + 1 : path, "model.safetensors") != 0) return 0;
  int dir_len = slash ? (int)(slash - path) : 1;
  snprintf(config, sizeof config, "%.*s/config.json", dir_len, slash ? path : ".");
  if (stat(config, &st) < 0 || !S_ISREG(st.st_mode)) return 0;
  /* A checkpoint saved beside a model's config.json is still a checkpoint. */
  header_format(path, flags, format, sizeof format);
  return strcmp(format, LAB_CHECKPOINT_FORMAT) != 0;
}

/* The run's name when none is given: the model folder's. */
static void folder_name(const char *folder, char *out, size_t cap) {
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", folder);
  size_t n = strlen(buf);
  while (n > 1 && buf[n - 1] == '/') buf[--n] = '\0';
  const char *base = strrchr(buf, '/');
  snprintf(out, cap, "%s", base && base[1] ? base + 1 : buf);
}

static int released_options(const HfModel *hm, const LabLoadOptions *lo, RunOptions *o, Err *err) {
  run_options_default(o);
  if (hf_gpt2_config(hm, &o->model, err) < 0) return -1;
  o->model.batch = lo && lo->batch ? lo->batch : LAB_RELEASED_BATCH;
  o->model.tie_k = hf_info(hm)->tied ? o->model.dim : 0;
  config_tie_name(o->model.tie_k, o->model.dim, o->tie_text);
  o->tie_given = 1;
  if (lo && lo->corpus && *lo->corpus) snprintf(o->corpus, sizeof o->corpus, "%s", lo->corpus);
  if (load_corpus_policy(o, lo, err) < 0) return -1;
  o->corpus_nofollow = lo && lo->corpus_nofollow;
  if (lo && lo->name && *lo->name) snprintf(o->name, sizeof o->name, "%s", lo->name);
  else folder_name(hf_folder(hm), o->name, sizeof o->name);
  return run_options_check(o, err);
}

/* Every parameter read and checked finite: nothing in the files is trusted. */
static Model *read_released(const HfModel *hm, const RunOptions *o, Err *err) {
  Model *m = model_create(&o->model, o->threads, err);
  if (!m) return NULL;
  int n = model_tensor_count(m);
  int rc = hf_gpt2_read(hm, model_tensor(m, 0), n, model_params(m), err);
  for (int i = 0; rc == 0 && i < n; i++) {
    const TensorInfo *t = model_tensor(m, i);
    rc = weights_check_finite(t->name, model_params(m) + t->offset, t->numel, err);
  }
  if (rc < 0) {
    model_free(m);
    return NULL;
  }
  return m;
}

static Run *released_run(Lab *lab, const HfModel *hm, const RunOptions *o, Err *err) {
  Tokenizer *tok = tokenizer_open_pretrained(hf_folder(hm), err);
  if (!tok) return NULL;
  Model *m = read_released(hm, o, err);
  if (!m) {
    tokenizer_free(tok);
    return NULL;
  }
  SharedData *data = NULL;
  if (o->corpus[0]) {
    data = lab_data_acquire_pretrained(lab, o, tok, err);   /* takes 'tok' */
    tok = NULL;
    if (!data) {
      model_free(m);
      return NULL;
    }
  }
  Run *r = lab_adopt(lab, run_create_pretrained(lab, o, m, data, tok, err), err);
  if (r && r->data) run_measure(r, err);   /* its validation loss and lenses on the corpus, from the start */
  return r;
}

/* hf_open reads config.json with a folder only: a model.safetensors given
** on its own is opened as the folder that holds it, config.json and all
** (the folder's weights are then this very file). */
static HfModel *open_released(const char *path, Err *err) {
  char folder[4096], beside[4200], *a = realpath(path, NULL), *b = NULL;
  const char *slash = strrchr(path, '/');
  snprintf(folder, sizeof folder, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1, slash ? path : ".");
  snprintf(beside, sizeof beside, "%s/model.safetensors", folder);
  struct stat st;
  int whole_folder = stat(path, &st) == 0 && !S_ISDIR(st.st_mode) && a && (b = realpath(beside, NULL)) &&
                     strcmp(a, b) == 0;
  free(a);
  free(b);
  return hf_open(whole_folder ? folder : path, err);
}

Run *lab_load_released(Lab *lab, const char *path, const LabLoadOptions *lo, Err *err) {
  HfModel *hm = open_released(path, err);
  if (!hm) return NULL;
  RunOptions o;
  Run *r = NULL;
  /* The model's shape is its own: only the batch can be lowered. */
  if (released_options(hm, lo, &o, err) == 0 &&
      lab_check_memory_advising(lab, &o, lo ? lo->budget : 0,
                                "a released model's shape is its own: give a smaller batch "
                                "(lab.load(path, {batch = B}), at least 1)", err) == 0)
    r = released_run(lab, hm, &o, err);
  hf_close(hm);
  return r;
}
