/*
** settings_model.c -- the model's shape fields: name, metadata key, where
** the value lives in a ModelConfig and its largest value (settings_model.h).
*/
#include <jansson.h>

#include "core/config.h"
#include "core/settings_model.h"

#define AT(f) offsetof(ModelConfig, f)

const ModelField model_fields[N_MODEL_FIELDS] = {
  [MODEL_VOCAB] = {MODEL_KEY_VOCAB, "vocab_size", AT(vocab), CONFIG_MAX_VOCAB},
  [MODEL_DIM] = {MODEL_KEY_DIM, "n_embd", AT(dim), CONFIG_MAX_DIM},
  [MODEL_LAYERS] = {MODEL_KEY_LAYERS, "n_layer", AT(layers), CONFIG_MAX_LAYERS},
  [MODEL_HEADS] = {MODEL_KEY_HEADS, "n_head", AT(heads), CONFIG_MAX_HEADS},
  [MODEL_CTX] = {MODEL_KEY_CTX, "block_size", AT(ctx), CONFIG_MAX_CTX},
  [MODEL_BATCH] = {MODEL_KEY_BATCH, NULL, AT(batch), CONFIG_MAX_BATCH},
  /* a text in the metadata ("tied", "untied", "K"), an int in ModelConfig */
  [MODEL_TIE] = {MODEL_KEY_TIE, MODEL_KEY_TIE, AT(tie_k), CONFIG_MAX_DIM},
};

json_t *model_config_json(const ModelConfig *c) {
  json_t *o = json_object();
  char tie[16];
  for (int i = 0; o && i < N_MODEL_FIELDS; i++) {
    const ModelField *f = &model_fields[i];
    json_t *v = i == MODEL_TIE ? json_string(config_tie_name(c->tie_k, c->dim, tie))
                               : json_integer(*(const int *)((const char *)c + f->offset));
    if (json_object_set_new(o, f->name, v) < 0) {
      json_decref(o);
      return NULL;
    }
  }
  return o;
}
