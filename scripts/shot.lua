-- shot.lua -- the scene of a README picture, set up by scripts/screenshots:
-- a tied and an untied run trained side by side, then the view asked for,
-- then a file named by ready= is written so the picture can be taken.
--
--   tielab scripts/shot.lua steps=3000 view=lab|ratio|align ready=FILE
local lab = require "tielab"

local opt = lab.args(arg, {steps = 3000, view = "lab", ready = "", vocab = 512, dim = 64, layers = 3, heads = 4,
                           ctx = 32, batch = 8, corpus = ""})
local shape = {vocab = opt.vocab, dim = opt.dim, layers = opt.layers, heads = opt.heads, ctx = opt.ctx,
               batch = opt.batch, corpus = opt.corpus, data_seed = 1, align_every = 100, lens_every = 100}
lab.run(shape, {name = "tied", tie = "tied", init_seed = 1})
lab.run(shape, {name = "untied", tie = "untied", init_seed = 2})
if opt.view ~= "lab" then
  lab.caption("Tied: the output side dominates")
  ui.present(opt.view)
end
lab.step(opt.steps)
if opt.ready ~= "" then assert(io.open(opt.ready, "w")):close() end
