-- shot.lua -- the scenes of the README's pictures, set up by
-- scripts/screenshots: a tied and an untied run trained side by side, then
-- each view asked for in turn, its caption computed from the runs. Before
-- each picture the file READY.N is written (N from 1); the next view waits
-- until the picture is taken and READY.N.done exists.
--
--   tielab scripts/shot.lua steps=3000 views=lab,ratio,lens ready=READY
local lab = require "tielab"
-- The findings' own definitions (lua/tielab/findings.lua), from the source
-- tree scripts/screenshots runs in.
package.path = "./lua/?.lua;" .. package.path
local findings = require "tielab.findings"

local opt = lab.args(arg, {steps = 3000, views = "lab", ready = "", vocab = 512, dim = 64, layers = 3, heads = 4,
                           ctx = 32, batch = 8, corpus = ""})
local shape = {vocab = opt.vocab, dim = opt.dim, layers = opt.layers, heads = opt.heads, ctx = opt.ctx,
               batch = opt.batch, corpus = opt.corpus, data_seed = 1, align_every = 100, lens_every = 100}
local tied = lab.run(shape, {name = "tied", tie = "tied", init_seed = 1})
local untied = lab.run(shape, {name = "untied", tie = "untied", init_seed = 2})
lab.step(opt.steps)

-- The mean of a run's series over its steps up to 'last'.
local function mean_to(r, series, last)
  local h, sum, n = r:history(series), 0, 0
  for i = 1, h.n do
    local v = h.values[i]
    if h.steps[i] <= last and v == v then sum, n = sum + v, n + 1 end
  end
  return n > 0 and sum / n or 0 / 0
end

-- The newest value of a run's series.
local function newest(r, series)
  local h = r:history(series)
  return h.n > 0 and h.values[h.n] or 0 / 0
end

-- Each view's caption, from the data its chart shows.
local captions = {
  lab = function() return nil end,
  ratio = function()
    local early = findings.early_window(opt.steps)
    return string.format("Steps 1-%d: out/in %s tied, %s untied", early,
                         findings.ratio_text(mean_to(tied, "grad_ratio", early)),
                         findings.ratio_text(mean_to(untied, "grad_ratio", early)))
  end,
  lens = function()
    return string.format("Layer 0 lens KL: tied %.2g bits, untied %.2g", newest(tied, "lens.kl.0"),
                         newest(untied, "lens.kl.0"))
  end,
}

local function exists(path)
  local f = io.open(path)
  if f then f:close() end
  return f ~= nil
end

local n = 0
for view in opt.views:gmatch("[^,]+") do
  n = n + 1
  local caption = assert(captions[view], "views: lab, ratio or lens")()
  lab.caption(caption)
  if ui then ui.present(view ~= "lab" and view or false) end
  lab.sleep(5.5)   -- the message line's note on the view has gone
  if opt.ready ~= "" then
    assert(io.open(opt.ready .. "." .. n, "w")):close()
    while not exists(opt.ready .. "." .. n .. ".done") do lab.sleep(0.2) end
  end
end
