-- seeds.lua -- writes the seed corpora of the fuzz harnesses into DIR
-- (tests/fuzz/ in the sources; its folders must exist):
--   ckpt/         checkpoints of tiny runs, tied and partly tied, a few steps
--                 in (moments, lens translators, tokenizer, history all
--                 present), and a weights-only nanoGPT file cut from one
--   safetensors/  that weights-only file, and small files with every dtype
--   bpe_cache/    tokenizer cache files for fuzz_bpe_cache.c's corpus
--   corpus/       text files just over the smallest corpus size
--   sweep_task/   task records of fuzz_sweep_task.c's sweep of one task:
--                 a good one, one of NaN and infinities, one of wrong types
--   hftok/        tokenizer.json files: byte-level (GPT-2, Llama 3), SentencePiece, Unigram
--   journal/      journals as the lab writes them: every kind of entry, text
--                 in both of its forms, a final record; and a short one
-- Run: tielab --headless tests/fuzz/seeds.lua tests/fuzz
local dir = arg[1] or "tests/fuzz"

local function write(path, bytes)
  local f = assert(io.open(dir .. "/" .. path, "wb"))
  f:write(bytes)
  f:close()
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- A safetensors file from {name, dtype, shape, bytes} entries and metadata
-- given as a list of {key, value}, in that order.
local function safetensors(entries, meta)
  local parts, data, off = {}, {}, 0
  if meta then
    local kv = {}
    for _, p in ipairs(meta) do kv[#kv + 1] = string.format("%q:%q", p[1], p[2]) end
    parts[1] = '"__metadata__":{' .. table.concat(kv, ",") .. "}"
  end
  for _, e in ipairs(entries) do
    parts[#parts + 1] = string.format('"%s":{"dtype":"%s","shape":[%s],"data_offsets":[%d,%d]}',
                                      e[1], e[2], table.concat(e[3], ","), off, off + #e[4])
    data[#data + 1] = e[4]
    off = off + #e[4]
  end
  local head = "{" .. table.concat(parts, ",") .. "}"
  return string.pack("<I8", #head) .. head .. table.concat(data)
end

-- ---- checkpoints
local base = {vocab = 256, dim = 8, layers = 1, heads = 2, ctx = 8, batch = 2,
              lens_every = 1, eval_every = 2, align_every = 2}
for _, tie in ipairs{"tied", 4} do
  local o = {name = "seed_" .. tostring(tie), tie = tie}
  for k, v in pairs(base) do o[k] = v end
  local r = lab.run(o)
  r:step(3)
  assert(r:save(dir .. "/ckpt/" .. (tie == "tied" and "tied" or "partial") .. ".safetensors"))
end

-- ---- a weights-only file: the model tensors of the partly tied checkpoint
local ckpt = read(dir .. "/ckpt/partial.safetensors")
local hlen = string.unpack("<I8", ckpt)
local head, body = ckpt:sub(9, 8 + hlen), ckpt:sub(9 + hlen)
local entries = {}
for name, dtype, shape, a, b in head:gmatch('"([^"]+)":{"dtype":"(%w+)","shape":%[([%d,]*)%],"data_offsets":%[(%d+),(%d+)%]}') do
  if name:find("^transformer%.") or name:find("^lm_head%.") then
    local dims = {}
    for d in shape:gmatch("%d+") do dims[#dims + 1] = d end
    entries[#entries + 1] = {name, dtype, dims, body:sub(tonumber(a) + 1, tonumber(b))}
  end
end
table.sort(entries, function(x, y) return x[1] < y[1] end)
local weights = safetensors(entries, {{"vocab_size", "256"}, {"n_embd", "8"}, {"n_layer", "1"},
                                      {"n_head", "2"}, {"block_size", "8"}, {"tie", "4"}})
write("ckpt/weights.safetensors", weights)
write("safetensors/weights.safetensors", weights)

-- ---- small files with every dtype, an empty tensor and a scalar
write("safetensors/dtypes.safetensors", safetensors({
  {"a.f32", "F32", {2}, string.pack("<ff", 1.5, -2)},
  {"b.f64", "F64", {1, 1}, string.pack("<d", 0.25)},
  {"c.i32", "I32", {1, 2}, string.pack("<i4i4", 7, -7)},
  {"d.i64", "I64", {1}, string.pack("<i8", 1 << 40)},
  {"e.u8", "U8", {3}, "\1\2\3"},
  {"f.f16", "F16", {2}, "\0\60\0\188"},
  {"g.bf16", "BF16", {2}, "\128\63\0\192"},
  {"h.empty", "F32", {0, 4}, ""},
  {"i.scalar", "F32", {}, string.pack("<f", 3)},
}, {{"format", "pt"}, {"note", "every dtype"}}))
write("safetensors/empty.safetensors", safetensors({}, nil))
write("safetensors/meta.safetensors", safetensors({{"x", "F32", {1}, string.pack("<f", 1)}},
                                                  {{"vocab_size", "256"}, {"n_embd", "8"}}))

-- ---- tokenizer caches (bpe.c's layout) for fuzz_bpe_cache.c's TEXT
local TEXT = "the cat sat on the mat. the dog sat on the log. a cat and a dog met on the mat,\n" ..
             "and the cat ran. then the dog ran after the cat, and the mat was empty again.\n"
local function fnv1a(s, h)
  h = h or 0xcbf29ce484222325
  for i = 1, #s do h = (h ~ s:byte(i)) * 0x100000001b3 end
  return h
end
local function mix64(z)
  z = (z ~ (z >> 30)) * 0xbf58476d1ce4e5b9
  z = (z ~ (z >> 27)) * 0x94d049bb133111eb
  return z ~ (z >> 31)
end
local hash = mix64(fnv1a(TEXT) ~ #TEXT)
local function cache(vocab, merges)
  local s = "tielabBP" .. string.pack("<I4I4i8I8I4", 1, vocab, hash, #TEXT, #merges // 2)
  for _, id in ipairs(merges) do s = s .. string.pack("<I4", id) end
  return s .. string.pack("<i8", fnv1a(s))
end
local b = string.byte
write("bpe_cache/none-256.bin", cache(256, {}))
write("bpe_cache/few-300.bin", cache(300, {b"t", b"h", 256, b"e", b"a", b"t", b" ", 257, 258, b" "}))
write("bpe_cache/deep-512.bin", cache(512, {b"a", b"t", b"c", 256, 257, b" ", b"o", b"n", 259, b" ",
                                            b" ", 257, b"t", b"h", 262, b"e", b"m", 256, b"s", 256}))

-- ---- corpora: just over the 4096 bytes a corpus needs
local words = {"the", "cat", "sat", "on", "mat", "dog", "log", "ran", "after", "and", "then"}
local lines, n, x = {}, 0, 7
while n < 4200 do
  local line = {}
  for _ = 1, 9 do
    x = (x * 1103515245 + 12345) % 2147483648
    line[#line + 1] = words[x % #words + 1]
  end
  lines[#lines + 1] = table.concat(line, " ") .. "."
  n = n + #lines[#lines] + 1
end
write("corpus/words.txt", table.concat(lines, "\n") .. "\n")
write("corpus/utf8.txt", string.rep("Größe, café, naïve; 日本語のテキスト。\tΩ≈ç√∫ — «citation»\r\n", 55))

-- ---- task records of the sweep fuzz_sweep_task.c merges (seeds=1 scales=1,
-- a tiny model), as tielab.sweep writes them
local point = {batch = 2, ctx = 8, dim = 8, heads = 2, in_scale = 1, layers = 1, seed = 1, vocab = 256}
local function record(result) return lab.json.encode({task = 0, point = point, result = result}) .. "\n" end
write("sweep_task/good.json", record{val_ppl = 251.73005676269531, ratio_10pct = 1.6080368036219816,
                                     linear_in = 0.24835633273639834, linear_out = 0.26163812099776129})
write("sweep_task/nonfinite.json", record{val_ppl = "inf", ratio_10pct = "nan", linear_in = "-inf", linear_out = 0})
write("sweep_task/wrong.json", record{val_ppl = "high", ratio_10pct = {1}, linear_in = true, linear_out = lab.json.null})

-- ---- journals (journal.h's format): a header with two runs, every kind of
-- entry, text as a string and as {"hex": ...}, and the final record
local function run_json(name, tie)
  return string.format('{"name":"%s","step":0,"options":{"name":"%s","vocab":"256","dim":"16","layers":"1",' ..
                       '"heads":"2","ctx":"8","batch":"2","tie":"%s","init_seed":"1","data_seed":"1"}}', name, name, tie)
end
local function figures(name, step)
  local f = {}
  for _, k in ipairs{"loss", "val_loss", "grad_ratio", "grad_in", "grad_out", "weights"} do
    f[#f + 1] = string.format('"%s":"%a"', k, 1.5 + step / 8)
  end
  return string.format('{"name":"%s","step":%d,%s}', name, step, table.concat(f, ","))
end
local steps = '"runs":[["tied",%d],["untied",%d]]'
write("journal/full.jsonl", table.concat({
  '{"journal":1,"tielab":"0.1.0","argv":["tielab","--journal","j.jsonl","--vocab","256","--lua-mem","512"],' ..
    '"cwd":{"hex":"2f746d702f6c6162"},"runs":[' .. run_json("tied", "tied") .. "," .. run_json("untied", "untied") .. "]}",
  '{"kind":"key","step":3,' .. steps:format(3, 3) .. ',"sel":"tied","lua":"ui.in_scale(\'up\')"}',
  '{"kind":"line","step":5,' .. steps:format(5, 5) .. ',"sel":"tied","lua":"lab.runs[2]:set{lr=2e-3}"}',
  '{"kind":"binding","step":6,' .. steps:format(6, 6) .. ',"sel":"untied","code":120}',
  '{"kind":"script","step":7,' .. steps:format(7, 7) .. ',"sel":"","path":"demo.lua","args":["a=1"],' ..
    '"size":42,"fnv1a64":"cbf29ce484222325"}',
  '{"kind":"wait","step":9,' .. steps:format(9, 9) .. ',"sel":"tied","answer":true}',
  '{"end":true,"step":12,"runs":[' .. figures("tied", 12) .. "," .. figures("untied", 12) .. "]}",
}, "\n") .. "\n")
write("journal/short.jsonl", '{"journal":1,"tielab":"0.1.0","argv":["tielab"],"cwd":"/tmp","runs":[]}\n' ..
                             '{"end":true,"step":0,"runs":[]}\n')

-- ---- released tokenizers (tokenizer.json) for fuzz_hftok.c: byte-level
-- with GPT-2's pre-tokenizer and merges as "a b", Llama 3's Split with
-- merges as pairs and an ignore_merges, SentencePiece-style with byte
-- pieces, and a Unigram vocabulary
local function byte_char(c)   -- GPT-2's bytes_to_unicode
  local kept = (c >= 33 and c <= 126) or (c >= 161 and c <= 172) or c >= 174
  if kept then return utf8.char(c) end
  local moved = 0
  for d = 0, c - 1 do
    if not ((d >= 33 and d <= 126) or (d >= 161 and d <= 172) or d >= 174) then moved = moved + 1 end
  end
  return utf8.char(256 + moved)
end
local function byte_level(pre, merges, model_extra)
  local v = {}
  for c = 0, 255 do v[#v + 1] = string.format("%q:%d", byte_char(c), c):gsub("\\\n", "\\n") end
  local extra = {"he", "ll", "hell", "hello", "\u{120}w", "\u{120}wo", "<|endoftext|>"}
  for i, s in ipairs(extra) do v[#v + 1] = string.format('"%s":%d', s, 255 + i) end
  return '{"added_tokens":[{"id":262,"content":"<|endoftext|>","special":true}],"pre_tokenizer":' .. pre ..
         ',"decoder":{"type":"ByteLevel"},"model":{"type":"BPE",' .. (model_extra or "") .. '"vocab":{' ..
         table.concat(v, ",") .. '},"merges":[' .. merges .. "]}}"
end
write("hftok/gpt2.json", byte_level('{"type":"ByteLevel","add_prefix_space":false}',
                                    '"h e","l l","he ll","hell o","\u{120} w","\u{120}w o"'))
write("hftok/llama3.json", byte_level('{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":' ..
  [["(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|]] ..
  [[\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},"behavior":"Isolated","invert":false},{"type":"ByteLevel","use_regex":false}]}]],
  '["h","e"],["l","l"],["he","ll"],["hell","o"],["\u{120}","w"],["\u{120}w","o"]', '"ignore_merges":true,'))
write("hftok/spm.json", '{"added_tokens":[{"id":0,"content":"<unk>","special":true}],"pre_tokenizer":null,' ..
  '"decoder":{"type":"Sequence","decoders":[{"type":"Replace","pattern":{"String":"\u{2581}"},"content":" "}]},' ..
  '"model":{"type":"BPE","byte_fallback":true,"vocab":{"<unk>":0,"<0x0A>":1,"<0x41>":2,"A":3,"\u{2581}":4,' ..
  '"t":5,"h":6,"th":7,"\u{2581}th":8},"merges":["t h","\u{2581} th"]}}')
write("hftok/unigram.json", '{"pre_tokenizer":{"type":"Metaspace"},"model":{"type":"Unigram","vocab":' ..
  '[["<unk>",0.0],["\u{2581}a",-1.5],["b",-2.0]]}}')
