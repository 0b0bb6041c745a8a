/*
** fuzz_corpus.c -- libFuzzer harness for the corpus reader and, behind it,
** tokenizer training.
**
** The input is a text file for 'corpus_read' (from a memory file, so that
** stat sees a regular file). It must be refused with a message or read back
** byte for byte; an accepted corpus then trains a small tokenizer that must
** encode and decode the corpus exactly, with ids inside its vocabulary.
*/
#include "fuzz.h"

#include "core/bpe.h"
#include "core/corpus.h"

#define VOCAB 288

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  fuzz_setup();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[64];
  Err err = {{0}};
  Corpus c;
  fuzz_memfile(data, size, path, sizeof path);
  if (corpus_read(&c, path, &err) < 0) {
    fuzz_check(err.msg[0] != 0, "refused without a message");
    return 0;
  }
  fuzz_check(c.len == size && memcmp(c.text, data, size) == 0, "the text read differs from the file");

  Bpe *b = bpe_train(c.text, c.len, VOCAB, NULL, &err);
  if (!b) {   /* out of memory is a refusal, not a crash; it must say so */
    fuzz_check(err.msg[0] != 0, "tokenizer training failed without a message");
    corpus_free(&c);
    return 0;
  }
  fuzz_check(bpe_vocab(b) >= 256 && bpe_vocab(b) <= VOCAB, "vocabulary out of range");
  int32_t *ids = NULL;
  size_t n_ids = 0;
  fuzz_check(bpe_encode(b, c.text, c.len, &ids, &n_ids, NULL, &err) == 0, "encoding failed");
  for (size_t i = 0; i < n_ids; i++) fuzz_check(ids[i] >= 0 && ids[i] < bpe_vocab(b), "an id outside the vocabulary");
  uint8_t *back = malloc(c.len);
  fuzz_check(back != NULL, "out of memory");
  fuzz_check(bpe_decode(b, ids, n_ids, back, c.len) == c.len && memcmp(back, c.text, c.len) == 0,
        "decode(encode(text)) != text");
  free(back);
  free(ids);
  bpe_free(b);
  corpus_free(&c);
  return 0;
}
