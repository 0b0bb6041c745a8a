/*
** hftok_json.c -- the files a released tokenizer comes in, read into the
** vocabulary of hftok.c: tokenizer.json (Hugging Face's tokenizers
** library), or vocab.json + merges.txt (GPT-2's older layout).
**
** tokenizer.json says what it is in parts: "model" (BPE with "vocab" and
** "merges", or Unigram with "vocab" as [piece, score] pairs), "added_tokens",
** and "pre_tokenizer" / "decoder", which alone tell byte-level spellings
** ("Ġthe") from SentencePiece ones ("▁the"). The pre-tokenizer's regular
** expressions are kept for encoding. Duplicate keys are refused by jansson,
** so a vocabulary object cannot give one spelling two ids unseen.
*/
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/safeopen.h"
#include "core/hftok_impl.h"

/* GPT-2's pre-tokenizer, which ByteLevel with "use_regex" applies. */
static const char gpt2_pattern[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

static json_t *load_json(const char *path, Err *err) {
  json_error_t je;
  FILE *f = safeopen_fread(path, 0, NULL, err);
  if (!f) return NULL;
  json_t *root = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
  fclose(f);
  if (!root) err_set(err, "%s: line %d: %s", path, je.line, je.text);
  return root;
}

static const char *type_of(const json_t *node) { return json_string_value(json_object_get(node, "type")); }

/* Whether 'node' or one of a Sequence's members has type 'type'. */
static const json_t *find_type(const json_t *node, const char *type) {
  const char *ty = type_of(node);
  if (ty && strcmp(ty, type) == 0) return node;
  const json_t *list = json_object_get(node, "pretokenizers");
  if (!list) list = json_object_get(node, "decoders");
  size_t i;
  const json_t *m;
  json_array_foreach(list, i, m) {
    if (find_type(m, type)) return m;
  }
  return NULL;
}

/* A decoder replacing "▁" with a space, as Llama 2's and Gemma's do. */
static int replaces_metaspace(const json_t *dec) {
  if (!dec) return 0;
  const char *ty = type_of(dec), *pat = json_string_value(json_object_get(json_object_get(dec, "pattern"), "String"));
  if (ty && strcmp(ty, "Replace") == 0 && pat && strcmp(pat, "\xe2\x96\x81") == 0) return 1;
  size_t i;
  const json_t *m;
  json_array_foreach(json_object_get(dec, "decoders"), i, m) {
    if (replaces_metaspace(m)) return 1;
  }
  return 0;
}

/* ---- the pre-tokenizer, for encoding ------------------------------------ */

static void no_encode(HfTok *t, const char *why) {
  if (!t->no_encode[0]) snprintf(t->no_encode, sizeof t->no_encode, "%s", why);
}

static int add_split(HfTok *t, const char *pattern, int literal) {
  if (t->n_splits == HFTOK_SPLITS_MAX) {
    no_encode(t, "the pre-tokenizer chains more regular expressions than are supported");
    return 0;
  }
  if (!(t->split_pattern[t->n_splits] = strdup(pattern))) return -1;
  t->split_literal[t->n_splits++] = literal;
  return 0;
}

/* One pre-tokenizer: its regular expression, or why it cannot be encoded with. */
static int read_pre_one(HfTok *t, const json_t *p) {
  char why[160];
  const char *ty = type_of(p);
  if (ty && strcmp(ty, "ByteLevel") == 0) {
    const json_t *re = json_object_get(p, "use_regex");
    return re && json_is_false(re) ? 0 : add_split(t, gpt2_pattern, 0);
  }
  if (ty && strcmp(ty, "Digits") == 0)   /* SmolLM's: digits apart from the rest, one by one if asked */
    return add_split(t, json_is_true(json_object_get(p, "individual_digits")) ? "\\p{N}" : "\\p{N}+", 0);
  if (ty && strcmp(ty, "Split") == 0) {
    const json_t *pat = json_object_get(p, "pattern");
    const char *re = json_string_value(json_object_get(pat, "Regex")), *s = json_string_value(json_object_get(pat, "String"));
    const char *behavior = json_string_value(json_object_get(p, "behavior"));
    if ((!re && !s) || !behavior || strcmp(behavior, "Isolated") != 0 || json_is_true(json_object_get(p, "invert"))) {
      no_encode(t, "the pre-tokenizer has a Split other than an isolating one");
      return 0;
    }
    return add_split(t, re ? re : s, !re);
  }
  snprintf(why, sizeof why, "the pre-tokenizer %s is not supported for encoding", ty ? ty : "(with no type)");
  no_encode(t, why);
  return 0;
}

static int read_pre_tokenizer(HfTok *t, const json_t *pre) {
  const char *ty = type_of(pre);
  if (!pre || json_is_null(pre)) return 0;
  if (!ty || strcmp(ty, "Sequence") != 0) return read_pre_one(t, pre);
  size_t i;
  const json_t *m;
  json_array_foreach(json_object_get(pre, "pretokenizers"), i, m) {
    if (read_pre_one(t, m) < 0) return -1;
  }
  return 0;
}

/* ---- the model ---------------------------------------------------------- */

static int read_bpe_vocab(HfTok *t, const json_t *vocab, Err *err) {
  if (!json_is_object(vocab)) return err_set(err, "%s: the vocabulary is not an object of token: id", t->file);
  const char *key;
  const json_t *v;
  json_object_foreach((json_t *)vocab, key, v) {
    if (!json_is_integer(v))
      return err_set(err, "%s: vocab: token \"%.40s\" has an id that is not an integer", t->file, key);
    if (hftok_add(t, json_integer_value(v), key, strlen(key), HFTOK_ORDINARY, "vocab", err) < 0) return -1;
  }
  return 0;
}

/* Unigram: [[piece, score], ...], ids in order. Scores are not needed to
** read the vocabulary; encoding with it is not offered. */
static int read_unigram_vocab(HfTok *t, const json_t *vocab, Err *err) {
  size_t i;
  const json_t *e;
  if (!json_is_array(vocab)) return err_set(err, "%s: model.vocab of a Unigram model is not an array", t->file);
  json_array_foreach(vocab, i, e) {
    const json_t *piece = json_array_get(e, 0);
    if (!json_is_string(piece) || !json_is_number(json_array_get(e, 1)))
      return err_set(err, "%s: vocab entry %zu is not [piece, score]", t->file, i);
    if (hftok_add(t, (int64_t)i, json_string_value(piece), json_string_length(piece), HFTOK_ORDINARY, "vocab", err) <
        0)
      return -1;
  }
  return 0;
}

/* One merge: "a b", or ["a", "b"] as newer files have it. */
static int read_merge(HfTok *t, size_t rank, const json_t *m, Err *err) {
  if (json_is_array(m) && json_array_size(m) == 2 && json_is_string(json_array_get(m, 0)) &&
      json_is_string(json_array_get(m, 1))) {
    const json_t *a = json_array_get(m, 0), *b = json_array_get(m, 1);
    if (hftok_add_merge(t, rank, json_string_value(a), json_string_length(a), json_string_value(b),
                        json_string_length(b), err) < 0)
      return err_prefix(err, "%s", t->file);
    return 0;
  }
  const char *s = json_string_value(m), *sp = s ? strchr(s, ' ') : NULL;
  if (!sp || sp == s || !sp[1] || strchr(sp + 1, ' '))
    return err_set(err, "%s: merge %zu is neither \"a b\" nor [\"a\", \"b\"]", t->file, rank + 1);
  if (hftok_add_merge(t, rank, s, (size_t)(sp - s), sp + 1, strlen(sp + 1), err) < 0)
    return err_prefix(err, "%s", t->file);
  return 0;
}

static int read_added(HfTok *t, const json_t *added, Err *err) {
  size_t i;
  const json_t *a;
  json_array_foreach(added, i, a) {
    const json_t *id = json_object_get(a, "id"), *content = json_object_get(a, "content");
    if (!json_is_integer(id) || !json_is_string(content) || json_string_length(content) == 0)
      return err_set(err, "%s: added_tokens[%zu] lacks an integer id or a non-empty content", t->file, i);
    if (hftok_add_added(t, json_integer_value(id), json_string_value(content), json_string_length(content),
                        json_is_true(json_object_get(a, "special")), err) < 0)
      return -1;
  }
  return 0;
}

static int read_model(HfTok *t, const json_t *root, Err *err) {
  const json_t *model = json_object_get(root, "model"), *merges = json_object_get(model, "merges");
  const char *ty = type_of(model);
  if (!json_is_object(model)) return err_set(err, "%s: no \"model\" object", t->file);
  if (!ty && merges) ty = "BPE";   /* older files leave the type out */
  if (ty && strcmp(ty, "Unigram") == 0) {
    t->unigram = 1;
    no_encode(t, "a Unigram model's encoding is not supported");
    return read_unigram_vocab(t, json_object_get(model, "vocab"), err) < 0 ||
                   read_added(t, json_object_get(root, "added_tokens"), err) < 0
               ? -1
               : 0;
  }
  if (!ty || strcmp(ty, "BPE") != 0)
    return err_set(err, "%s: model type %s is not supported (BPE or Unigram)", t->file, ty ? ty : "(none)");
  if (!json_is_array(merges)) return err_set(err, "%s: model.merges is not an array", t->file);
  t->ignore_merges = json_is_true(json_object_get(model, "ignore_merges"));
  const char *prefix = json_string_value(json_object_get(model, "continuing_subword_prefix")),
             *suffix = json_string_value(json_object_get(model, "end_of_word_suffix"));
  if ((prefix && *prefix) || (suffix && *suffix))
    no_encode(t, "a BPE model with a subword prefix or word suffix is not supported for encoding");
  if (read_bpe_vocab(t, json_object_get(model, "vocab"), err) < 0 ||
      read_added(t, json_object_get(root, "added_tokens"), err) < 0)
    return -1;
  if (hftok_merges_reserve(t, json_array_size(merges)) < 0) return err_set(err, "%s: out of memory", t->file);
  size_t i;
  const json_t *m;
  json_array_foreach(merges, i, m) {
    if (read_merge(t, i, m, err) < 0) return -1;
  }
  return 0;
}

int hftok_read_json(HfTok *t, const char *path, Err *err) {
  snprintf(t->file, sizeof t->file, "%s", path);
  json_t *root = load_json(path, err);
  if (!root) return -1;
  const json_t *pre = json_object_get(root, "pre_tokenizer"), *dec = json_object_get(root, "decoder");
  /* How spellings stand for bytes, known before added tokens are compared
  ** with the vocabulary's. */
  t->byte_fallback = json_is_true(json_object_get(json_object_get(root, "model"), "byte_fallback"));
  t->byte_level = find_type(pre, "ByteLevel") || find_type(dec, "ByteLevel");
  int spm = find_type(pre, "Metaspace") || find_type(dec, "Metaspace") || replaces_metaspace(dec) || t->byte_fallback;
  int r = read_model(t, root, err);
  if (r == 0 && !t->byte_level && !spm && !t->unigram)
    r = err_set(err, "%s: cannot tell how its tokens spell bytes: neither ByteLevel nor Metaspace (or a \"\xe2\x96\x81\" "
                "Replace) in pre_tokenizer or decoder",
                path);
  if (r == 0 && !t->byte_level) no_encode(t, "only byte-level BPE is encoded (this is SentencePiece-style)");
  if (r == 0 && read_pre_tokenizer(t, pre) < 0) r = err_set(err, "%s: out of memory", path);
  if (r == 0) r = hftok_finish_bytes(t, err);
  json_decref(root);
  return r;
}

/* ---- GPT-2's older layout ----------------------------------------------- */

static int read_merges_txt(HfTok *t, const char *path, Err *err) {
  FILE *f = safeopen_fread(path, 0, NULL, err);
  if (!f) return -1;
  char *line = NULL;
  size_t cap = 0, lines = 0, rank = 0, listed = 0;
  ssize_t n;
  int r = 0;
  while (getline(&line, &cap, f) >= 0) listed++;   /* to size the table once */
  rewind(f);
  if (hftok_merges_reserve(t, listed) < 0) r = err_set(err, "%s: out of memory", path);
  while (r == 0 && (n = getline(&line, &cap, f)) >= 0) {
    lines++;
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
    if (n == 0 || (lines == 1 && strncmp(line, "#version", 8) == 0)) continue;
    char *sp = memchr(line, ' ', (size_t)n);
    if (!sp || sp == line || sp == line + n - 1 || memchr(sp + 1, ' ', (size_t)(line + n - sp - 1)))
      r = err_set(err, "%s: line %zu is not two tokens separated by one space", path, lines);
    else if (hftok_add_merge(t, rank++, line, (size_t)(sp - line), sp + 1, (size_t)(line + n - sp - 1), err) < 0)
      r = err_prefix(err, "%s: line %zu", path, lines);
  }
  free(line);
  fclose(f);
  return r;
}

int hftok_read_vocab_merges(HfTok *t, const char *vocab, const char *merges, Err *err) {
  snprintf(t->file, sizeof t->file, "%s", vocab);
  json_t *root = load_json(vocab, err);
  if (!root) return -1;
  t->byte_level = 1;
  int r = read_bpe_vocab(t, root, err);
  json_decref(root);
  /* This layout lists no added tokens: "<|endoftext|>" is special as
  ** Hugging Face's GPT2Tokenizer makes it by default (its bos, eos, unk). */
  int32_t eot = hftok_id_of_spelling(t, "<|endoftext|>", 13);
  if (r == 0 && eot >= 0) r = hftok_add_added(t, eot, "<|endoftext|>", 13, 1, err);
  if (r == 0) r = read_merges_txt(t, merges, err);
  if (r == 0) r = add_split(t, gpt2_pattern, 0) < 0 ? err_set(err, "%s: out of memory", vocab) : 0;
  if (r == 0) r = hftok_finish_bytes(t, err);
  return r;
}
