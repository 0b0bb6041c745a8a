/* test_hffamily.c -- the family table (hffamily.c) is one that can be
** used: each model_type belongs to one family; a bare file holding a
** family's embedding and its distinguishing names is taken for that family
** and no other, whichever spelling of the embedding it uses; names of no
** family match none. */
#include <stdio.h>
#include <string.h>

#include "core/hffamily.h"
#include "tap.h"

/* A file's tensor names, as the lookups see them. */
typedef struct Names {
  const char *s[16];
  int n;
} Names;

static int has(void *ctx, const char *name) {
  const Names *ns = ctx;
  for (int i = 0; i < ns->n; i++)
    if (strcmp(ns->s[i], name) == 0) return 1;
  return 0;
}

static int contains(void *ctx, const char *part) {
  const Names *ns = ctx;
  for (int i = 0; i < ns->n; i++)
    if (strstr(ns->s[i], part)) return 1;
  return 0;
}

static void test_types(void) {
  int all = 1, types = 0;
  for (int f = 0; f < hf_family_count(); f++) {
    const HfFamily *fam = hf_family_at(f);
    all &= fam->embed[0] != NULL && fam->head[0] != NULL && fam->model_types[0] != NULL;
    for (int i = 0; i < HF_MAX_NAMES && fam->model_types[i]; i++, types++)
      if (hf_family_by_type(fam->model_types[i]) != fam) {
        all = 0;
        diag("model_type %s is not %s's", fam->model_types[i], fam->name);
      }
  }
  ok(all, "%d families, %d model types: each type names its own family, each family an embedding and a head",
     hf_family_count(), types);
  ok(!hf_family_by_type("mamba") && !hf_family_by_type("") && !hf_family_by_type("GPT2"),
     "an unknown model_type (case counts) names no family");
  const HfFamily *l = hf_family_by_type("llama");
  ok(l && strcmp(l->name, "llama") == 0 && hf_family_by_type("gemma3_text") == hf_family_by_type("gemma2"),
     "llama is llama; gemma3_text and gemma2 are one family");
}

/* Each family's embedding, in every spelling, with its markers (and a
** block's worth of Llama names, which every later row has too). */
static void test_names(void) {
  int all = 1, cases = 0;
  for (int f = 0; f < hf_family_count(); f++) {
    const HfFamily *fam = hf_family_at(f);
    for (int e = 0; e < HF_MAX_NAMES && fam->embed[e]; e++, cases++) {
      Names ns = {.s = {fam->embed[e], "model.layers.0.self_attn.q_proj.weight", "model.norm.weight"}, .n = 3};
      char marked[HF_MAX_NAMES][96];
      for (int k = 0; k < HF_MAX_NAMES && fam->markers[k]; k++) {
        snprintf(marked[k], sizeof marked[k], "x.0.%s.weight", fam->markers[k]);
        ns.s[ns.n++] = marked[k];
      }
      const HfFamily *got = hf_family_by_names(has, contains, &ns);
      if (got != fam) {
        all = 0;
        diag("%s with %s: taken for %s", fam->name, fam->embed[e], got ? got->name : "none");
      }
    }
  }
  ok(all, "%d embeddings with their families' markers: each taken for its own family", cases);
  Names none = {.s = {"model.embed_tokenz.weight", "lm_head.weight"}, .n = 2};
  ok(hf_family_by_names(has, contains, &none) == NULL, "names of no family's embedding match none");
  Names neo = {.s = {"transformer.wte.weight", "transformer.h.0.attn.c_attn.weight"}, .n = 2};
  const HfFamily *g = hf_family_by_names(has, contains, &neo);
  ok(g && strcmp(g->name, "gpt2") == 0, "GPT-2's names without GPT-Neo's attention are GPT-2 (%s)", g ? g->name : "none");
  char list[256];
  hf_family_list(list, sizeof list);
  ok(strstr(list, "gpt2") && strstr(list, "olmo-original") && strstr(list, "qwen3"), "the list for messages: %s", list);
}

int main(void) {
  test_types();
  test_names();
  return tap_done();
}
