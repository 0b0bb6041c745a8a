/*
** settings_model.h -- the model's shape as named settings: the one place
** their names are written. The run's settings table (lab/settings.c) names
** its shape rows with these, and core reads them to check a shape and to
** write and read the shape in a checkpoint's metadata, and to report it
** (the bench's line, an export's metadata).
*/
#ifndef TIELAB_CORE_SETTINGS_MODEL_H
#define TIELAB_CORE_SETTINGS_MODEL_H

#include <stddef.h>

#include "core/config.h"

struct json_t;

#define MODEL_KEY_VOCAB "vocab"
#define MODEL_KEY_DIM "dim"
#define MODEL_KEY_LAYERS "layers"
#define MODEL_KEY_HEADS "heads"
#define MODEL_KEY_CTX "ctx"
#define MODEL_KEY_BATCH "batch"
#define MODEL_KEY_TIE "tie"

typedef enum ModelFieldId {
  MODEL_VOCAB, MODEL_DIM, MODEL_LAYERS, MODEL_HEADS, MODEL_CTX, MODEL_BATCH, MODEL_TIE, N_MODEL_FIELDS
} ModelFieldId;

typedef struct ModelField {
  const char *name;   /* the setting: MODEL_KEY_... */
  const char *meta;   /* the key in a checkpoint's metadata (nanoGPT's), or NULL: not kept */
  size_t offset;      /* of the int in a ModelConfig */
  int max;            /* sizes: 1..max (tie: 0..dim, checked on its own) */
} ModelField;

/* By ModelFieldId, in the order sizes are checked and metadata written. */
extern const ModelField model_fields[N_MODEL_FIELDS];

/* The shape of 'c' as a JSON object: each field under its name, in the
** order above, the sizes as integers and the tie as text ("tied",
** "untied", "K"). NULL when out of memory. */
struct json_t *model_config_json(const ModelConfig *c);

#endif
