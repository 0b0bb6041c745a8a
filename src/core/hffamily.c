/*
** hffamily.c -- which tensor is the embedding and which the output head,
** family by family, in one table (hffamily.h).
**
** The names are those the transformers library writes for each family's
** causal-LM class; where versions differ, every spelling is listed, first
** the usual one. SmolLM is a Llama (model_type "llama", the same names) and
** is read as one: nothing in its files tells it apart. Where a family's
** config leaves tie_word_embeddings out, 'tie_default' is the value its
** transformers config class assumes, so that a file contradicting it is
** caught too.
*/
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/text.h"
#include "core/hffamily.h"

#define LM_HEAD "lm_head.weight"
#define EMBED_TOKENS "model.embed_tokens.weight"

static const HfFamily families[] = {
  /* GPT-Neo before GPT-2: the same embedding name, told apart by its
  ** attention's names. */
  {.name = "gpt-neo", .model_types = {"gpt_neo"}, .embed = {"transformer.wte.weight"},
   .head = {LM_HEAD}, .markers = {".attn.attention."}, .tie_default = 1},
  {.name = "gpt2", .model_types = {"gpt2"}, .embed = {"transformer.wte.weight", "wte.weight"},
   .head = {LM_HEAD}, .tie_default = 1, .prefixes = {"transformer.", ""}, .conv1d = 1},
  {.name = "gpt-neox", .model_types = {"gpt_neox"}, .embed = {"gpt_neox.embed_in.weight"},
   .head = {"embed_out.weight"}, .tie_default = 0},
  /* OLMo as its original code (hf_olmo) writes it: a padded embedding of
  ** 'embedding_size' rows, tying said by 'weight_tying'. */
  {.name = "olmo-original", .model_types = {"hf_olmo"}, .embed = {"model.transformer.wte.weight"},
   .head = {"model.transformer.ff_out.weight"}, .tie_key = "weight_tying", .tie_default = 1,
   .vocab_key = "embedding_size"},
  /* From here on the Llama names: a bare file tells the families apart by
  ** the layers each alone has (Gemma 2/3's pre-feedforward norm, OLMo 2's
  ** post-feedforward one, Qwen3's query norm, Qwen2's query bias). */
  {.name = "gemma", .model_types = {"gemma", "gemma2", "gemma3", "gemma3_text"},
   .embed = {EMBED_TOKENS, "language_model.model.embed_tokens.weight",
             "model.language_model.embed_tokens.weight"},
   .head = {LM_HEAD, "language_model.lm_head.weight"}, .markers = {"pre_feedforward_layernorm"},
   .tie_default = 1},
  {.name = "olmo", .model_types = {"olmo", "olmo2"}, .embed = {EMBED_TOKENS}, .head = {LM_HEAD},
   .markers = {"post_feedforward_layernorm"}, .tie_default = 0},
  {.name = "qwen3", .model_types = {"qwen3"}, .embed = {EMBED_TOKENS}, .head = {LM_HEAD},
   .markers = {"self_attn.q_norm"}, .tie_default = 0},
  {.name = "qwen2", .model_types = {"qwen2"}, .embed = {EMBED_TOKENS}, .head = {LM_HEAD},
   .markers = {"self_attn.q_proj.bias"}, .tie_default = 0},
  {.name = "llama", .model_types = {"llama", "mistral"}, .embed = {EMBED_TOKENS}, .head = {LM_HEAD},
   .tie_default = 0},
};

#define N_FAMILIES (sizeof families / sizeof families[0])

int hf_family_count(void) { return (int)N_FAMILIES; }

const HfFamily *hf_family_at(int i) { return i >= 0 && i < (int)N_FAMILIES ? &families[i] : NULL; }

const HfFamily *hf_family_by_type(const char *type) {
  for (size_t f = 0; f < N_FAMILIES; f++)
    for (int i = 0; i < HF_MAX_NAMES && families[f].model_types[i]; i++)
      if (strcmp(families[f].model_types[i], type) == 0) return &families[f];
  return NULL;
}

static int any_present(const char *const *names, int (*has)(void *, const char *), void *ctx) {
  for (int i = 0; i < HF_MAX_NAMES && names[i]; i++)
    if (has(ctx, names[i])) return 1;
  return 0;
}

static int all_present(const char *const *parts, int (*contains)(void *, const char *), void *ctx) {
  for (int i = 0; i < HF_MAX_NAMES && parts[i]; i++)
    if (!contains(ctx, parts[i])) return 0;
  return 1;
}

const HfFamily *hf_family_by_names(int (*has)(void *ctx, const char *name),
                                   int (*contains)(void *ctx, const char *part), void *ctx) {
  for (size_t f = 0; f < N_FAMILIES; f++)
    if (any_present(families[f].embed, has, ctx) && all_present(families[f].markers, contains, ctx))
      return &families[f];
  return NULL;
}

void hf_family_list(char *buf, size_t cap) {
  if (cap) buf[0] = '\0';
  for (size_t f = 0; f < N_FAMILIES; f++) text_list_add(buf, cap, f, N_FAMILIES, ", ", families[f].name);
}
