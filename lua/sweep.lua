-- sweep.lua -- the paper's intervention as a sweep: tied runs with the
-- input-side gradient scaled by each factor in 'scales', over several seeds,
-- each seed's runs on identical batches beside one untied partner (with its
-- own init). For each scale: mean and spread (sample standard deviation,
-- after '+-') over seeds of the validation perplexity, the L2 gradient ratio
-- over the first 10% of training (paper's input side), and the linear-map
-- cosine of the tied matrix to the partner's E_in and E_out.
--
--   tielab --headless sweep.lua [key=value ...]
--     scales=1,2,5,10 seeds=1,2,3 steps=500
--     vocab=1024 dim=128 layers=4 heads=4 ctx=64 batch=16 lr=0.001 corpus=
--     out=sweep.csv   one line per seed and scale (out= writes none)
local lab = require "tielab"
local script = require "tielab.script"

local opt = lab.args(arg, {
  scales = "1,2,5,10", seeds = "1,2,3", steps = 500,
  vocab = 1024, dim = 128, layers = 4, heads = 4, ctx = 64, batch = 16, lr = 1e-3, corpus = "",
  out = "sweep.csv",
})

local numbers = script.numbers

local function mean_sd(xs)
  local n, s = #xs, 0
  for _, x in ipairs(xs) do s = s + x end
  local m = s / n
  local v = 0
  for _, x in ipairs(xs) do v = v + (x - m) ^ 2 end
  return m, n > 1 and math.sqrt(v / (n - 1)) or 0
end

local scales, seeds = numbers(opt.scales), numbers(opt.seeds)
local tenth = math.max(1, math.ceil(opt.steps / 10))
local shape = {vocab = opt.vocab, dim = opt.dim, layers = opt.layers, heads = opt.heads, ctx = opt.ctx,
               batch = opt.batch, lr = opt.lr, corpus = opt.corpus, align_every = 0,
               eval_every = math.max(1, math.min(50, opt.steps))}

local out = opt.out ~= "" and assert(io.open(opt.out, "w")) or nil
if out then out:write("seed,in_scale,val_ppl,ratio_10pct,linear_in,linear_out\n") end

local by_scale = {}
for i = 1, #scales do by_scale[i] = {ppl = {}, ratio = {}, lin_in = {}, lin_out = {}} end

-- How far the sweep has come: every step of every run (the scales and a partner a seed).
local progress = lab.progress(#seeds * (#scales + 1) * opt.steps)
for si, seed in ipairs(seeds) do
  local label = string.format("seed %d (%d/%d)", seed, si, #seeds)
  local partner = lab.run(shape, {name = "untied_s" .. seed, tie = "untied", data_seed = seed, init_seed = seed + 1000})
  local runs, sums = {}, {}
  for i, k in ipairs(scales) do
    runs[i] = lab.run(shape, {name = string.format("x%g_s%d", k, seed), in_scale = k, seed = seed})
    sums[i] = 0
  end
  local hook = lab.on_step(function(step)
    progress:step(#runs + 1, label)
    if step > tenth then return end
    for i, r in ipairs(runs) do sums[i] = sums[i] + r:metrics().grad_ratio_act end
  end)
  lab.log("seed %d: %d scales for %d steps", seed, #scales, opt.steps)
  lab.step(opt.steps)
  lab.off(hook)
  for i, r in ipairs(runs) do
    local m, al = r:metrics(), lab.align(r, partner)
    local b = by_scale[i]
    b.ppl[#b.ppl + 1] = m.val_ppl
    b.ratio[#b.ratio + 1] = sums[i] / math.min(tenth, opt.steps)
    b.lin_in[#b.lin_in + 1] = al.linear_in
    b.lin_out[#b.lin_out + 1] = al.linear_out
    if out then
      out:write(string.format("%d,%g,%.6g,%.6g,%.6g,%.6g\n", seed, scales[i], m.val_ppl, b.ratio[#b.ratio],
                              al.linear_in, al.linear_out))
    end
    r:remove()
  end
  partner:remove()
end
progress:done()
if out then out:close() end

print(string.format("in_scale sweep: %d steps, seeds %s, V=%d d=%d L=%d", opt.steps, opt.seeds, opt.vocab, opt.dim,
                    opt.layers))
print(string.format("%9s %18s %18s %18s %18s", "in_scale", "val perplexity", "ratio, first 10%", "linear vs E_in",
                    "linear vs E_out"))
for i, k in ipairs(scales) do
  local b = by_scale[i]
  local function cell(xs, fmt) return string.format(fmt .. "+-" .. fmt, mean_sd(xs)) end
  print(string.format("%9g %18s %18s %18s %18s", k, cell(b.ppl, "%.2f"), cell(b.ratio, "%.2f"),
                      cell(b.lin_in, "%.3f"), cell(b.lin_out, "%.3f")))
end
