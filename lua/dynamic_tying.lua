-- dynamic_tying.lua -- one of the paper's open questions: tie and untie
-- during training. Runs on identical batches: a tied control, an untied
-- control, and one run per merge rule that trains tied, unties at step
-- 'untie_at' (E_out gets a copy of the shared matrix and its moments) and
-- ties again at 'retie_at', keeping E_in ('in'), E_out ('out') or their
-- mean ('mean'). For every toggle it prints the jump in loss across it
-- beside the step-to-step noise before it (the standard deviation of the
-- last 'window' loss differences); at the end, validation perplexity and
-- how the tied matrix aligns with the untied control's E_in and E_out.
--
--   tielab --headless dynamic_tying.lua [key=value ...]
--     steps=600 untie_at=200 retie_at=400 merges=in,out,mean window=20
--     vocab=1024 dim=128 layers=4 heads=4 ctx=64 batch=16 lr=0.001 seed=1 corpus=
local lab = require "tielab"

local opt = lab.args(arg, {
  steps = 600, untie_at = 200, retie_at = 400, merges = "in,out,mean", window = 20,
  vocab = 1024, dim = 128, layers = 4, heads = 4, ctx = 64, batch = 16, lr = 1e-3, seed = 1, corpus = "",
})
assert(opt.untie_at < opt.retie_at and opt.retie_at < opt.steps, "need untie_at < retie_at < steps")

local shape = {vocab = opt.vocab, dim = opt.dim, layers = opt.layers, heads = opt.heads, ctx = opt.ctx,
               batch = opt.batch, lr = opt.lr, corpus = opt.corpus, data_seed = opt.seed, init_seed = opt.seed,
               align_every = 0, eval_every = math.max(1, math.min(50, opt.steps))}
local function run(extra) return lab.run(shape, extra) end

local tied = run{name = "tied", tie = "tied"}
local untied = run{name = "untied", tie = "untied", init_seed = opt.seed + 1000}
local variants = {}
for rule in opt.merges:gmatch("[^,%s]+") do
  variants[#variants + 1] = {rule = rule, run = run{name = "retie_" .. rule, tie = "tied", tie_merge = rule}}
end

-- The last 'window' losses of each run, for the noise.
local recent = {}
local function remember(r, loss)
  local q = recent[r] or {}
  recent[r] = q
  q[#q + 1] = loss
  if #q > opt.window + 1 then table.remove(q, 1) end
end
local function noise(r)
  local q, d = recent[r] or {}, {}
  for i = 2, #q do d[#d + 1] = q[i] - q[i - 1] end
  if #d < 2 then return 0 / 0 end
  local m = 0
  for _, x in ipairs(d) do m = m + x end
  m = m / #d
  local v = 0
  for _, x in ipairs(d) do v = v + (x - m) ^ 2 end
  return math.sqrt(v / (#d - 1))
end

local toggles = {}   -- {rule, what, step, before, after, noise}
local pending = {}
for step = 1, opt.steps do
  lab.step(1)
  for _, v in ipairs(variants) do
    local m = v.run:metrics()
    if pending[v] then
      pending[v].after = m.loss
      toggles[#toggles + 1] = pending[v]
      pending[v] = nil
    end
    if step == opt.untie_at or step == opt.retie_at then
      local what = step == opt.untie_at and "untie" or "retie (" .. v.rule .. ")"
      pending[v] = {rule = v.rule, what = what, step = step, before = m.loss, noise = noise(v.run)}
      if step == opt.untie_at then v.run:set{tie = "untied"} else v.run:set{tie = "tied"} end
    end
    remember(v.run, m.loss)
  end
end

print(string.format("dynamic tying: %d steps, untie at %d, retie at %d, V=%d d=%d L=%d, seed %d", opt.steps,
                    opt.untie_at, opt.retie_at, opt.vocab, opt.dim, opt.layers, opt.seed))
print()
print(string.format("  %-12s %-14s %6s %10s %10s %10s %10s", "run", "toggle", "step", "loss", "next", "jump",
                    "noise"))
for _, t in ipairs(toggles) do
  print(string.format("  %-12s %-14s %6d %10.4f %10.4f %+10.4f %10.4f", "retie_" .. t.rule, t.what, t.step, t.before,
                      t.after, t.after - t.before, t.noise))
end
print()
print(string.format("  %-12s %10s %10s %14s %14s", "run", "tie", "val ppl", "linear vs E_in", "linear vs E_out"))
local all = {tied}
for _, v in ipairs(variants) do all[#all + 1] = v.run end
for _, r in ipairs(all) do
  local m, al = r:metrics(), lab.align(r, untied)
  -- at the last step, whatever eval_every
  print(string.format("  %-12s %10s %10.2f %14.3f %14.3f", r.name, m.tie, r:evaluate_val().ppl, al.linear_in,
                      al.linear_out))
end
print(string.format("  %-12s %10s %10.2f", "untied", "untied", untied:evaluate_val().ppl))
