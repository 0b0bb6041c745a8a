/*
** test_hftok.c -- released tokenizers read from small files written here:
** byte-level tokenizer.json (merges as "a b" and as pairs), GPT-2's
** vocab.json + merges.txt, SentencePiece-style and Unigram files; token
** bytes and lookup; hostile files refused saying why; any bytes (invalid
** UTF-8 too) surviving encode and decode; and encodings compared id for id
** with tests/lib/gpt2_bpe_ref.py, GPT-2's algorithm written apart in
** Python, on a vocabulary it learns (skipped when Python's 'regex' is not
** there).
*/
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/hftok.h"
#include "core/rng.h"
#include "tap.h"

static char dir[] = "/tmp/test_hftok.XXXXXX";
/* The tests' Python, as tests/lib/tap.sh has it: $TIELAB_PYTHON, else
** /usr/bin/python3 (where bootstrap installs python3-regex). */
static const char *python = "/usr/bin/python3";

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) { return remove(path); }

/* A fresh folder under 'dir' named 'name', holding the files given as
** name, text pairs (NULL-terminated). */
static const char *folder(const char *name, ...) {
  static char path[512];
  char file[600];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  mkdir(path, 0700);
  va_list ap;
  va_start(ap, name);
  for (const char *f; (f = va_arg(ap, const char *));) {
    const char *text = va_arg(ap, const char *);
    snprintf(file, sizeof file, "%s/%s", path, f);
    FILE *out = fopen(file, "wb");
    fputs(text, out);
    fclose(out);
  }
  va_end(ap);
  return path;
}

/* GPT-2's spelling of byte 'b', as UTF-8 into 'out'; its length. */
static int byte_char(int b, char *out) {
  int cp = b, moved = 0;
  if (!((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174)) {
    for (int c = 0; c < b; c++) moved += !((c >= 33 && c <= 126) || (c >= 161 && c <= 172) || c >= 174);
    cp = 256 + moved;
  }
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  out[0] = (char)(0xc0 | (cp >> 6));
  out[1] = (char)(0x80 | (cp & 0x3f));
  return 2;
}

/* A byte-level tokenizer.json: the 256 byte tokens (ids 0..255), 'extra'
** tokens after them, 'merges' (a JSON array's inside), added tokens and a
** pre-tokenizer. */
static char *byte_level_json(const char *extra, const char *merges, const char *added, const char *pre) {
  static char doc[65536];
  int n = snprintf(doc, sizeof doc, "{\"added_tokens\": [%s], \"pre_tokenizer\": %s, "
                   "\"decoder\": {\"type\": \"ByteLevel\"}, \"model\": {\"type\": \"BPE\", \"vocab\": {",
                   added, pre);
  for (int b = 0; b < 256; b++) {
    char c[3] = {0};
    byte_char(b, c);
    n += snprintf(doc + n, sizeof doc - (size_t)n, "%s\"%s%s\": %d", b ? ", " : "", c[0] == '"' || c[0] == '\\' ? "\\" : "",
                  c, b);
  }
  snprintf(doc + n, sizeof doc - (size_t)n, "%s%s}, \"merges\": [%s]}}", *extra ? ", " : "", extra, merges);
  return doc;
}

static const char *llama3_split =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

static const char *gpt2_pre = "{\"type\": \"ByteLevel\", \"add_prefix_space\": false}";
static const char *eot = "{\"id\": 262, \"content\": \"<|endoftext|>\", \"special\": true}";
static const char *small_extra =
    "\"he\": 256, \"ll\": 257, \"hell\": 258, \"hello\": 259, \"Ġw\": 260, \"Ġwo\": 261, \"<|endoftext|>\": 262";

static int32_t *encode(const HfTok *t, const char *s, size_t n, size_t *k) {
  int32_t *ids = NULL;
  Err err;
  if (hftok_encode(t, (const uint8_t *)s, n, &ids, k, NULL, &err) < 0) {
    diag("encode: %s", err.msg);
    *k = 0;
  }
  return ids;
}

static int round_trips(const HfTok *t, const uint8_t *s, size_t n) {
  size_t k;
  int32_t *ids = encode(t, (const char *)s, n, &k);
  uint8_t *back = malloc(n + 1);
  int same = ids && hftok_decode(t, ids, k, back, n) == n && memcmp(back, s, n) == 0;
  free(back);
  free(ids);
  return same;
}

static int same_bytes(const HfTok *t, int32_t id, const char *want) {
  size_t len;
  const uint8_t *p = hftok_bytes(t, id, &len);
  return p && len == strlen(want) && memcmp(p, want, len) == 0;
}

static void test_byte_level(void) {
  Err err;
  const char *merges = "\"h e\", \"l l\", \"he ll\", \"hell o\", \"Ġ w\", \"Ġw o\"";
  HfTok *t = hftok_open(folder("bl", "tokenizer.json", byte_level_json(small_extra, merges, eot, gpt2_pre), NULL), &err);
  ok(t != NULL, "byte-level tokenizer.json opens%s%s", t ? "" : ": ", t ? "" : err.msg);
  if (!t) return;
  ok(strcmp(hftok_kind(t), "byte-level BPE") == 0 && hftok_can_encode(t), "it is byte-level BPE and encodes (%s)",
     hftok_kind(t));
  ok(hftok_size(t) == 263 && hftok_count(t) == 263, "263 tokens (%d, %d)", hftok_size(t), hftok_count(t));
  ok(same_bytes(t, 260, " w") && strcmp(hftok_spelling(t, 260), "Ġw") == 0, "\"Ġw\" stands for \" w\"");
  ok(same_bytes(t, 10, "\n") && strcmp(hftok_spelling(t, 10), "Ċ") == 0, "\"Ċ\" (id 10) is a newline");
  ok(hftok_kind_of(t, 262) == 1 && hftok_kind_of(t, 259) == 0, "<|endoftext|> is special, hello is not");
  ok(hftok_lookup(t, (const uint8_t *)"hello", 5) == 259 && hftok_lookup(t, (const uint8_t *)"xyz", 3) == -1,
     "lookup by bytes finds hello, not xyz");
  ok(hftok_bytes(t, 263, &(size_t){0}) == NULL && hftok_bytes(t, -1, &(size_t){0}) == NULL, "no bytes past the ids");
  size_t k;
  int32_t *ids = encode(t, "hello world<|endoftext|>hello", 29, &k);
  int32_t want[] = {259, 261, 'r', 'l', 'd', 262, 259};   /* byte b's token is id b here */
  ok(ids && k == 7 && memcmp(ids, want, sizeof want) == 0, "\"hello world<|endoftext|>hello\" encodes by merges and the special (%zu ids)", k);
  free(ids);
  hftok_free(t);

  /* The same merges as [a, b] pairs, and the older layout, encode alike. */
  const char *pairs = "[\"h\", \"e\"], [\"l\", \"l\"], [\"he\", \"ll\"], [\"hell\", \"o\"], [\"Ġ\", \"w\"], [\"Ġw\", \"o\"]";
  HfTok *p = hftok_open(folder("pairs", "tokenizer.json", byte_level_json(small_extra, pairs, eot, gpt2_pre), NULL), &err);
  ids = p ? encode(p, "hello world", 11, &k) : NULL;
  ok(ids && k == 5 && ids[0] == 259 && ids[1] == 261, "merges written as pairs read the same");
  free(ids);
  hftok_free(p);
}

/* GPT-2's older layout: vocab.json and merges.txt with its #version line. */
static void test_vocab_merges(void) {
  Err err;
  char vocab[8192];
  int n = snprintf(vocab, sizeof vocab, "{");
  for (int b = 0; b < 256; b++) {
    char c[3] = {0};
    byte_char(b, c);
    n += snprintf(vocab + n, sizeof vocab - (size_t)n, "\"%s%s\": %d, ", c[0] == '"' || c[0] == '\\' ? "\\" : "", c, b);
  }
  snprintf(vocab + n, sizeof vocab - (size_t)n, "%s}", small_extra);
  const char *d = folder("gpt2", "vocab.json", vocab, "merges.txt", "#version: 0.2\nh e\nl l\nhe ll\nhell o\nĠ w\nĠw o\n", NULL);
  HfTok *t = hftok_open(d, &err);
  ok(t && strstr(hftok_file(t), "vocab.json"), "vocab.json + merges.txt open%s%s", t ? "" : ": ", t ? "" : err.msg);
  if (!t) return;
  size_t k;
  int32_t *ids = encode(t, "hello world<|endoftext|>", 24, &k);
  ok(ids && k == 6 && ids[0] == 259 && ids[1] == 261 && ids[5] == 262 && hftok_kind_of(t, 262) == 1,
     "and encode as tokenizer.json does, <|endoftext|> special as GPT2Tokenizer makes it");
  free(ids);
  hftok_free(t);
}

static const char *spm_json =
    "{\"added_tokens\": [{\"id\": 0, \"content\": \"<unk>\", \"special\": true}, "
    "{\"id\": 1, \"content\": \"<s>\", \"special\": true}],"
    " \"pre_tokenizer\": null, \"decoder\": {\"type\": \"Sequence\", \"decoders\": [{\"type\": \"Replace\", "
    "\"pattern\": {\"String\": \"\xe2\x96\x81\"}, \"content\": \" \"}, {\"type\": \"ByteFallback\"}]},"
    " \"model\": {\"type\": \"BPE\", \"byte_fallback\": true, \"vocab\": {\"<unk>\": 0, \"<s>\": 1, \"<0x0A>\": 2,"
    " \"<0x41>\": 3, \"A\": 4, \"\xe2\x96\x81\": 5, \"t\": 6, \"h\": 7, \"e\": 8, \"th\": 9, \"\xe2\x96\x81th\": 10,"
    " \"\xe2\x96\x81the\": 11}, \"merges\": [\"t h\", \"\xe2\x96\x81 th\", \"\xe2\x96\x81th e\"]}}";

static void test_sentencepiece(void) {
  Err err;
  HfTok *t = hftok_open(folder("spm", "tokenizer.json", spm_json, NULL), &err);
  ok(t != NULL, "SentencePiece-style tokenizer.json opens%s%s", t ? "" : ": ", t ? "" : err.msg);
  if (!t) return;
  ok(strcmp(hftok_kind(t), "SentencePiece BPE") == 0, "it is SentencePiece BPE (%s)", hftok_kind(t));
  ok(same_bytes(t, 11, " the") && same_bytes(t, 2, "\n") && same_bytes(t, 0, "<unk>"),
     "\"▁the\" is \" the\", <0x0A> a newline, <unk> its own text");
  ok(hftok_kind_of(t, 3) == 2 && hftok_kind_of(t, 1) == 1 && hftok_kind_of(t, 4) == 0, "kinds: byte piece, special, ordinary");
  ok(hftok_lookup(t, (const uint8_t *)"A", 1) == 4 && hftok_ambiguous(t) == 0,
     "\"A\" looks up the piece, not its byte-fallback twin <0x41>, and nothing counts as ambiguous");
  int32_t *ids = NULL;
  size_t k;
  ok(!hftok_can_encode(t) && hftok_encode(t, (const uint8_t *)"a", 1, &ids, &k, NULL, &err) < 0 &&
         strstr(err.msg, "cannot encode"),
     "encoding is refused: %s", err.msg);
  hftok_free(t);

  const char *uni = "{\"pre_tokenizer\": {\"type\": \"Metaspace\"}, \"model\": {\"type\": \"Unigram\", \"vocab\": "
                    "[[\"<unk>\", 0.0], [\"\xe2\x96\x81" "a\", -1.5], [\"b\", -2.0]]}}";
  t = hftok_open(folder("uni", "tokenizer.json", uni, NULL), &err);
  ok(t && hftok_count(t) == 3 && !hftok_can_encode(t) && same_bytes(t, 1, " a"),
     "a Unigram vocabulary reads for its bytes, not for encoding%s%s", t ? "" : ": ", t ? "" : err.msg);
  hftok_free(t);
}

/* A file that must be refused with a message that says 'why'. */
static void refused(const char *what, const char *path, const char *why) {
  Err err = {{0}};
  HfTok *t = hftok_open(path, &err);
  ok(!t && strstr(err.msg, why), "%s is refused: %s", what, t ? "(opened)" : err.msg);
  hftok_free(t);
}

/* Byte-level files each with one fault: extra vocabulary, merges, added tokens. */
static const struct {
  const char *what, *extra, *merges, *added, *why;
} faults[] = {
    {"a vocabulary with one key twice", "\"he\": 256, \"he\": 257", "", "", "duplicate"},
    {"one id with two strings", "\"he\": 256, \"xy\": 256", "", "", "id 256 is both"},
    {"added_tokens disagreeing with the vocabulary", "\"he\": 256", "",
     "{\"id\": 256, \"content\": \"<x>\", \"special\": true}", "id 256 is both"},
    {"one string with two ids", "\"he\": 256", "", "{\"id\": 300, \"content\": \"he\", \"special\": false}",
     "\"he\" has two ids, 256 and 300"},
    {"a negative id", "\"he\": -3", "", "", "id -3, outside"},
    {"a huge id", "\"he\": 3000000000", "", "", "id 3000000000, outside"},
    {"a merge whose join is not a token", "\"he\": 256", "\"h e\", \"he q\"", "", "makes \"heq\", which is not"},
    {"a merge naming an unknown token", "\"he\": 256", "\"h zz\"", "", "names \"zz\", which is not"},
};

/* Files of the wrong shape. */
static const struct {
  const char *what, *doc, *why;
} shapes[] = {
    {"a file that is no object", "[]", "no \"model\" object"},
    {"a BPE vocabulary that is an array", "{\"model\": {\"type\": \"BPE\", \"vocab\": [], \"merges\": []}}",
     "the vocabulary is not an object"},
    {"merges that are no array", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": 3}}",
     "model.merges is not an array"},
    {"a merge that is a number", "{\"decoder\": {\"type\": \"ByteLevel\"}, \"model\": {\"type\": \"BPE\", "
     "\"vocab\": {\"a\": 0}, \"merges\": [7]}}", "merge 1 is neither"},
    {"an id that is not an integer", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0.5}, \"merges\": []}}",
     "\"a\" has an id that is not an integer"},
    {"a Unigram entry that is no pair", "{\"model\": {\"type\": \"Unigram\", \"vocab\": [\"a\"]}}",
     "vocab entry 0 is not [piece, score]"},
    {"an added token without an id", "{\"added_tokens\": [{\"content\": \"<s>\"}], \"decoder\": {\"type\": "
     "\"ByteLevel\"}, \"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []}}",
     "added_tokens[0] lacks an integer id"},
    {"a BPE model that says nothing of how tokens spell bytes", "{\"pre_tokenizer\": null, \"decoder\": null, "
     "\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []}}", "cannot tell how its tokens spell bytes"},
};

static void test_hostile(void) {
  for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
    char name[32];
    snprintf(name, sizeof name, "shape%zu", i);
    refused(shapes[i].what, folder(name, "tokenizer.json", shapes[i].doc, NULL), shapes[i].why);
  }
  char doc[70000], name[32];
  for (size_t i = 0; i < sizeof faults / sizeof *faults; i++) {
    snprintf(doc, sizeof doc, "%s", byte_level_json(faults[i].extra, faults[i].merges, faults[i].added, gpt2_pre));
    snprintf(name, sizeof name, "fault%zu", i);
    refused(faults[i].what, folder(name, "tokenizer.json", doc, NULL), faults[i].why);
  }
  snprintf(doc, sizeof doc, "%s", byte_level_json("", "", "", "null"));
  doc[strlen(doc) - 1] = 0;
  refused("an unfinished file", folder("cut", "tokenizer.json", doc, NULL), "tokenizer.json: line");
  refused("a WordPiece model", folder("wp", "tokenizer.json", "{\"model\": {\"type\": \"WordPiece\", \"vocab\": {}}}", NULL),
          "WordPiece is not supported");
  refused("a folder with no tokenizer", folder("empty", NULL), "looked for tokenizer.json, and for vocab.json with merges.txt");
  refused("vocab.json without merges.txt", folder("half", "vocab.json", "{\"a\": 0}", NULL), "merges.txt is missing");
  refused("a merges.txt line of three tokens", folder("m3", "vocab.json", "{\"a\": 0, \"b\": 1, \"ab\": 2}", "merges.txt", "a b c\n", NULL),
          "merges.txt: line 1");
  refused("a missing folder", "/nonexistent/model", "No such file");

  /* Two ordinary ids with the same bytes: "→" is none of GPT-2's
  ** characters, so it stands for its UTF-8, as "âĨĴ" does. */
  snprintf(doc, sizeof doc, "%s", byte_level_json("\"\xe2\x86\x92\": 256, \"\xc3\xa2\xc4\xa8\xc4\xb4\": 257", "", "", gpt2_pre));
  Err err;
  HfTok *t = hftok_open(folder("ambig", "tokenizer.json", doc, NULL), &err);
  ok(t && hftok_ambiguous(t) == 1 && hftok_lookup(t, (const uint8_t *)"\xe2\x86\x92", 3) == 256,
     "two ids with the same bytes: counted (%d), the lower one looked up", t ? hftok_ambiguous(t) : -1);
  hftok_free(t);
}

/* Added tokens meeting the vocabulary, and what the pre-tokenizer asks. */
static void test_variants(void) {
  Err err;
  const char *merges = "\"h e\", \"l l\", \"he ll\", \"hell o\", \"Ġ w\", \"Ġw o\"";
  const char *added = "{\"id\": 263, \"content\": \"  \", \"special\": false}, "
                      "{\"id\": 264, \"content\": \"\\n\\n\", \"special\": true}, " /* spelt "ĊĊ" below */
                      "{\"id\": 265, \"content\": \"<pad>\", \"special\": true}";
  char extra[512];
  snprintf(extra, sizeof extra, "%s, \"ĠĠ\": 263, \"ĊĊ\": 264, \"Ġworld\": 266", small_extra);
  HfTok *t = hftok_open(folder("neox", "tokenizer.json", byte_level_json(extra, merges, added, gpt2_pre), NULL), &err);
  ok(t && hftok_kind_of(t, 263) == 0 && same_bytes(t, 263, "  ") && strcmp(hftok_spelling(t, 263), "ĠĠ") == 0,
     "an added token the vocabulary spells otherwise for the same bytes (\"  \" as \"ĠĠ\") is that token%s%s",
     t ? "" : ": ", t ? "" : err.msg);
  if (!t) return;
  ok(hftok_kind_of(t, 264) == 1 && same_bytes(t, 264, "\n\n") && same_bytes(t, 265, "<pad>"),
     "special added tokens stand for their content");
  size_t k;
  int32_t *ids = encode(t, "a\n\n<pad> world", 14, &k);
  int32_t want[] = {'a', 264, 265, 261, 'r', 'l', 'd'};
  ok(ids && k == 7 && memcmp(ids, want, sizeof want) == 0, "special tokens are matched whole before the pre-tokenizer (%zu ids)", k);
  free(ids);
  hftok_free(t);

  /* With "ignore_merges" a piece the vocabulary has is taken whole, as
  ** Llama 3's tokenizer.json asks; without, the merges decide. */
  char doc[70000];
  snprintf(doc, sizeof doc, "%s", byte_level_json(extra, merges, added, gpt2_pre));
  char *model = strstr(doc, "\"model\": {") + 10, *rest = strdup(model);
  snprintf(model, sizeof doc - (size_t)(model - doc), " \"ignore_merges\": true, %s", rest);
  free(rest);
  t = hftok_open(folder("whole", "tokenizer.json", doc, NULL), &err);
  ids = t ? encode(t, " world", 6, &k) : NULL;
  ok(ids && k == 1 && ids[0] == 266, "with ignore_merges \" world\" is its vocabulary token%s%s", t ? "" : ": ",
     t ? "" : err.msg);
  free(ids);
  hftok_free(t);

  const char *pres[][2] = {
      {"{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Punctuation\"}, {\"type\": \"ByteLevel\"}]}",
       "Punctuation is not supported"},
      {"{\"type\": \"Split\", \"pattern\": {\"Regex\": \"(unclosed\"}, \"behavior\": \"Isolated\"}",
       "does not compile"},
      {"{\"type\": \"Split\", \"pattern\": {\"Regex\": \"a\"}, \"behavior\": \"Removed\"}", "Split other than"},
  };
  for (size_t i = 0; i < sizeof pres / sizeof *pres; i++) {
    char name[16];
    snprintf(name, sizeof name, "pre%zu", i);
    t = hftok_open(folder(name, "tokenizer.json", byte_level_json(small_extra, merges, eot, pres[i][0]), NULL), &err);
    ok(t && !hftok_can_encode(t) && strstr(hftok_why_not_encode(t), pres[i][1]),
       "a tokenizer whose pre-tokenizer cannot be followed reads, but does not encode: %s",
       t ? hftok_why_not_encode(t) : err.msg);
    hftok_free(t);
  }
  snprintf(doc, sizeof doc, "%s", byte_level_json(small_extra, merges, eot,
           "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": {\"String\": \"l\"}, "
           "\"behavior\": \"Isolated\"}, {\"type\": \"ByteLevel\", \"use_regex\": false}]}"));
  t = hftok_open(folder("literal", "tokenizer.json", doc, NULL), &err);
  HfTok *digits = hftok_open(folder("digits", "tokenizer.json", byte_level_json("\"12\": 267", "\"1 2\"", eot,
      "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Digits\", \"individual_digits\": true}, "
      "{\"type\": \"ByteLevel\"}]}"), NULL), &err);
  HfTok *runs = hftok_open(folder("digit_runs", "tokenizer.json", byte_level_json("\"12\": 267", "\"1 2\"", eot,
      "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Digits\"}, {\"type\": \"ByteLevel\"}]}"),
      NULL), &err);
  int32_t *one = digits ? encode(digits, "a12", 3, &k) : NULL;
  size_t k2;
  int32_t *two = runs ? encode(runs, "a12", 3, &k2) : NULL;
  ok(one && two && k == 3 && one[1] == '1' && one[2] == '2' && k2 == 2 && two[1] == 267,
     "Digits (SmolLM's) keeps digits apart, one by one when asked");
  free(one);
  free(two);
  hftok_free(digits);
  hftok_free(runs);
  ids = t ? encode(t, "hello", 5, &k) : NULL;
  ok(ids && k == 4 && ids[0] == 256 && ids[1] == 'l' && ids[2] == 'l' && ids[3] == 'o',
     "a Split on the string \"l\" keeps \"ll\" from merging (%zu ids)", k);
  free(ids);
  hftok_free(t);
}

/* Random bytes, invalid UTF-8 among them, round-trip through both
** pre-tokenizers. */
static void test_round_trips(const HfTok *gpt2, const HfTok *llama, const HfTok *chain) {
  Rng rng;
  rng_seed(&rng, 11);
  int all = 1;
  const char *alphabet[] = {"a", "b", " ", "\n", "'s", "\xc3\xa9", "\xe2\x80\x94", "1", "\xff", "\x80", "\xe2\x82", "\r", "\t", "<|endoftext|>"};
  uint8_t buf[4096];
  for (int trial = 0; trial < 300; trial++) {
    size_t n = 0, len = rng_below(&rng, 600);
    while (n < len) {
      if (rng_below(&rng, 3) == 0) {
        buf[n++] = (uint8_t)rng_u64(&rng);
      } else {
        const char *s = alphabet[rng_below(&rng, (sizeof alphabet / sizeof *alphabet))];
        memcpy(buf + n, s, strlen(s));
        n += strlen(s);
      }
    }
    all &= round_trips(gpt2, buf, n) && round_trips(llama, buf, n) && round_trips(chain, buf, n);
  }
  ok(all, "300 random byte strings (invalid UTF-8 among them) come back through encode and decode, with each of three pre-tokenizers");
  uint8_t *big = malloc(1 << 20);
  for (size_t i = 0; i < 1 << 20; i++) big[i] = i % 1000 < 500 ? 'a' : ' ';
  ok(round_trips(gpt2, big, 1 << 20), "a megabyte of long runs round-trips");
  free(big);
}

static int stop_now(void *ctx) { return ++*(int *)ctx > 0; }

static void test_cancel(const HfTok *t) {
  int asked = 0;
  Cancel c = {stop_now, &asked};
  size_t n = 4 * CANCEL_EVERY, k;
  uint8_t *text = malloc(n);
  for (size_t i = 0; i < n; i++) text[i] = "ab c\n"[i % 5];
  int32_t *ids;
  Err err;
  ok(hftok_encode(t, text, n, &ids, &k, &c, &err) < 0 && strstr(err.msg, "interrupted") && asked == 1,
     "a Cancel that says stop stops encoding: %s", err.msg);
  free(text);
}

/* ---- against the reference ---------------------------------------------- */


static const char *texts[] = {
    "Hello world, it's 2024! Don't  stop.",
    "naïve café über straße — 12345678 ok?",
    "   leading spaces and trailing   ",
    "line one\n\nline two\r\n\tTabbed\n   \n",
    "They're we'll I'd you've I'm HE'S THEY'LL",
    "Ünïcödé ΑΒΓ αβγ Привет мир 日本語のテキスト 🙂🙂 emoji",
    "x=1+2*3; y = [4, 5, 6]  # comment\n\n\n",
    "The the THE they theirs",
};

static const char *training =
    "Hello world, it's 2024! Don't stop. The quick brown fox jumps over the lazy dog.\n"
    "naïve café über straße — the weather is nice; 1234 5678 90.\n"
    "They're here, we'll see, I'd say you've got it, I'm sure, he's right.\n"
    "Привет мир, как дела? 日本語のテキストです。 αβγ δεζ.\n"
    "    indented code = [1, 2, 3]\n\tfor x in range(10): print(x)\n\n";

/* Runs a command with 'in' on its standard input; its output, malloc'd. */
static char *run(const char *cmd, const char *in) {
  char tmp[600], line[1200];
  snprintf(tmp, sizeof tmp, "%s/in.txt", dir);
  FILE *f = fopen(tmp, "wb");
  fputs(in, f);
  fclose(f);
  snprintf(line, sizeof line, "%s < %s", cmd, tmp);
  FILE *p = popen(line, "r");
  if (!p) return NULL;
  size_t n = 0, cap = 1 << 16;
  char *out = malloc(cap);
  for (size_t got; (got = fread(out + n, 1, cap - n - 1, p)) > 0;)
    if ((n += got) + 1 == cap) out = realloc(out, cap *= 2);
  out[n] = 0;
  int status = pclose(p);
  if (status != 0) {
    free(out);
    return NULL;
  }
  return out;
}

/* " FILE" naming a file that holds 'pattern', or "" without one. */
static const char *pattern_arg(const char *pattern) {
  static char arg[600];
  if (!pattern) return "";
  snprintf(arg, sizeof arg, " %s/pattern.txt", dir);
  FILE *f = fopen(arg + 1, "wb");
  fputs(pattern, f);
  fclose(f);
  return arg;
}

static HfTok *learn(const char *script, const char *name, const char *pattern) {
  char cmd[2048], sub[600];
  snprintf(sub, sizeof sub, "%s/%s", dir, name);
  mkdir(sub, 0700);
  snprintf(cmd, sizeof cmd, "'%s' '%s' learn '%s' 300 5%s", python, script, sub, pattern_arg(pattern));
  char *out = run(cmd, training);
  free(out);
  Err err;
  HfTok *t = hftok_open(sub, &err);
  if (!t) diag("%s", err.msg);
  return t;
}

/* Each text's ids from the C encoder and from the reference: equal. */
static void compare(const char *script, const HfTok *t, const char *label, const char *name, const char *pattern) {
  json_t *list = json_array();
  for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) json_array_append_new(list, json_string(texts[i]));
  char *in = json_dumps(list, 0), cmd[2048];
  json_decref(list);
  snprintf(cmd, sizeof cmd, "'%s' '%s' encode '%s/%s'%s", python, script, dir, name, pattern_arg(pattern));
  char *out = run(cmd, in);
  free(in);
  json_t *want = out ? json_loads(out, 0, NULL) : NULL;
  free(out);
  int same = json_is_array(want) && json_array_size(want) == sizeof texts / sizeof *texts;
  size_t total = 0;
  for (size_t i = 0; same && i < sizeof texts / sizeof *texts; i++) {
    size_t k;
    int32_t *ids = encode(t, texts[i], strlen(texts[i]), &k);
    json_t *w = json_array_get(want, i);
    same = ids && json_array_size(w) == k;
    for (size_t j = 0; same && j < k; j++) same = json_integer_value(json_array_get(w, j)) == ids[j];
    if (!same) diag("text %zu differs: %zu ids here, %zu from the reference", i, k, json_array_size(w));
    total += k;
    free(ids);
  }
  ok(same, "%s: %zu texts, %zu ids, equal to GPT-2's algorithm id for id", label, sizeof texts / sizeof *texts, total);
  json_decref(want);
}


/* 0 when 'python' can import the 'regex' module. */
static int python_with_regex(void) {
  char cmd[1200];
  if (getenv("TIELAB_PYTHON")) python = getenv("TIELAB_PYTHON");
  snprintf(cmd, sizeof cmd, "'%s' -c 'import regex' 2>/dev/null", python);
  return system(cmd) == 0 ? 0 : -1;
}

static void test_reference(void) {
  const char *src = getenv("srcdir");
  char script[1024];
  snprintf(script, sizeof script, "%s/tests/lib/gpt2_bpe_ref.py", src ? src : ".");
  if (python_with_regex() < 0) {
    skip("%s with the 'regex' module (Debian: python3-regex) is not there to compare with", python);
    skip("likewise for learning a vocabulary");
    skip("likewise for the Llama 3 pre-tokenizer");
    skip("likewise for vocab.json + merges.txt");
    return;
  }
  HfTok *gpt2 = learn(script, "ref_gpt2", NULL), *llama = learn(script, "ref_llama", llama3_split);
  ok(gpt2 && llama && hftok_count(gpt2) > 400, "the reference learns vocabularies that open (%d tokens)",
     gpt2 ? hftok_count(gpt2) : 0);
  if (!gpt2 || !llama) return;
  compare(script, gpt2, "tokenizer.json, GPT-2's pre-tokenizer", "ref_gpt2", NULL);
  compare(script, llama, "tokenizer.json, Llama 3's Split, merges as pairs", "ref_llama", llama3_split);
  char sub[600];
  snprintf(sub, sizeof sub, "%s/ref_gpt2/tokenizer.json", dir);
  remove(sub);   /* now vocab.json + merges.txt */
  Err err;
  HfTok *old = hftok_open(strrchr(sub, '/') ? (sub[strlen(sub) - 15] = 0, sub) : sub, &err);
  if (old) compare(script, old, "vocab.json + merges.txt", "ref_gpt2", NULL);
  else ok(0, "vocab.json + merges.txt open: %s", err.msg);
  hftok_free(old);
  hftok_free(gpt2);
  hftok_free(llama);
}

/* The small vocabulary with GPT-2's pre-tokenizer and with Llama 3's. */
static void test_any_bytes(void) {
  char pre[1024];
  Err err;
  const char *merges = "\"h e\", \"l l\", \"he ll\", \"hell o\", \"Ġ w\", \"Ġw o\"";
  json_t *re = json_string(llama3_split);
  char *quoted = json_dumps(re, JSON_ENCODE_ANY);
  json_decref(re);
  snprintf(pre, sizeof pre, "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": "
           "{\"Regex\": %s}, \"behavior\": \"Isolated\", \"invert\": false}, {\"type\": \"ByteLevel\", "
           "\"use_regex\": false}]}", quoted);
  free(quoted);
  HfTok *gpt2 = hftok_open(folder("any_gpt2", "tokenizer.json", byte_level_json(small_extra, merges, eot, gpt2_pre), NULL), &err);
  HfTok *llama = hftok_open(folder("any_llama", "tokenizer.json", byte_level_json(small_extra, merges, eot, pre), NULL), &err);
  ok(gpt2 && llama, "a Split + ByteLevel pre-tokenizer opens%s%s", llama ? "" : ": ", llama ? "" : err.msg);
  /* Two expressions in a chain: Split on "o", then ByteLevel's own. */
  HfTok *chain = hftok_open(folder("any_chain", "tokenizer.json", byte_level_json(small_extra, merges, eot,
      "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": {\"String\": \"o\"}, "
      "\"behavior\": \"Isolated\"}, {\"type\": \"ByteLevel\"}]}"), NULL), &err);
  size_t k;
  int32_t *ids = chain ? encode(chain, "hello world", 11, &k) : NULL;
  int32_t want[] = {258, 'o', 260, 'o', 'r', 'l', 'd'};   /* "hell" "o" "Ġw" "o" ...: no "hello", no "Ġwo" */
  ok(ids && k == 7 && memcmp(ids, want, sizeof want) == 0,
     "a Split and ByteLevel's own expression apply one after the other (%zu ids)", k);
  free(ids);
  if (gpt2 && llama && chain) {
    test_round_trips(gpt2, llama, chain);
    test_cancel(gpt2);
  }
  hftok_free(gpt2);
  hftok_free(llama);
  hftok_free(chain);
}

int main(void) {
  if (!mkdtemp(dir)) return skip_all("cannot make a temporary folder");
  test_byte_level();
  test_any_bytes();
  test_variants();
  test_vocab_merges();
  test_sentencepiece();
  test_hostile();
  test_reference();
  nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  printf("1..%d\n", tap_n);
  return tap_failed != 0;
}
