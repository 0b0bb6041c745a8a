#!/bin/sh
# test_lensfit_progress.sh -- r:fit_lens{progress = p} headless: the
# script's progress line moves while the fit runs (its plain lines, stderr
# not a terminal, come at each tenth of the total), and the fit's units are
# all counted once it returns.
tap_name=lensfit_progress; . "${srcdir:-.}/tests/lib/tap.sh"

cat >"$tmp/fit.lua" <<'LUA'
local r = lab.run{vocab = 256, dim = 32, layers = 2, heads = 2, ctx = 32, batch = 4, eval_every = 0, lens_every = 0}
r:step(2)
local p = lab.progress(100)
io.stderr:write("fit starts\n")
local f = r:fit_lens{steps = 40, tokens_per_step = 64, patience = 1000, progress = p, units = 80}
io.stderr:write("fit ends\n")
print(("count %d %d"):format(p.count, f.steps))
p:step(20)
p:done()
LUA
"$tielab" --headless "$tmp/fit.lua" >"$tmp/out" 2>"$tmp/err"
ok $? "the script runs"
grep -q '^count 80 40$' "$tmp/out"
ok $? "the fit added its 80 units to p: $(cat "$tmp/out")"
# The lines between the fit's start and its end: the count moving.
during=$(sed -n '/^fit starts/,/^fit ends/p' "$tmp/err" | grep -c '^tielab: [0-9]*/100 ')
ok $((during < 4)) "the progress line moved during the fit ($during lines at tenths of the total)"
sed -n '/^fit starts/,/^fit ends/p' "$tmp/err" | grep -q '^tielab: 40/100 '
ok $? "through the middle of its share (40/100)"
tap_done
