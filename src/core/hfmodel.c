/*
** hfmodel.c -- see hfmodel.h.
**
** Opening goes in steps, each refusing what it cannot vouch for: the
** config (config.json, when there is one), the weights' files (one file,
** or the index's shards, each header read with st_read_header), the index
** against what the shards hold, the family, the embedding and head among
** the tensors, tying against the config, shapes against the config.
** Reading a tensor opens its file again and preads it row by row.
*/
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/safeopen.h"
#include "base/sysmem.h"
#include "base/text.h"
#include "core/hffamily.h"
#include "core/hfmodel.h"
#include "core/model.h"
#include "core/weights.h"

#define CONFIG_JSON "config.json"
#define SINGLE_FILE "model.safetensors"
#define INDEX_JSON "model.safetensors.index.json"

struct HfModel {
  char *path, *folder;
  json_t *config;          /* NULL for a bare file */
  const HfFamily *fam;
  HfInfo info;
  HfTensor *tensors;
  int n;
  char **files;            /* the safetensors files, as paths */
  int n_files;
  char *model_type;
};

/* ---------------------------------------------------------------- helpers */

/* "dir/name", malloc'd. */
static char *join(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *s = malloc(n);
  if (s) snprintf(s, n, "%s/%s", dir, name);
  return s;
}

static int is_file(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* The name a file is known by in messages: its last component. */
static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* ---------------------------------------------------------------- config */

/* The config's value of 'key', or its text_config's (Gemma 3's
** multimodal configs keep the language model's sizes there). */
static json_t *config_get(const HfModel *m, const char *key) {
  if (!m->config) return NULL;
  json_t *v = json_object_get(m->config, key);
  json_t *text = json_object_get(m->config, "text_config");
  if (!v && json_is_object(text)) v = json_object_get(text, key);
  return v;
}

/* The first of 'keys' (NULL-ended) present, as a positive int: 1 found,
** 0 absent, -1 bad. */
static int config_int(const HfModel *m, const char *const *keys, int *out, Err *err) {
  for (; *keys; keys++) {
    json_t *v = config_get(m, *keys);
    if (!v || json_is_null(v)) continue;
    if (!json_is_integer(v) || json_integer_value(v) <= 0 || json_integer_value(v) > INT32_MAX)
      return err_set(err, "%s: %s is not a positive integer", CONFIG_JSON, *keys);
    *out = (int)json_integer_value(v);
    return 1;
  }
  return 0;
}

static const char *const DIM_KEYS[] = {"hidden_size", "n_embd", "d_model", NULL};
static const char *const LAYER_KEYS[] = {"num_hidden_layers", "n_layer", "n_layers", "num_layers", NULL};
static const char *const HEAD_KEYS[] = {"num_attention_heads", "n_head", "n_heads", "num_heads", NULL};
static const char *const CTX_KEYS[] = {"max_position_embeddings", "n_positions", "max_sequence_length", NULL};

/* config.json and the shard index are small: a larger file is no model's. */
#define JSON_FILE_MAX (64u << 20)

/* A JSON file, read from what was opened (not by name again), refusing a
** key given twice; NULL with 'err' naming the file. */
static json_t *load_json(const char *path, Err *err) {
  struct stat st;
  FILE *f = safeopen_fread(path, 0, &st, err);
  if (!f) return NULL;
  json_t *root = NULL;
  json_error_t je;
  if ((uint64_t)st.st_size > JSON_FILE_MAX)
    err_set(err, "%s: %lld bytes, more than a model's JSON file takes (%u)", path, (long long)st.st_size,
            JSON_FILE_MAX);
  else if (!(root = json_loadf(f, JSON_REJECT_DUPLICATES, &je)))
    err_set(err, "%s: bad JSON at line %d: %s", path, je.line, je.text);
  fclose(f);
  return root;
}

static int read_config(HfModel *m, Err *err) {
  char *path = join(m->folder, CONFIG_JSON);
  if (!path) return err_set(err, "out of memory");
  if (!is_file(path)) {   /* weights alone: the names say what they are */
    free(path);
    return 0;
  }
  m->config = load_json(path, err);
  int rc = 0;
  if (!m->config)
    rc = -1;
  else if (!json_is_object(m->config))
    rc = err_set(err, "%s: not a JSON object", path);
  free(path);
  return rc;
}

/* ---------------------------------------------------------------- files */

static int add_file(HfModel *m, const char *path, Err *err) {
  char **f = realloc(m->files, (size_t)(m->n_files + 1) * sizeof *f);
  if (!f) return err_set(err, "out of memory");
  m->files = f;
  if (!(m->files[m->n_files] = strdup(path))) return err_set(err, "out of memory");
  m->n_files++;
  return 0;
}

/* Every tensor of 'file' (the model's file 'k') added to the model. */
static int read_file_header(HfModel *m, int k, Err *err) {
  StHeader h;
  if (st_read_header(&h, m->files[k], err) != 0) return -1;
  HfTensor *t = realloc(m->tensors, (size_t)(m->n + h.n) * sizeof *t);
  if (!t) {
    st_header_free(&h);
    return err_set(err, "out of memory");
  }
  m->tensors = t;
  for (int i = 0; i < h.n; i++) {
    StEntry *e = &h.entries[i];
    HfTensor *x = &m->tensors[m->n++];
    *x = (HfTensor){.name = e->name, .file = m->files[k], .dtype = e->dtype, .ndim = e->ndim,
                    .offset = e->offset, .nbytes = e->nbytes};
    memcpy(x->shape, e->shape, sizeof x->shape);
    e->name = NULL;   /* the model's now */
  }
  st_header_free(&h);
  return 0;
}

/* A shard's name from the index: a file in the folder (or below it),
** never a path out of it. */
static int shard_name_ok(const char *s) {
  if (!*s || s[0] == '/') return 0;
  for (const char *p = s; p; p = strchr(p, '/')) {
    if (*p == '/') p++;
    if (strncmp(p, "..", 2) == 0 && (p[2] == '/' || p[2] == '\0')) return 0;
  }
  return 1;
}

static int file_index(const HfModel *m, const char *path) {
  for (int i = 0; i < m->n_files; i++)
    if (strcmp(m->files[i], path) == 0) return i;
  return -1;
}

/* The shards the index names, each once, in the order first named. */
static int index_shards(HfModel *m, json_t *map, const char *index, Err *err) {
  const char *name;
  json_t *v;
  json_object_foreach(map, name, v) {
    if (!json_is_string(v))
      return err_set(err, "%s: weight_map's entry for '%s' is not a file name", index, name);
    const char *shard = json_string_value(v);
    if (!shard_name_ok(shard))
      return err_set(err, "%s: tensor '%s' is mapped to '%s', a path outside the folder", index, name,
                     shard);
    char *path = join(m->folder, shard);
    if (!path) return err_set(err, "out of memory");
    int rc = 0;
    if (file_index(m, path) < 0) {
      if (!is_file(path))
        rc = err_set(err, "%s: names shard '%s' (for '%s'), which is not in %s", index, shard, name,
                     m->folder);
      else
        rc = add_file(m, path, err);
    }
    free(path);
    if (rc != 0) return -1;
  }
  return 0;
}

/* Each tensor of the shards where the index says, and each the index
** names in its shard. */
static int index_agrees(const HfModel *m, json_t *map, const char *index, Err *err) {
  for (int i = 0; i < m->n; i++) {
    const HfTensor *t = &m->tensors[i];
    json_t *v = json_object_get(map, t->name);
    if (!v)
      return err_set(err, "%s: holds tensor '%s', which %s does not list", t->file, t->name,
                     base_name(index));
    char *want = join(m->folder, json_string_value(v));
    if (!want) return err_set(err, "out of memory");
    int here = strcmp(want, t->file) == 0;
    free(want);
    if (!here)
      return err_set(err, "%s: holds tensor '%s', which %s maps to '%s'", t->file, t->name,
                     base_name(index), json_string_value(v));
  }
  const char *name;
  json_t *v;
  json_object_foreach(map, name, v) {
    if (!hf_tensor(m, name))
      return err_set(err, "%s: maps tensor '%s' to '%s', which does not hold it", index, name,
                     json_string_value(v));
  }
  return 0;
}

static int by_name(const void *a, const void *b) {
  return strcmp(((const HfTensor *)a)->name, ((const HfTensor *)b)->name);
}

/* Two shards holding one name (within a file, the header's JSON already
** refuses it). Sorts the tensors by name, as hf_tensor needs them. */
static int no_duplicates(HfModel *m, Err *err) {
  if (m->n > 1) qsort(m->tensors, (size_t)m->n, sizeof *m->tensors, by_name);
  for (int i = 1; i < m->n; i++)
    if (strcmp(m->tensors[i - 1].name, m->tensors[i].name) == 0)
      return err_set(err, "%s: tensor '%s' is in both %s and %s", m->folder, m->tensors[i].name,
                     base_name(m->tensors[i - 1].file), base_name(m->tensors[i].file));
  return 0;
}

static int read_index(HfModel *m, const char *index, Err *err) {
  json_t *root = load_json(index, err);
  if (!root) return -1;
  json_t *map = json_object_get(root, "weight_map");
  int rc = 0;
  if (!json_is_object(map))
    rc = err_set(err, "%s: no \"weight_map\" object", index);
  else if (json_object_size(map) == 0)
    rc = err_set(err, "%s: weight_map is empty", index);
  if (rc == 0) rc = index_shards(m, map, index, err);
  for (int k = 0; rc == 0 && k < m->n_files; k++) rc = read_file_header(m, k, err);
  if (rc == 0) rc = no_duplicates(m, err);
  if (rc == 0) rc = index_agrees(m, map, index, err);
  json_decref(root);
  return rc;
}

/* The weights of folder 'm->folder': model.safetensors, else the index. */
static int read_folder_weights(HfModel *m, Err *err) {
  char *single = join(m->folder, SINGLE_FILE), *index = join(m->folder, INDEX_JSON);
  int rc;
  if (!single || !index)
    rc = err_set(err, "out of memory");
  else if (is_file(single))
    rc = add_file(m, single, err) == 0 ? read_file_header(m, 0, err) : -1;
  else if (is_file(index))
    rc = read_index(m, index, err);
  else
    rc = err_set(err, "%s: neither %s nor %s (only safetensors weights are read)", m->folder,
                 SINGLE_FILE, INDEX_JSON);
  free(single);
  free(index);
  return rc;
}

/* ---------------------------------------------------------------- family */

static int has_name(void *ctx, const char *name) { return hf_tensor(ctx, name) != NULL; }

static int has_part(void *ctx, const char *part) {
  const HfModel *m = ctx;
  for (int i = 0; i < m->n; i++)
    if (strstr(m->tensors[i].name, part)) return 1;
  return 0;
}

static const HfTensor *first_present(const HfModel *m, const char *const *names) {
  for (int i = 0; i < HF_MAX_NAMES && names[i]; i++) {
    const HfTensor *t = hf_tensor(m, names[i]);
    if (t) return t;
  }
  return NULL;
}

static void name_list(char *buf, size_t cap, const char *const *names) {
  size_t n = 0;
  while (n < HF_MAX_NAMES && names[n]) n++;
  buf[0] = '\0';
  for (size_t i = 0; i < n; i++) text_list_add(buf, cap, i, n, ", ", names[i]);
}

static int find_family(HfModel *m, Err *err) {
  char list[256];
  json_t *type = config_get(m, "model_type");
  if (m->config && json_is_string(type)) {
    if (!(m->model_type = strdup(json_string_value(type)))) return err_set(err, "out of memory");
    if (!(m->fam = hf_family_by_type(m->model_type))) {
      hf_family_list(list, sizeof list);
      return err_set(err, "%s/%s: model_type '%.64s' is none of the families read (%s)", m->folder,
                     CONFIG_JSON, m->model_type, list);
    }
    return 0;
  }
  if (m->config && type)
    return err_set(err, "%s/%s: model_type is not a string", m->folder, CONFIG_JSON);
  if (!(m->model_type = strdup(""))) return err_set(err, "out of memory");
  if (!(m->fam = hf_family_by_names(has_name, has_part, m))) {
    hf_family_list(list, sizeof list);
    return err_set(err, "%s: no tensor is the embedding of any family read (%s)", m->path, list);
  }
  return 0;
}

/* ---------------------------------------------------------------- tying */

/* Whether two tensors hold the same values as stored: compared a chunk at
** a time, so a large matrix is never whole in memory (and untied ones
** usually differ in the first chunk). */
static int same_bytes(const HfTensor *a, const HfTensor *b, int *same, Err *err) {
  *same = 0;
  if (a->dtype != b->dtype || a->ndim != b->ndim || a->nbytes != b->nbytes) return 0;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return 0;
  enum { CHUNK = 1 << 16 };
  uint8_t *x = malloc(2 * CHUNK);
  int fa = safeopen_read(a->file, 0, NULL, err), fb = fa < 0 ? -1 : safeopen_read(b->file, 0, NULL, err);
  int rc = x && fa >= 0 && fb >= 0 ? 0 : -1;
  if (!x) err_set(err, "out of memory");
  *same = 1;
  for (size_t done = 0; rc == 0 && *same && done < a->nbytes; done += CHUNK) {
    size_t k = a->nbytes - done < CHUNK ? a->nbytes - done : CHUNK;
    ssize_t ra = pread(fa, x, k, (off_t)(a->offset + done));
    ssize_t rb = pread(fb, x + CHUNK, k, (off_t)(b->offset + done));
    if (ra != (ssize_t)k || rb != (ssize_t)k)
      rc = err_set(err, "%s: %s", ra != (ssize_t)k ? a->file : b->file,
                   ra < 0 || rb < 0 ? strerror(errno) : "file shrank while being read");
    else
      *same = memcmp(x, x + CHUNK, k) == 0;
  }
  if (fa >= 0) close(fa);
  if (fb >= 0) close(fb);
  free(x);
  return rc;
}

/* config.json's word on tying: 1, 0, or -1 when it says nothing. */
static int config_tie(const HfModel *m, const char *key, int *out, Err *err) {
  json_t *v = config_get(m, key);
  *out = -1;
  if (!v || json_is_null(v)) return 0;
  if (!json_is_boolean(v)) return err_set(err, "%s/%s: %s is not true or false", m->folder, CONFIG_JSON, key);
  *out = json_is_true(v);
  return 0;
}

static int check_tying(HfModel *m, Err *err) {
  HfInfo *in = &m->info;
  const char *key = m->fam->tie_key ? m->fam->tie_key : "tie_word_embeddings";
  if (config_tie(m, key, &in->config_tied, err) != 0) return -1;
  if (!m->config) return 0;
  int says = in->config_tied >= 0 ? in->config_tied : m->fam->tie_default;
  if (says < 0 || says == in->tied) return 0;
  char how[160], shape[64];
  if (in->config_tied >= 0)
    snprintf(how, sizeof how, "config.json says %s=%s", key, says ? "true" : "false");
  else
    snprintf(how, sizeof how, "config.json does not say %s, which for %s means %s,", key,
             m->fam->name, says ? "true" : "false");
  if (says)
    return err_set(err, "%s: %s but %s holds a separate %s %s", m->folder, how,
                   base_name(in->head->file), in->head->name,
                   st_shape_str(shape, sizeof shape, in->head->ndim, in->head->shape));
  char heads[160];
  name_list(heads, sizeof heads, m->fam->head);
  return err_set(err, "%s: %s but no output head is stored (none of %s): only %s %s", m->folder, how,
                 heads, in->embed->name, st_shape_str(shape, sizeof shape, in->embed->ndim, in->embed->shape));
}

/* ---------------------------------------------------------------- shapes */

/* The embedding and head must be [V, d] with V and d as config.json says. */
static int check_matrix(const HfModel *m, const HfTensor *t, Err *err) {
  char shape[64];
  if (t->ndim != 2 || t->shape[0] <= 0 || t->shape[1] <= 0 || t->shape[0] > INT32_MAX ||
      t->shape[1] > INT32_MAX)
    return err_set(err, "%s: %s is %s, not a [vocab, width] matrix", t->file, t->name,
                   st_shape_str(shape, sizeof shape, t->ndim, t->shape));
  if (!m->config) return 0;
  const char *vkeys[] = {m->fam->vocab_key ? m->fam->vocab_key : "vocab_size", "vocab_size", NULL};
  int v = 0, d = 0, r;
  if ((r = config_int(m, vkeys, &v, err)) < 0 || (r > 0 && v != t->shape[0]))
    return r < 0 ? err_prefix(err, "%s", m->folder) : err_set(err, "%s: %s is %s but config.json says %s=%d", t->file,
                                t->name, st_shape_str(shape, sizeof shape, t->ndim, t->shape),
                                config_get(m, vkeys[0]) ? vkeys[0] : vkeys[1], v);
  if ((r = config_int(m, DIM_KEYS, &d, err)) < 0 || (r > 0 && d != t->shape[1]))
    return r < 0 ? err_prefix(err, "%s", m->folder) : err_set(err, "%s: %s is %s but config.json says a width of %d", t->file,
                                t->name, st_shape_str(shape, sizeof shape, t->ndim, t->shape), d);
  return 0;
}

static int describe(HfModel *m, Err *err) {
  HfInfo *in = &m->info;
  in->family = m->fam->name;
  in->model_type = m->model_type;
  in->n_tensors = m->n;
  in->n_files = m->n_files;
  if (!(in->embed = first_present(m, m->fam->embed))) {
    char names[256];
    name_list(names, sizeof names, m->fam->embed);
    return err_set(err, "%s: a %s model, but no embedding among its tensors (looked for %s)", m->path,
                   m->fam->name, names);
  }
  in->head = first_present(m, m->fam->head);
  if (check_matrix(m, in->embed, err) != 0 || (in->head && check_matrix(m, in->head, err) != 0))
    return -1;
  in->vocab = (int)in->embed->shape[0];
  in->dim = (int)in->embed->shape[1];
  in->dtype = in->embed->dtype;
  if (in->head && (in->head->ndim != 2 || in->head->shape[0] != in->vocab || in->head->shape[1] != in->dim)) {
    char he[64], em[64];
    return err_set(err, "%s: the head %s is %s but the embedding %s is %s: an output head has the embedding's shape",
                   in->head->file, in->head->name, st_shape_str(he, sizeof he, in->head->ndim, in->head->shape),
                   in->embed->name, st_shape_str(em, sizeof em, in->embed->ndim, in->embed->shape));
  }
  int same = 0;
  if (in->head && same_bytes(in->embed, in->head, &same, err) != 0) return -1;
  in->tied = !in->head || same;
  if (check_tying(m, err) != 0) return -1;
  if (!in->head) in->head = in->embed;   /* tied with a stored copy: 'head' names the copy */
  if (config_int(m, LAYER_KEYS, &in->layers, err) < 0 || config_int(m, HEAD_KEYS, &in->heads, err) < 0 ||
      config_int(m, CTX_KEYS, &in->ctx, err) < 0)
    return err_prefix(err, "%s", m->folder);
  return 0;
}

/* ---------------------------------------------------------------- open */

static int open_steps(HfModel *m, Err *err) {
  struct stat sb;
  if (stat(m->path, &sb) != 0) return err_set(err, "%s: %s", m->path, strerror(errno));
  if (S_ISDIR(sb.st_mode)) {
    if (!(m->folder = strdup(m->path))) return err_set(err, "out of memory");
    if (read_config(m, err) != 0 || read_folder_weights(m, err) != 0) return -1;
  } else {
    const char *slash = strrchr(m->path, '/');
    m->folder = slash ? strndup(m->path, (size_t)(slash - m->path) + (slash == m->path)) : strdup(".");
    if (!m->folder) return err_set(err, "out of memory");
    if (add_file(m, m->path, err) != 0 || read_file_header(m, 0, err) != 0) return -1;
  }
  if (m->n_files == 1 && no_duplicates(m, err) != 0) return -1;   /* sorts them */
  return find_family(m, err) == 0 ? describe(m, err) : -1;
}

HfModel *hf_open(const char *path, Err *err) {
  HfModel *m = calloc(1, sizeof *m);
  if (!m || !(m->path = strdup(path))) {
    free(m);
    return err_set(err, "out of memory"), NULL;
  }
  /* A folder given as "dir/" names its files "dir/x", not "dir//x". */
  size_t n = strlen(m->path);
  while (n > 1 && m->path[n - 1] == '/') m->path[--n] = '\0';
  if (open_steps(m, err) != 0) {
    err_one_line(err);   /* names quoted from the files may hold control characters */
    hf_close(m);
    return NULL;
  }
  return m;
}

void hf_close(HfModel *m) {
  if (!m) return;
  for (int i = 0; i < m->n; i++) free((char *)m->tensors[i].name);
  for (int i = 0; i < m->n_files; i++) free(m->files[i]);
  free(m->tensors);
  free(m->files);
  json_decref(m->config);
  free(m->model_type);
  free(m->folder);
  free(m->path);
  free(m);
}

const HfInfo *hf_info(const HfModel *m) { return &m->info; }
const char *hf_path(const HfModel *m) { return m->path; }
const char *hf_folder(const HfModel *m) { return m->folder; }
int hf_tensor_count(const HfModel *m) { return m->n; }
const HfTensor *hf_tensor_at(const HfModel *m, int i) { return i >= 0 && i < m->n ? &m->tensors[i] : NULL; }

/* The tensors are sorted by name once every file's header is in. */
const HfTensor *hf_tensor(const HfModel *m, const char *name) {
  HfTensor key = {.name = name};
  return m->n ? bsearch(&key, m->tensors, (size_t)m->n, sizeof *m->tensors, by_name) : NULL;
}

/* ---------------------------------------------------------------- reading */

static size_t tensor_numel(const HfTensor *t) {
  size_t size = st_dtype_size(t->dtype);
  return size ? t->nbytes / size : 0;
}

size_t hf_tensor_f32_bytes(const HfTensor *t) { return tensor_numel(t) * sizeof(float); }

int hf_read_f32(const HfModel *m, const HfTensor *t, float *dst, size_t n, Err *err) {
  (void)m;
  if (n != tensor_numel(t))
    return err_set(err, "%s: tensor '%s' has %zu values, not %zu", t->file, t->name, tensor_numel(t), n);
  int fd = safeopen_read(t->file, 0, NULL, err);
  if (fd < 0) return -1;
  char what[512];
  snprintf(what, sizeof what, "%s: tensor '%s'", t->file, t->name);
  size_t row = t->ndim > 0 && t->shape[t->ndim - 1] > 0 ? (size_t)t->shape[t->ndim - 1] : 1;
  int rc = st_pread_f32(fd, t->dtype, t->offset, n, row, dst, what, err);
  close(fd);
  return rc;
}

float *hf_read_f32_alloc(const HfModel *m, const HfTensor *t, Err *err) {
  size_t bytes = hf_tensor_f32_bytes(t);
  char what[320];
  snprintf(what, sizeof what, "reading %s as float32", t->name);
  if (sysmem_check(bytes, what, err) != 0) return NULL;
  float *x = malloc(bytes ? bytes : 1);
  if (!x) return err_set(err, "%s: out of memory", what), NULL;
  if (hf_read_f32(m, t, x, tensor_numel(t), err) != 0) {
    free(x);
    return NULL;
  }
  return x;
}

/* ---------------------------------------------------------------- GPT-2 */

/* Settings of a GPT-2 config the reference model cannot honour unless
** they have the value it computes with; absent, transformers' defaults
** (which are those values) apply. */
typedef enum { SET_STRING, SET_NUMBER, SET_BOOL, SET_NULL_OR_4D } SettingKind;

static const struct {
  const char *key;
  SettingKind kind;
  const char *text[3];   /* SET_STRING: the values accepted */
  double number;         /* SET_NUMBER, SET_BOOL */
  const char *why;
} gpt2_settings[] = {
  {"activation_function", SET_STRING, {"gelu_new", "gelu_pytorch_tanh"}, 0,
   "the reference model's GELU is the tanh approximation (gelu_new)"},
  {"layer_norm_epsilon", SET_NUMBER, {0}, 1e-5, "its LayerNorm's epsilon is 1e-5"},
  {"n_inner", SET_NULL_OR_4D, {0}, 0, "its MLP is 4 x n_embd wide"},
  {"scale_attn_weights", SET_BOOL, {0}, 1, "its attention scales by 1/sqrt(head size)"},
  {"scale_attn_by_inverse_layer_idx", SET_BOOL, {0}, 0, "its attention is not scaled by layer"},
  {"add_cross_attention", SET_BOOL, {0}, 0, "it has no cross-attention"},
};

static int setting_ok(const HfModel *m, int i, json_t *v) {
  switch (gpt2_settings[i].kind) {
  case SET_STRING:
    for (int k = 0; k < 3 && gpt2_settings[i].text[k]; k++)
      if (json_is_string(v) && strcmp(json_string_value(v), gpt2_settings[i].text[k]) == 0) return 1;
    return 0;
  case SET_NUMBER:
    return json_is_number(v) && fabs(json_number_value(v) - gpt2_settings[i].number) <= 1e-12;
  case SET_BOOL:
    return json_is_boolean(v) && json_is_true(v) == (gpt2_settings[i].number != 0);
  case SET_NULL_OR_4D:
    return json_is_null(v) || (json_is_integer(v) && json_integer_value(v) == 4 * (json_int_t)m->info.dim);
  }
  return 0;
}

static int gpt2_settings_ok(const HfModel *m, Err *err) {
  for (size_t i = 0; i < sizeof gpt2_settings / sizeof gpt2_settings[0]; i++) {
    json_t *v = config_get(m, gpt2_settings[i].key);
    if (!v || setting_ok(m, (int)i, v)) continue;
    char number[32];
    if (json_is_number(v)) snprintf(number, sizeof number, "%g", json_number_value(v));
    char *text = json_is_number(v) ? strdup(number) : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    err_set(err, "%s/%s: %s is %.40s, which cannot be read as the reference model: %s", m->folder,
            CONFIG_JSON, gpt2_settings[i].key, text ? text : "?", gpt2_settings[i].why);
    free(text);
    return -1;
  }
  return 0;
}

/* A size config.json must give: found, or an error naming the keys. */
static int gpt2_size(const HfModel *m, const char *const *keys, int *out, Err *err) {
  int r = config_int(m, keys, out, err);
  if (r < 0) return err_prefix(err, "%s", m->folder);
  if (r == 0) return err_set(err, "%s/%s: no %s", m->folder, CONFIG_JSON, keys[0]);
  return 0;
}

int hf_gpt2_config(const HfModel *m, ModelConfig *c, Err *err) {
  static const char *const layers[] = {"n_layer", "num_hidden_layers", NULL};
  static const char *const heads[] = {"n_head", "num_attention_heads", NULL};
  static const char *const ctx[] = {"n_positions", "n_ctx", "max_position_embeddings", NULL};
  const HfInfo *in = &m->info;
  if (strcmp(in->family, "gpt2") != 0)
    return err_set(err, "%s: a %s model, not GPT-2: only GPT-2's layout is read as the reference model",
                   m->path, in->family);
  if (!m->config)
    return err_set(err, "%s: a GPT-2 model needs its config.json (the number of heads is not in the weights)",
                   m->path);
  if (gpt2_settings_ok(m, err) != 0) return -1;
  ModelConfig k = {.vocab = in->vocab, .dim = in->dim, .batch = c->batch > 0 ? c->batch : 1,
                   .tie_k = in->tied ? in->dim : 0};
  if (gpt2_size(m, layers, &k.layers, err) != 0 || gpt2_size(m, heads, &k.heads, err) != 0 ||
      gpt2_size(m, ctx, &k.ctx, err) != 0)
    return -1;
  int n_ctx = 0;
  static const char *const n_ctx_key[] = {"n_ctx", NULL};
  if (config_int(m, n_ctx_key, &n_ctx, err) < 0) return err_prefix(err, "%s", m->folder);
  if (n_ctx && n_ctx != k.ctx)
    return err_set(err, "%s/%s: n_ctx (%d) and n_positions (%d) disagree", m->folder, CONFIG_JSON, n_ctx,
                   k.ctx);
  if (config_validate(&k, err) != 0) return err_prefix(err, "%s", m->folder);
  k.batch = c->batch;
  *c = k;
  return 0;
}

/* nanoGPT's block weights that GPT-2's files keep as Conv1D, [in, out]. */
static int is_conv1d(const TensorInfo *ti) {
  static const char *const parts[] = {".attn.c_attn.weight", ".attn.c_proj.weight", ".mlp.c_fc.weight",
                                      ".mlp.c_proj.weight"};
  if (ti->ndim != 2) return 0;
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
    size_t n = strlen(ti->name), k = strlen(parts[i]);
    if (n > k && strcmp(ti->name + n - k, parts[i]) == 0) return 1;
  }
  return 0;
}

/* The file's tensor for nanoGPT's 'name': under each of the family's
** prefixes; the head (the embedding when tied) for lm_head. */
static const HfTensor *gpt2_source(const HfModel *m, const char *name) {
  if (strcmp(name, "lm_head.weight") == 0) return m->info.head;
  const char *base = strncmp(name, "transformer.", 12) == 0 ? name + 12 : name;
  for (int i = 0; i < HF_MAX_NAMES && m->fam->prefixes[i]; i++) {
    char full[160];
    snprintf(full, sizeof full, "%s%s", m->fam->prefixes[i], base);
    const HfTensor *t = hf_tensor(m, full);
    if (t) return t;
  }
  return NULL;
}

/* Read 't' into 'dst' as nanoGPT's 'ti': [out, in] from a Conv1D's [in, out]. */
static int read_transposed(const HfModel *m, const HfTensor *t, const TensorInfo *ti, float *dst, Err *err) {
  size_t rows = (size_t)ti->shape[0], cols = (size_t)ti->shape[1];
  float *tmp = malloc(ti->numel * sizeof *tmp);
  if (!tmp) return err_set(err, "out of memory reading %s", t->name);
  int rc = hf_read_f32(m, t, tmp, ti->numel, err);
  for (size_t i = 0; rc == 0 && i < cols; i++)
    for (size_t o = 0; o < rows; o++) dst[o * cols + i] = tmp[i * rows + o];
  free(tmp);
  return rc;
}

static int gpt2_shape_ok(const HfTensor *t, const TensorInfo *ti, int conv1d) {
  if (t->ndim != ti->ndim) return 0;
  if (ti->ndim == 1) return t->shape[0] == ti->shape[0];
  return t->shape[0] == ti->shape[conv1d] && t->shape[1] == ti->shape[!conv1d];
}

static int gpt2_read_one(const HfModel *m, const TensorInfo *ti, float *dst, const HfTensor **src, Err *err) {
  const HfTensor *t = gpt2_source(m, ti->name);
  int conv1d = is_conv1d(ti);
  char have[64];
  *src = t;
  if (!t) return err_set(err, "%s: no tensor for %s", m->path, ti->name);
  if (!gpt2_shape_ok(t, ti, conv1d))
    return err_set(err, "%s: %s is %s, the model needs [%d%s%d]%s", t->file, t->name,
                   st_shape_str(have, sizeof have, t->ndim, t->shape), ti->shape[conv1d], ti->ndim == 2 ? ", " : "",
                   ti->ndim == 2 ? ti->shape[!conv1d] : 0, conv1d ? " (Conv1D, stored [in,out])" : "");
  int rc = conv1d ? read_transposed(m, t, ti, dst, err) : hf_read_f32(m, t, dst, ti->numel, err);
  return rc == 0 ? weights_check_finite(t->name, dst, ti->numel, err) : -1;
}

/* GPT-2's attention mask buffers: not parameters. */
static int is_buffer(const char *name) {
  size_t n = strlen(name);
  return (n >= 10 && strcmp(name + n - 10, ".attn.bias") == 0) ||
         (n >= 17 && strcmp(name + n - 17, ".attn.masked_bias") == 0);
}

int hf_gpt2_read(const HfModel *m, const TensorInfo *table, int n, float *params, Err *err) {
  if (strcmp(m->info.family, "gpt2") != 0)
    return err_set(err, "%s: a %s model, not GPT-2", m->path, m->info.family);
  char *used = calloc((size_t)m->n + 1, 1);
  if (!used) return err_set(err, "out of memory");
  int rc = 0;
  for (int i = 0; i < n && rc == 0; i++) {
    const HfTensor *src;
    rc = gpt2_read_one(m, &table[i], params + table[i].offset, &src, err);
    if (src) used[src - m->tensors] = 1;
  }
  for (int i = 0; i < m->n && rc == 0; i++)
    if (!used[i] && !is_buffer(m->tensors[i].name))
      rc = err_set(err, "%s: tensor '%s' is not part of a GPT-2 model of this config", m->tensors[i].file,
                   m->tensors[i].name);
  free(used);
  return rc;
}
