#!/usr/bin/env python3
"""gpt2_bpe_ref.py -- byte-level BPE as GPT-2's encoder.py does it, written
apart from tielab's C so that its encodings can be checked against it.

  gpt2_bpe_ref.py learn DIR MERGES SEED [PATTERN_FILE] < training text
      learns MERGES merges and writes DIR/vocab.json + DIR/merges.txt
      (GPT-2's older layout) and DIR/tokenizer.json, ids shuffled by SEED;
      with PATTERN_FILE (a file holding a regular expression: quotes
      and backslashes pass no shell), tokenizer.json pre-tokenizes as Llama 3's does
      (Sequence of Split PATTERN and ByteLevel without its regex) and
      writes its merges as pairs, as newer files do.
  gpt2_bpe_ref.py encode DIR [PATTERN_FILE] < JSON list of texts
      prints a JSON list of id lists.

Needs the 'regex' module (Debian: python3-regex) for \\p{L} and friends.
"""
import json
import random
import sys

import regex

GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def bytes_to_unicode():
    """GPT-2's map: printable Latin-1 as itself, other bytes from U+0100 on."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), 256))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


B2U = bytes_to_unicode()


def pieces(text, pattern):
    return ["".join(B2U[b] for b in tok.encode("utf-8")) for tok in regex.findall(pattern, text)]


def merge_word(word, pair):
    out, i = [], 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(word[i] + word[i + 1])
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)


def learn(text, n_merges, pattern):
    words = {}
    for p in pieces(text, pattern):
        words[tuple(p)] = words.get(tuple(p), 0) + 1
    merges = []
    for _ in range(n_merges):
        counts = {}
        for w, c in words.items():
            for pair in zip(w, w[1:]):
                counts[pair] = counts.get(pair, 0) + c
        if not counts:
            break
        best = min(counts, key=lambda p: (-counts[p], p))
        merges.append(best)
        merged = {}
        for w, c in words.items():
            m = merge_word(w, best)
            merged[m] = merged.get(m, 0) + c
        words = merged
    return merges


def get_pairs(word):
    return set(zip(word, word[1:]))


def bpe(token, ranks):
    """encoder.py's bpe(): merge the lowest-ranked pair everywhere, again."""
    word = tuple(token)
    pairs = get_pairs(word)
    while pairs:
        bigram = min(pairs, key=lambda p: ranks.get(p, float("inf")))
        if bigram not in ranks:
            break
        first, second = bigram
        new_word, i = [], 0
        while i < len(word):
            try:
                j = word.index(first, i)
            except ValueError:
                new_word.extend(word[i:])
                break
            new_word.extend(word[i:j])
            i = j
            if word[i] == first and i < len(word) - 1 and word[i + 1] == second:
                new_word.append(first + second)
                i += 2
            else:
                new_word.append(word[i])
                i += 1
        word = tuple(new_word)
        pairs = get_pairs(word) if len(word) > 1 else set()
    return word


def write_files(folder, merges, seed, pattern):
    tokens = [B2U[b] for b in range(256)]
    for a, b in merges:
        if a + b not in tokens:
            tokens.append(a + b)
    ids = random.Random(seed).sample(range(len(tokens)), len(tokens))
    vocab = dict(zip(tokens, ids))
    eot = len(tokens)
    vocab["<|endoftext|>"] = eot
    with open(f"{folder}/vocab.json", "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(f"{folder}/merges.txt", "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges))
    if pattern:
        pre = {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}
        listed = [[a, b] for a, b in merges]
    else:
        pre = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True}
        listed = [f"{a} {b}" for a, b in merges]
    doc = {"version": "1.0",
           "added_tokens": [{"id": eot, "content": "<|endoftext|>", "single_word": False, "lstrip": False,
                             "rstrip": False, "normalized": False, "special": True}],
           "normalizer": None, "pre_tokenizer": pre, "post_processor": None,
           "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True},
           "model": {"type": "BPE", "dropout": None, "unk_token": None, "vocab": vocab, "merges": listed}}
    with open(f"{folder}/tokenizer.json", "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False)


def encode(folder, texts, pattern):
    with open(f"{folder}/vocab.json", encoding="utf-8") as f:
        vocab = json.load(f)
    with open(f"{folder}/merges.txt", encoding="utf-8") as f:
        lines = [l.rstrip("\n") for l in f if not l.startswith("#version")]
    ranks = {tuple(l.split(" ")): i for i, l in enumerate(lines) if l}
    cache = {}   # as encoder.py's: a piece's tokens once

    def tokens(p):
        if p not in cache:
            cache[p] = bpe(p, ranks)
        return cache[p]

    return [[vocab[t] for p in pieces(text, pattern) for t in tokens(p)] for text in texts]


def read_pattern(argv, i):
    if len(argv) <= i:
        return None
    with open(argv[i], encoding="utf-8") as f:
        return f.read()


def main():
    cmd, folder = sys.argv[1], sys.argv[2]
    if cmd == "learn":
        pattern = read_pattern(sys.argv, 5)
        text = sys.stdin.buffer.read().decode("utf-8")
        write_files(folder, learn(text, int(sys.argv[3]), pattern or GPT2), int(sys.argv[4]), pattern)
    elif cmd == "encode":
        pattern = read_pattern(sys.argv, 3) or GPT2
        json.dump(encode(folder, json.load(sys.stdin), pattern), sys.stdout)
    else:
        sys.exit(f"gpt2_bpe_ref.py: unknown command {cmd!r} (learn or encode)")


if __name__ == "__main__":
    main()
