-- paper.lua -- the measurements of "Weight Tying Biases Token Embeddings
-- Towards the Output Space" (Lopardo et al., arXiv 2603.26663) on a model a
-- laptop trains.
--
-- For each seed, five runs train side by side on identical batches: tied,
-- untied (its own init, so its E_in does not start equal to the tied
-- matrix), and tied with the input-side gradient scaled by 2, 5 and 10.
-- Then one table:
--   * the L2 ratio of the output-side to the input-side gradient of the
--     embedding over the first 100 steps and the first 10% of training,
--     with the input side as the paper measures it (the gradient at the
--     lookup's output, B*T x d) and as rows of E_in (V x d), and the L1
--     ratio late in training;
--   * linear-map and Procrustes cosine of each tied matrix to the untied
--     run's E_in and E_out, each beside its random baseline;
--   * tuned-lens KL(final || lens) per layer position, bits per token;
--   * validation perplexity;
-- and which of the paper's findings held in this run. With several seeds,
-- numbers are means with the spread (sample standard deviation) after '+-'.
--
--   tielab --headless paper.lua [key=value ...]
--     steps=1000 seeds=1 (e.g. seeds=1,2,3) scales=2,5,10
--     vocab=1024 dim=128 layers=4 heads=4 ctx=64 batch=16 lr=0.001 corpus=
--     out=paper    CSV files paper_steps.csv, paper_summary.csv, paper_lens.csv
--                  (out= writes none)
local lab = require "tielab"

local opt = lab.args(arg, {
  steps = 1000, seeds = "1", scales = "2,5,10",
  vocab = 1024, dim = 128, layers = 4, heads = 4, ctx = 64, batch = 16, lr = 1e-3,
  corpus = "", out = "paper",
})

local function numbers(text)
  local t = {}
  for x in tostring(text):gmatch("[^,%s]+") do t[#t + 1] = assert(tonumber(x), "not a number: " .. x) end
  return t
end

local function mean_sd(xs)
  local n, s = #xs, 0
  for _, x in ipairs(xs) do s = s + x end
  local m = n > 0 and s / n or 0 / 0
  if n < 2 then return m, nil end
  local v = 0
  for _, x in ipairs(xs) do v = v + (x - m) ^ 2 end
  return m, math.sqrt(v / (n - 1))
end

local function show(xs, fmt)
  local m, sd = mean_sd(xs)
  fmt = fmt or "%.3f"
  if sd then return string.format(fmt .. "+-" .. fmt, m, sd) end
  return string.format(fmt, m)
end

local seeds, scales = numbers(opt.seeds), numbers(opt.scales)
local early = math.min(100, opt.steps)
local tenth = math.max(1, math.ceil(opt.steps / 10))
local late_from = math.max(early, tenth) + 1

-- The arms: name, tie mode, in_scale.
local arms = {{name = "tied", tie = "tied", in_scale = 1}, {name = "untied", tie = "untied", in_scale = 1}}
for _, k in ipairs(scales) do
  arms[#arms + 1] = {name = string.format("tied_x%g", k), tie = "tied", in_scale = k}
end

local function csv(name)
  if opt.out == "" then return nil end
  return assert(io.open(opt.out .. "_" .. name .. ".csv", "w"))
end
local steps_csv, summary_csv, lens_csv = csv("steps"), csv("summary"), csv("lens")
if steps_csv then
  steps_csv:write("seed,run,step,loss,grad_ratio,grad_ratio_act,grad_ratio_act_l1\n")
  summary_csv:write("seed,run,ratio_act_100,ratio_act_10pct,ratio_100,ratio_10pct,ratio_act_l1_late,",
                    "linear_in,linear_out,linear_in_base,linear_out_base,procrustes_in,procrustes_out,",
                    "procrustes_in_base,procrustes_out_base,val_ppl\n")
  lens_csv:write("seed,run,position,kl\n")
end

-- Running sums of one arm's gradient ratios.
local function ratios()
  return {act100 = 0, act10 = 0, l2_100 = 0, l2_10 = 0, actlate = 0, l1late = 0, n100 = 0, n10 = 0, nlate = 0}
end

local function accumulate(acc, m)
  local s = m.step
  if s <= early then
    acc.act100, acc.l2_100, acc.n100 = acc.act100 + m.grad_ratio_act, acc.l2_100 + m.grad_ratio, acc.n100 + 1
  end
  if s <= tenth then
    acc.act10, acc.l2_10, acc.n10 = acc.act10 + m.grad_ratio_act, acc.l2_10 + m.grad_ratio, acc.n10 + 1
  end
  if s >= late_from then
    acc.actlate, acc.l1late, acc.nlate = acc.actlate + m.grad_ratio_act, acc.l1late + m.grad_ratio_act_l1, acc.nlate + 1
  end
end

-- results[arm name][measure] = {value per seed}
local results = {}
for _, a in ipairs(arms) do results[a.name] = {} end
local function record(arm, key, v)
  local r = results[arm]
  r[key] = r[key] or {}
  r[key][#r[key] + 1] = v
end

local eval_every = math.max(1, math.min(50, opt.steps))
for si, seed in ipairs(seeds) do
  local runs, acc = {}, {}
  for i, a in ipairs(arms) do
    local init = a.tie == "untied" and seed + 1000 or seed
    runs[i] = lab.run{
      name = string.format("%s_s%d", a.name, seed), tie = a.tie, in_scale = a.in_scale,
      init_seed = init, data_seed = seed, vocab = opt.vocab, dim = opt.dim, layers = opt.layers,
      heads = opt.heads, ctx = opt.ctx, batch = opt.batch, lr = opt.lr, corpus = opt.corpus,
      eval_every = eval_every, align_every = 0,
    }
    acc[i] = ratios()
  end
  local hook = lab.on_step(function(step)
    for i, r in ipairs(runs) do
      local m = r:metrics()
      if m.step == step then
        accumulate(acc[i], m)
        if steps_csv then
          steps_csv:write(string.format("%d,%s,%d,%.6g,%.6g,%.6g,%.6g\n", seed, arms[i].name, m.step, m.loss,
                                        m.grad_ratio, m.grad_ratio_act, m.grad_ratio_act_l1))
        end
      end
    end
  end)
  lab.log("seed %d: training %d runs for %d steps", seed, #runs, opt.steps)
  lab.step(opt.steps)
  lab.off(hook)

  local untied = runs[2]
  for i, r in ipairs(runs) do
    local a, s, m = arms[i], acc[i], r:metrics()
    record(a.name, "act100", s.act100 / s.n100)
    record(a.name, "act10", s.act10 / s.n10)
    record(a.name, "l2_100", s.l2_100 / s.n100)
    record(a.name, "l2_10", s.l2_10 / s.n10)
    if s.nlate > 0 then
      record(a.name, "actlate", s.actlate / s.nlate)
      record(a.name, "l1late", s.l1late / s.nlate)
    end
    record(a.name, "val_ppl", m.val_ppl)
    for p, kl in ipairs(m.lens.kl) do
      record(a.name, "kl" .. (p - 1), kl)
      if lens_csv then lens_csv:write(string.format("%d,%s,%d,%.6g\n", seed, a.name, p - 1, kl)) end
    end
    local al = {}
    if a.tie ~= "untied" then
      al = lab.align(r, untied)
      for _, k in ipairs{"linear_in", "linear_out", "procrustes_in", "procrustes_out"} do
        record(a.name, k, al[k])
        record(a.name, k .. "_base", al.baseline[k])
      end
    end
    if summary_csv then
      local function f(x) return x and string.format("%.6g", x) or "" end
      summary_csv:write(string.format("%d,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", seed, a.name,
        f(s.act100 / s.n100), f(s.act10 / s.n10), f(s.l2_100 / s.n100), f(s.l2_10 / s.n10),
        f(s.nlate > 0 and s.l1late / s.nlate or nil), f(al.linear_in), f(al.linear_out),
        f(al.baseline and al.baseline.linear_in), f(al.baseline and al.baseline.linear_out),
        f(al.procrustes_in), f(al.procrustes_out), f(al.baseline and al.baseline.procrustes_in),
        f(al.baseline and al.baseline.procrustes_out), f(m.val_ppl)))
    end
  end
  -- The last seed's runs stay in the lab (its charts show them); the
  -- others make room for the seeds that follow.
  if si < #seeds then
    for _, r in ipairs(runs) do r:remove() end
  end
end
for _, f in ipairs{steps_csv, summary_csv, lens_csv} do f:close() end

-- ------------------------------------------------------------ the table
local function get(arm, key) return results[arm][key] or {} end
local function m(arm, key) return (mean_sd(get(arm, key))) end

print(string.format("tielab paper comparison: %d steps, seeds %s, V=%d d=%d L=%d H=%d T=%d B=%d",
                    opt.steps, opt.seeds, opt.vocab, opt.dim, opt.layers, opt.heads, opt.ctx, opt.batch))
print()
print(string.format("gradient ratio |G_out| / |G_in|, L2 (paper's input side: the lookup's output)"))
print(string.format("  %-10s %16s %16s %16s %16s %16s", "run", "first " .. early, "first 10%",
                    "rows, first " .. early, "rows, first 10%", "L1, after " .. (late_from - 1)))
for _, a in ipairs(arms) do
  print(string.format("  %-10s %16s %16s %16s %16s %16s", a.name, show(get(a.name, "act100")),
                      show(get(a.name, "act10")), show(get(a.name, "l2_100")), show(get(a.name, "l2_10")),
                      #get(a.name, "l1late") > 0 and show(get(a.name, "l1late")) or "-"))
end
print()
print("alignment of each tied matrix with the untied run (mean row cosine; random baseline in brackets)")
print(string.format("  %-10s %22s %22s %22s %22s", "run", "linear vs E_in", "linear vs E_out",
                    "procrustes vs E_in", "procrustes vs E_out"))
for _, a in ipairs(arms) do
  if a.tie ~= "untied" then
    local function cell(k) return show(get(a.name, k)) .. " (" .. show(get(a.name, k .. "_base")) .. ")" end
    print(string.format("  %-10s %22s %22s %22s %22s", a.name, cell("linear_in"), cell("linear_out"),
                        cell("procrustes_in"), cell("procrustes_out")))
  end
end
print()
print("tuned-lens KL(final || lens), bits per token, by layer position (0 = embeddings)")
local header = string.format("  %-10s", "run")
for p = 0, opt.layers do header = header .. string.format(" %12d", p) end
print(header)
for _, a in ipairs(arms) do
  local line = string.format("  %-10s", a.name)
  for p = 0, opt.layers do line = line .. string.format(" %12s", show(get(a.name, "kl" .. p))) end
  print(line)
end
print()
print("validation perplexity")
for _, a in ipairs(arms) do print(string.format("  %-10s %s", a.name, show(get(a.name, "val_ppl"), "%.2f"))) end

-- ------------------------------------------------------------ the findings
local function verdict(held) return held and "held" or "did not hold" end
local mid = math.max(1, opt.layers // 2)
local function mean_kl(arm)
  local s, n = 0, 0
  for p = 1, mid do s, n = s + m(arm, "kl" .. p), n + 1 end
  return s / n
end
local five = results.tied_x5 and "tied_x5" or nil

print()
print("the paper's findings in this run")
print(string.format("  output side dominates early (L2 ratio > 1 over the first %d steps: %.2f): %s", early,
                    m("tied", "act100"), verdict(m("tied", "act100") > 1)))
if #get("tied", "l1late") > 0 then
  print(string.format("  the L2 ratio falls as training goes on (first %d steps %.2f, after step %d %.2f): %s", early,
                      m("tied", "act100"), late_from - 1, m("tied", "actlate"),
                      verdict(m("tied", "actlate") < m("tied", "act100"))))
  print(string.format("  under L1 the input side is larger late in training (ratio %.2f): %s", m("tied", "l1late"),
                      verdict(m("tied", "l1late") < 1)))
end
print(string.format("  the tied matrix aligns more with E_out than E_in (linear %.3f vs %.3f): %s",
                    m("tied", "linear_out"), m("tied", "linear_in"),
                    verdict(m("tied", "linear_out") > m("tied", "linear_in"))))
print(string.format("  ... and above the random baseline (%.3f): %s", m("tied", "linear_out_base"),
                    verdict(m("tied", "linear_out") > m("tied", "linear_out_base"))))
print(string.format("  tuned-lens KL higher when tied in early and middle layers (positions 1-%d: %.3f vs %.3f): %s",
                    mid, mean_kl("tied"), mean_kl("untied"), verdict(mean_kl("tied") > mean_kl("untied"))))
if five then
  local moved = math.abs(m(five, "linear_out") - m("tied", "linear_out"))
  print(string.format("  scaling the input side 5x moves alignment only a little (linear vs E_out %+.3f): %s",
                      m(five, "linear_out") - m("tied", "linear_out"), verdict(moved < 0.1)))
  print(string.format("  ... and makes perplexity worse (%.2f vs %.2f): %s", m(five, "val_ppl"), m("tied", "val_ppl"),
                      verdict(m(five, "val_ppl") > m("tied", "val_ppl"))))
end
if opt.out ~= "" then
  print()
  print(string.format("wrote %s_steps.csv, %s_summary.csv, %s_lens.csv", opt.out, opt.out, opt.out))
end
