-- balance.lua -- an automatic balance of the two gradients of a tied
-- embedding, another of the paper's open questions, against the clip rule
-- of the paper's code, all arms on identical batches:
--
--   tied       no control
--   steer      a controller sets in_scale every step so that the applied ratio
--              (out_scale*|G_out|) / (in_scale*|G_in|) approaches 'target':
--              in_scale is multiplied by (applied/target)^gain, in [1e-2, 1e3]
--   clip_doc   what the paper code's documentation says its clip does: only the
--              output-side gradient is clipped to 'fraction' of the recent
--              input-side norm (an average over about 'memory' steps), done as
--              out_scale = min(1, fraction*avg|G_in| / |G_out|); G_in is untouched.
--              avg is a running mean with weight 1/memory of |G_in| (V x d rows);
--              the documentation's own numbers are 0.1 of the plain mean of the
--              last 5 lookup-output norms (fraction=0.1 memory=5 comes close)
--   clip_code  what the paper's code does (below): the whole backward pass is
--              scaled, G_in included, as grad_scale
--   untied     the partner the tied matrices are aligned with
--
-- clip_code, read from the paper's OLMo/olmo/model.py. A hook on the logits
-- tensor compares the norm of the output projection's weight gradient (the
-- logits gradient times the final hidden states: G_out, V x d; the
-- documentation's sketch says the logits gradient's own norm, the code does
-- not) with threshold = code_fraction (0.1) x the mean of the last
-- code_window (5) recorded lookup-output gradient norms; when it exceeds the
-- threshold, the hook multiplies the logits gradient by threshold/|G_out|.
-- Everything the backward pass computes flows from the logits gradient, so
-- every gradient of the model, G_in and the lookup output's included, is
-- multiplied by that factor: in tielab, grad_scale = threshold/|G_out| for
-- that step. The lookup-output norm is recorded by a backward hook on the
-- embedding module after the scaling, so the history holds the scaled norms
-- (|grad_in_act| x grad_scale). Before any norm is recorded (the first
-- step) nothing is clipped; with 1 to 4 recorded, the mean is over those.
-- tielab does exactly this, with |G_out| and |grad_in_act| measured before
-- any scaling as the paper's hooks see them. One departure: their trainer
-- calls backward once per micro-batch (their configs split 512 sequences
-- into micro-batches of 8) and each appends a norm, so their window of 5 is
-- 5 micro-batches; tielab has none, and its window is 5 steps. What follows from the rule: grad_scale
-- cancels in the applied ratio, so the ratio it means to cap is unchanged,
-- while each recorded norm is about threshold/ratio, so the threshold
-- shrinks step after step and grad_scale falls geometrically (where it
-- would underflow it is held at the smallest normal double, since
-- grad_scale must be > 0; a float gradient times it is 0 either way).
-- The configurations kept with the paper's experiments all have the rule
-- switched off (clip_output_proj_to_embedding_grad_norm: false).
--
-- The hook acts inside the step, on that step's batch and weights, so the
-- clip_code arm is paused (lab.step leaves it alone) and driven by hand in
-- lockstep with the others: r:batch() gives the rows the step trains on,
-- r:evaluate(rows) its |G_out| at the current weights, r:set{grad_scale=}
-- the factor, r:train_on(rows) the step. That costs the arm one extra
-- forward and backward pass per step.
--
-- Scales set after step k apply from step k+1 (the metrics of a step show
-- the scales it used); clip_code's grad_scale applies to the step it was
-- computed for. The table gives, over the second half of training, the
-- mean applied ratio and the mean scales, then validation perplexity and
-- the linear-map and Procrustes cosine to the partner's E_in and E_out;
-- with several seeds, each figure is the mean over seeds.
--
--   tielab --headless balance.lua [key=value ...]
--     steps=600 seeds=1 (e.g. seeds=1,2,3) target=1 gain=0.5 fraction=1 memory=10
--     code_fraction=0.1 code_window=5
--     vocab=1024 dim=128 layers=4 heads=4 ctx=64 batch=16 lr=0.001 corpus=
--     out=balance   CSV files balance_steps.csv (every arm, every step) and
--                   balance_summary.csv (the table); out= writes none
local lab = require "tielab"
local script = require "tielab.script"

local opt = lab.args(arg, {
  steps = 600, seeds = "1", target = 1, gain = 0.5, fraction = 1, memory = 10,
  code_fraction = 0.1, code_window = 5,
  vocab = 1024, dim = 128, layers = 4, heads = 4, ctx = 64, batch = 16, lr = 1e-3, corpus = "",
  out = "balance",
})

local numbers = script.numbers

local seeds = numbers(opt.seeds)
local from = opt.steps // 2 + 1
local ARMS = {"tied", "steer", "clip_doc", "clip_code", "untied"}
local SMALLEST_SCALE = 2.2250738585072014e-308   -- the smallest normal double

local shape = {vocab = opt.vocab, dim = opt.dim, layers = opt.layers, heads = opt.heads, ctx = opt.ctx,
               batch = opt.batch, lr = opt.lr, corpus = opt.corpus, align_every = 0,
               eval_every = math.max(1, math.min(50, opt.steps))}

local function csv(name, header) return script.csv(opt.out, name, header) end
local steps_csv = csv("steps", "seed,arm,step,loss,lr,grad_in,grad_in_act,grad_out,in_scale,out_scale,grad_scale,"
                               .. "applied_ratio")

local function applied(m) return (m.out_scale * m.grad_out) / (m.in_scale * m.grad_in) end
local function mean(xs)
  local s = 0
  for _, x in ipairs(xs) do s = s + x end
  return #xs > 0 and s / #xs or 0 / 0
end

-- steer: in_scale after this step, from the applied ratio of this step.
local function steer_rule(m)
  local k = m.in_scale * (applied(m) / opt.target) ^ opt.gain
  return math.min(1e3, math.max(1e-2, k))
end

-- clip_doc: a running average of |G_in|; out_scale for the next step.
local function clip_doc_rule(state, m)
  local a = 1 / math.max(1, opt.memory)
  state.avg_in = state.avg_in and (1 - a) * state.avg_in + a * m.grad_in or m.grad_in
  return math.min(1, opt.fraction * state.avg_in / m.grad_out)
end

-- clip_code: grad_scale for this step from this step's |G_out| and the
-- recorded (scaled) lookup-output norms of the steps before.
local function clip_code_rule(history, grad_out)
  if #history == 0 then return 1 end
  local threshold = opt.code_fraction * mean(history)
  if grad_out > threshold and grad_out > 0 then return math.max(SMALLEST_SCALE, threshold / grad_out) end
  return 1
end

local function record_norm(history, norm)
  history[#history + 1] = norm
  if #history > opt.code_window then table.remove(history, 1) end
end

local function grad_scale_of(r, m) return m.grad_scale or r:options().grad_scale end

-- per arm: lists over seeds of each summary figure
local results = {}
for _, a in ipairs(ARMS) do results[a] = {} end
local function keep(arm, key, v)
  local t = results[arm]
  t[key] = t[key] or {}
  t[key][#t[key] + 1] = v
end

for _, seed in ipairs(seeds) do
  local runs = {}
  for _, a in ipairs(ARMS) do
    runs[a] = lab.run(shape, {name = string.format("%s_s%d", a, seed), tie = a == "untied" and "untied" or "tied",
                              data_seed = seed, init_seed = a == "untied" and seed + 1000 or seed})
  end
  local code = runs.clip_code
  code:pause()
  local sums, doc_state, history = {}, {}, {}
  for _, a in ipairs(ARMS) do sums[a] = {ratio = 0, in_scale = 0, out_scale = 0, grad_scale = 0, n = 0} end

  lab.log("balance, seed %d: %d arms for %d steps", seed, #ARMS, opt.steps)
  for _ = 1, opt.steps do
    local rows = code:batch()
    local scale = clip_code_rule(history, code:evaluate(rows).grad_out)
    code:set{grad_scale = scale}
    lab.step(1)
    local mc = code:train_on(rows)
    record_norm(history, mc.grad_in_act * scale)

    for _, a in ipairs(ARMS) do
      local r = runs[a]
      local m = r:metrics()
      local gs = a == "clip_code" and scale or grad_scale_of(r, m)
      if steps_csv then
        steps_csv:write(string.format("%d,%s,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n", seed, a, m.step,
                                      m.loss, m.lr, m.grad_in, m.grad_in_act, m.grad_out, m.in_scale, m.out_scale,
                                      gs, applied(m)))
      end
      if m.step >= from then
        local s = sums[a]
        s.ratio, s.in_scale, s.out_scale = s.ratio + applied(m), s.in_scale + m.in_scale, s.out_scale + m.out_scale
        s.grad_scale, s.n = s.grad_scale + gs, s.n + 1
      end
    end
    runs.steer:set{in_scale = steer_rule(runs.steer:metrics())}
    runs.clip_doc:set{out_scale = clip_doc_rule(doc_state, runs.clip_doc:metrics())}
  end

  for _, a in ipairs(ARMS) do
    local r, s = runs[a], sums[a]
    local n = math.max(1, s.n)
    keep(a, "applied_ratio", s.ratio / n)
    keep(a, "in_scale", s.in_scale / n)
    keep(a, "out_scale", s.out_scale / n)
    keep(a, "grad_scale", s.grad_scale / n)
    keep(a, "val_ppl", r:evaluate_val().ppl)   -- at the last step, whatever eval_every
    if a ~= "untied" then
      local al = lab.align(r, runs.untied)
      for _, k in ipairs{"linear_in", "linear_out", "procrustes_in", "procrustes_out"} do keep(a, k, al[k]) end
    end
  end
  keep("clip_code", "last_grad_scale", code:options().grad_scale)
  for _, a in ipairs(ARMS) do runs[a]:remove() end
end
if steps_csv then steps_csv:close() end

local COLUMNS = {"applied_ratio", "in_scale", "out_scale", "grad_scale", "val_ppl", "linear_in", "linear_out",
                 "procrustes_in", "procrustes_out"}
local function figure(arm, key) return results[arm][key] and mean(results[arm][key]) or nil end

local summary_csv = csv("summary", "arm," .. table.concat(COLUMNS, ","))
if summary_csv then
  for _, a in ipairs(ARMS) do
    local cells = {a}
    for _, k in ipairs(COLUMNS) do
      local v = figure(a, k)
      cells[#cells + 1] = v and string.format("%.6g", v) or ""
    end
    summary_csv:write(table.concat(cells, ","), "\n")
  end
  summary_csv:close()
end

print(string.format("balance: %d steps, seeds %s, target %g (steer), fraction %g (clip_doc), %g x mean of %d "
                    .. "(clip_code), V=%d d=%d L=%d", opt.steps, opt.seeds, opt.target, opt.fraction,
                    opt.code_fraction, opt.code_window, opt.vocab, opt.dim, opt.layers))
print(string.format("  %-9s %14s %10s %10s %11s %9s %9s %9s %9s %9s", "run", "applied ratio", "in_scale", "out_scale",
                    "grad_scale", "val ppl", "lin E_in", "lin E_out", "pro E_in", "pro E_out"))
for _, a in ipairs(ARMS) do
  local function cell(k, fmt)
    local v = figure(a, k)
    return v and string.format(fmt, v) or "-"
  end
  print(string.format("  %-9s %14s %10s %10s %11s %9s %9s %9s %9s %9s", a, cell("applied_ratio", "%.3f"),
                      cell("in_scale", "%.3f"), cell("out_scale", "%.3f"), cell("grad_scale", "%.3g"),
                      cell("val_ppl", "%.2f"), cell("linear_in", "%.3f"), cell("linear_out", "%.3f"),
                      cell("procrustes_in", "%.3f"), cell("procrustes_out", "%.3f")))
end
print(string.format("(means over steps %d-%d; applied ratio = out_scale*|G_out| / (in_scale*|G_in|); clip_code's "
                    .. "grad_scale at the last step: %.3g)", from, opt.steps, figure("clip_code", "last_grad_scale")))
if opt.out ~= "" then print(string.format("wrote %s_steps.csv, %s_summary.csv", opt.out, opt.out)) end
