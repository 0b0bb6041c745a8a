#!/bin/sh
# test_sample_utf8.sh -- r:sample on a model trained briefly on text full of
# multibyte characters: a byte-level BPE's tokens end inside characters and
# an untrained model strings them anyhow, yet every sample is valid UTF-8.
tap_name=sample_utf8; . "${srcdir:-.}/tests/lib/tap.sh"
[ -x "$py" ] || skip_all "no $py to check UTF-8 with"

# Two- to four-byte characters, mixed with ASCII, in a varied order.
"$py" - "$tmp/corpus.txt" <<'PY'
import random, sys
words = ["café", "naïve", "über", "ёжик", "Ελλάδα", "日本語", "한국어", "👍🏽", "😀", "∑xᵢ", "€5", "the", "and"]
rng = random.Random(3)
with open(sys.argv[1], "w", encoding="utf-8") as f:
    for _ in range(4000):
        f.write(" ".join(rng.choice(words) for _ in range(rng.randint(3, 9))) + rng.choice([".\n", ", ", "! "]))
PY
cat >"$tmp/sample.lua" <<'LUA'
local r = lab.run{name = "u8", corpus = "corpus.txt", vocab = 320, dim = 16, layers = 1, heads = 2, ctx = 16, batch = 4}
r:step(5)
local f = assert(io.open("samples.txt", "wb"))
for seed = 1, 40 do
  -- A high temperature draws tokens in every order, halves of characters included.
  f:write(r:sample{n = 200, temp = 3, seed = seed}, "\0")
  f:write(r:sample{n = 50, temp = 1, seed = seed, prompt = "caf"}, "\0")
end
f:close()
LUA
(cd "$tmp" && $CAP "$tielab" --headless sample.lua) >"$tmp/out" 2>&1
ok $? "a run on the corpus samples 80 texts: $(tail -n 1 "$tmp/out")"

"$py" - "$tmp/samples.txt" >"$tmp/check" <<'PY'
import sys
data = open(sys.argv[1], "rb").read().split(b"\0")[:-1]
bad = 0
for s in data:
    try:
        s.decode("utf-8", "strict")
    except UnicodeDecodeError as e:
        bad += 1
        print("invalid:", e, file=sys.stderr)
text = b"".join(data).decode("utf-8", "replace")
multi = sum(1 for c in text if len(c.encode()) > 1 and c != "\ufffd")
print(len(data), bad, multi, text.count("\ufffd"))
PY
ok $? "python reads the samples"
read -r count bad multi fffd <"$tmp/check"
ok $([ "$count" = 80 ] && [ "$bad" = 0 ]; echo $?) "all $count samples are valid UTF-8 ($bad not)"
ok $([ "${multi:-0}" -gt 100 ]; echo $?) "and hold multibyte characters ($multi)"
echo "# U+FFFD in the samples: $fffd (halves of characters the tokens left)"
if have iconv; then
  tr -d '\000' <"$tmp/samples.txt" | iconv -f UTF-8 -t UTF-8 >/dev/null 2>&1
  ok $? "iconv agrees"
else
  skip "iconv's view: iconv is not installed"
fi
tap_done
