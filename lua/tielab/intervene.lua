-- intervene.lua -- the paired comparison every script in interventions/
-- makes: one or more intervention arms against the tied baseline, over
-- seeds, on identical batches, with the table and verdicts of paper.lua.
--
-- For each seed these runs train side by side, every one on the rows of
-- the same batch at every step (r:train_on of tied:batch()):
--   tied         the baseline: one matrix, E_in = E_out
--   untied_ref   untied, its own init (init_seed + 1000): the partner every
--                arm's input matrix is aligned with (lab.align)
--   the arms     each script's own, with its hooks installed by 'setup'
-- At the end each arm is measured as the tied baseline is, and each
-- finding is the arm's value minus the baseline's (or another arm's: an
-- arm's 'against' lists the arms it is compared with, "tied" by default),
-- paired by seed, with its 95% t interval and a verdict on the direction
-- the script claims:
--   bias    (linear_out - linear_in) of its input matrix against the
--           partner: how far it leans toward the output space (the paper's
--           Table 1 measure). A fix claims it leans less: "-".
--   ppl     validation perplexity at the last step. The claim is stated
--           per script (a fix that costs nothing: not "+").
-- One seed gives numbers and no verdicts.
--
--   local intervene = require "tielab.intervene"
--   intervene.compare{title = ..., opt = opt, arms = {
--     {name = "reg", settings = {tie = "untied"}, against = {"tied", "untied"},
--      claims = {bias = "-", untied = {bias = "+"}},   -- per arm compared with
--      setup = function(r, state) r:on_grad(function(g, step) ... end) end,
--      before = function(r, state, step, rows) end,   -- optional, each step
--      after = function(r, state, step) end},         -- optional, each step
--   }}
local lab = require "tielab"
local script = require "tielab.script"
local stats = require "tielab.stats"

local M = {}

-- The arguments every intervention takes, merged into a script's own.
M.defaults = {steps = 300, seeds = "1,2,3", vocab = 256, dim = 64, layers = 2, heads = 4, ctx = 32, batch = 16,
              lr = 1e-3, corpus = ""}

function M.args(argv, own)
  local d = {}
  for k, v in pairs(M.defaults) do d[k] = v end
  for k, v in pairs(own or {}) do d[k] = v end
  return lab.args(argv, d)
end

local function shape(opt, seed)
  return {vocab = opt.vocab, dim = opt.dim, layers = opt.layers, heads = opt.heads, ctx = opt.ctx,
          batch = opt.batch, lr = opt.lr, corpus = opt.corpus, data_seed = seed, init_seed = seed,
          align_every = 0, eval_every = opt.steps}   -- validated exactly at the last step
end

local function measure(r, partner)
  local m, al = r:metrics(), lab.align(r, partner)
  return {ppl = m.val_ppl, val_step = m.val_step, bias = al.linear_out - al.linear_in,
          linear_in = al.linear_in, linear_out = al.linear_out, aux_loss = m.aux_loss}
end

-- One seed: every run trained, measured and removed.
local function run_seed(spec, seed)
  local opt = spec.opt
  local base = shape(opt, seed)
  local tied = lab.run(base, {name = "tied_s" .. seed, tie = "tied"})
  local partner = lab.run(base, {name = "untied_ref_s" .. seed, tie = "untied", init_seed = seed + 1000})
  local arms = {}
  for i, a in ipairs(spec.arms) do
    local settings = {name = a.name .. "_s" .. seed}
    for k, v in pairs(a.settings or {}) do settings[k] = v end
    local r = lab.run(base, settings)
    local state = {opt = opt, seed = seed}
    if a.setup then a.setup(r, state) end
    arms[i] = {spec = a, run = r, state = state}
  end
  for step = 1, opt.steps do
    local rows = tied:batch()
    tied:train_on(rows)
    partner:train_on(rows)
    for _, a in ipairs(arms) do
      if a.spec.before then a.spec.before(a.run, a.state, step, rows) end
      a.run:train_on(rows)
      if a.spec.after then a.spec.after(a.run, a.state, step) end
    end
  end
  local out = {tied = measure(tied, partner)}
  for _, a in ipairs(arms) do out[a.spec.name] = measure(a.run, partner) end
  for _, a in ipairs(arms) do a.run:remove() end
  tied:remove()
  partner:remove()
  return out
end

local function signed(x) return x ~= x and "-" or string.format("%+.4g", x) end

-- Run every seed, print the table and the findings, and return them:
-- {{id, arm, measure, mean, lo, hi, n, verdict}, ...}.
function M.compare(spec)
  local opt = spec.opt
  local seeds = script.numbers(opt.seeds)
  local per_seed = {}
  for i, seed in ipairs(seeds) do
    io.stderr:write(string.format("%s: seed %d (%d/%d)\n", spec.title, seed, i, #seeds))
    per_seed[i] = run_seed(spec, seed)
  end
  local function values(arm, key)
    local xs = {}
    for i = 1, #per_seed do xs[i] = per_seed[i][arm][key] end
    return xs
  end
  print(string.format("tielab %s: %d steps, seeds %s, V=%d d=%d L=%d H=%d T=%d B=%d", spec.title, opt.steps,
                      opt.seeds, opt.vocab, opt.dim, opt.layers, opt.heads, opt.ctx, opt.batch))
  print("each arm's input matrix aligned with an untied partner; means over seeds")
  print(string.format("  %-16s %9s %9s %9s %9s", "arm", "val ppl", "lin in", "lin out", "bias"))
  local names = {"tied"}
  for _, a in ipairs(spec.arms) do names[#names + 1] = a.name end
  for _, name in ipairs(names) do
    print(string.format("  %-16s %9.3f %9.4f %9.4f %+9.4f", name, stats.mean(values(name, "ppl")),
                        stats.mean(values(name, "linear_in")), stats.mean(values(name, "linear_out")),
                        stats.mean(values(name, "bias"))))
  end
  print("paired difference of two arms: mean and 95% t interval; verdict on the claimed direction")
  print(string.format("  %-30s %9s %21s %2s  %s", "finding", "mean", "95% interval", "n", "verdict"))
  local found = {}
  for _, a in ipairs(spec.arms) do
    for _, other in ipairs(a.against or {"tied"}) do
      local claims = other == "tied" and (a.claims or {}) or ((a.claims or {})[other] or {})
      for _, key in ipairs({"bias", "ppl"}) do
        local dir = claims[key] or (key == "bias" and "-" or "+")
        local d = stats.paired(values(a.name, key), values(other, key))
        local verdict = stats.verdict(d.lo, d.hi, dir)
        local ci = d.lo == d.lo and string.format("[%s, %s]", signed(d.lo), signed(d.hi)) or "-"
        local id = a.name .. (other == "tied" and "" or "_vs_" .. other) .. "_" .. key
        print(string.format("  %-30s %9s %21s %2d  %s", id, signed(d.mean), ci, d.n, verdict))
        print(string.format("    %s - %s: %s, claim %s 0", a.name, other,
                            key == "bias" and "lean toward E_out" or "validation perplexity", dir == "+" and ">" or "<"))
        found[#found + 1] = {id = id, arm = a.name, against = other, measure = key, mean = d.mean, lo = d.lo,
                             hi = d.hi, n = d.n, verdict = verdict}
      end
    end
  end
  for _, f in ipairs(found) do
    print(string.format("finding %s measure=%s diff=%+.6g n=%d verdict=%s", f.id, f.measure, f.mean, f.n,
                        (f.verdict:gsub(" ", "_"))))
  end
  return found
end

return M
