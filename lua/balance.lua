-- balance.lua -- an automatic balance of the two gradients of a tied
-- embedding, another of the paper's open questions, compared on identical
-- batches with the rule hidden in the paper's code:
--
--   tied    no control
--   steer   a controller sets in_scale every step so that the applied ratio
--           (out_scale*|G_out|) / (in_scale*|G_in|) approaches 'target':
--           in_scale is multiplied by (applied/target)^gain, in [1e-2, 1e3]
--   clip    the paper code's rule: the output-side gradient is clipped to
--           'fraction' of the recent input-side norm (an average over about
--           'memory' steps), done as out_scale = min(1, fraction*avg|G_in| / |G_out|)
--   untied  the partner the tied matrices are aligned with
--
-- Scales set after step k apply from step k+1 (the metrics of a step show
-- the scales it used). The table gives, over the second half of training,
-- the mean applied ratio and the mean scales, then validation perplexity
-- and the linear-map cosine to the partner's E_in and E_out.
--
--   tielab --headless balance.lua [key=value ...]
--     steps=600 target=1 gain=0.5 fraction=1 memory=10
--     vocab=1024 dim=128 layers=4 heads=4 ctx=64 batch=16 lr=0.001 seed=1 corpus=
local lab = require "tielab"

local opt = lab.args(arg, {
  steps = 600, target = 1, gain = 0.5, fraction = 1, memory = 10,
  vocab = 1024, dim = 128, layers = 4, heads = 4, ctx = 64, batch = 16, lr = 1e-3, seed = 1, corpus = "",
})

local shape = {vocab = opt.vocab, dim = opt.dim, layers = opt.layers, heads = opt.heads, ctx = opt.ctx,
               batch = opt.batch, lr = opt.lr, corpus = opt.corpus, data_seed = opt.seed, init_seed = opt.seed,
               align_every = 0, eval_every = math.max(1, math.min(50, opt.steps))}
local function run(extra) return lab.run(shape, extra) end

local tied = run{name = "tied"}
local steer = run{name = "steer"}
local clip = run{name = "clip"}
local untied = run{name = "untied", tie = "untied", init_seed = opt.seed + 1000}
local arms = {tied, steer, clip}

local function applied(m) return (m.out_scale * m.grad_out) / (m.in_scale * m.grad_in) end

local avg_in = nil   -- the clip rule's running average of |G_in|
local from = opt.steps // 2 + 1
local sums = {}
for _, r in ipairs(arms) do sums[r] = {ratio = 0, in_scale = 0, out_scale = 0, n = 0} end

lab.on_step(function(step)
  for _, r in ipairs(arms) do
    local m = r:metrics()
    if step >= from then
      local s = sums[r]
      s.ratio, s.in_scale, s.out_scale, s.n = s.ratio + applied(m), s.in_scale + m.in_scale,
                                                s.out_scale + m.out_scale, s.n + 1
    end
  end

  local m = steer:metrics()
  local k = m.in_scale * (applied(m) / opt.target) ^ opt.gain
  steer:set{in_scale = math.min(1e3, math.max(1e-2, k))}

  m = clip:metrics()
  local a = 1 / math.max(1, opt.memory)
  avg_in = avg_in and (1 - a) * avg_in + a * m.grad_in or m.grad_in
  clip:set{out_scale = math.min(1, opt.fraction * avg_in / m.grad_out)}
end)

lab.log("balance: %d steps", opt.steps)
lab.step(opt.steps)

print(string.format("balance: %d steps, target %g (steer), fraction %g (clip), V=%d d=%d L=%d, seed %d", opt.steps,
                    opt.target, opt.fraction, opt.vocab, opt.dim, opt.layers, opt.seed))
print(string.format("  %-8s %16s %12s %12s %10s %14s %14s", "run", "applied ratio", "in_scale", "out_scale",
                    "val ppl", "linear vs E_in", "linear vs E_out"))
for _, r in ipairs(arms) do
  local s, m, al = sums[r], r:metrics(), lab.align(r, untied)
  local n = math.max(1, s.n)
  print(string.format("  %-8s %16.3f %12.3f %12.3f %10.2f %14.3f %14.3f", r.name, s.ratio / n, s.in_scale / n,
                      s.out_scale / n, m.val_ppl, al.linear_in, al.linear_out))
end
print(string.format("  %-8s %16s %12s %12s %10.2f", "untied", "-", "-", "-", untied:metrics().val_ppl))
print(string.format("(means over steps %d-%d; applied ratio = out_scale*|G_out| / (in_scale*|G_in|))", from, opt.steps))
