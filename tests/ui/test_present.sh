#!/bin/sh
# test_present.sh -- the present view and the speaker's controls, in tmux
# by tests/lib/tmux.sh: a private server, an 80x24 pane running the lab with a
# tiny model, keys in with send-keys, the screen read back with
# capture-pane, every wait a poll with a deadline. Big digits are read back
# as text by tests/ui/bigdigits.lua and compared with what the lab's Lua API
# says of the same run, with training paused so both see the same step.
# Prints TAP.

: "${top_builddir:=.}" "${top_srcdir:=.}" "${srcdir:=$top_srcdir}"
tmux_name=present; . "$top_srcdir/tests/lib/tmux.sh"
DIGITS=$srcdir/tests/ui/bigdigits.lua

# lua CHUNK: run a line in the REPL and go back to the keys (Ctrl-D on
# the empty line: an Escape could merge with the next key into Alt+key).
lua() {
  key :
  $T send-keys -t t -l "$1"
  key Enter C-d
}
# lua_out CHUNK: the text CHUNK returns, written to a file by the lab.
lua_out() {
  rm -f "$WORK/out"
  lua "local f = io.open('$WORK/out.tmp', 'w') f:write(tostring($1)) f:close() os.rename('$WORK/out.tmp', '$WORK/out')"
  i=0
  while [ ! -e "$WORK/out" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  cat "$WORK/out" 2>/dev/null
}
# digits ROW: the numbers in big digits on rows ROW..ROW+2.
digits() {
  screen >"$WORK/screen.txt"
  $TIELAB --headless "$DIGITS" "$WORK/screen.txt" "$1"
}
# wait_digits ROW WANT [TENTHS]: until the big digits there read WANT.
wait_digits() {
  i=0
  while [ $i -lt "${3:-50}" ]; do
    [ "$(digits "$1")" = "$2" ] && return 0
    sleep 0.1
    i=$((i + 1))
  done
  return 1
}
# A window mean as the present view takes it: the mean of a series over
# the run's newest 100 steps; a factor as it prints one ("12x", "1.3x").
WMEAN='local function wmean(r, s) local h = r:history(s) local last, sum, n = h.steps[h.n], 0, 0 for i = h.n, 1, -1 do if h.steps[i] <= last - 100 then break end if h.values[i] == h.values[i] then sum, n = sum + h.values[i], n + 1 end end return sum / n end local function figx(v) local a = math.abs(v) return string.format(a >= 10 and "%.0fx" or a >= 1 and "%.1fx" or "%.2gx", v) end'
RATIOS="(function() $WMEAN return figx(wmean(lab.runs.tied, 'grad_ratio')) .. ' ' .. figx(wmean(lab.runs.untied, 'grad_ratio')) end)()"
now_ms() { date +%s%3N; }

session 80 24

start "$MODEL"
wait_for 'RUNNING step [1-9]' 300
check $? "the lab starts training"

# ---------------------------------------------------------------- every key says what it did
# key NAME REGEX: the key, then its message on the last row.
key_says() {
  key "$1"
  wait_row 24 "$2" 30
  check $? "key $1: the message line says '$2'"
}
# Train until the alignment of the tied run has been measured once.
i=0
while [ "$(lua_out 'lab.runs.tied:metrics().align ~= nil')" != true ] && [ $i -lt 60 ]; do sleep 0.5; i=$((i + 1)); done
[ $i -lt 60 ]
check $? "the tied run's alignment is measured while it trains"
key_says Space 'training paused'
key_says g 'chart glyphs: block'
key_says g 'chart glyphs: ascii'
key_says g 'chart glyphs: braille'
key_says l 'lens: logit lens'
key_says l 'lens: tuned lens'
key_says Tab 'selected: untied'
key_says Tab 'selected: tied'
key_says z 'zoom: loss'
key_says z 'zoom: ratio'
key z; key z; key z; key z
key_says z 'zoom: none'
key_says s 'scatter: row norms of tied'
key_says s 'scatter: off'
key_says p 'present view: loss'
key_says p 'lab view'
key_says + 'tied: in_scale 2 '
key_says - 'tied: in_scale 1 '
key_says t 'tied: tie untied'
key t; key t
key_says n '1 more step of every run'
key_says C-l 'screen redrawn'
key_says '?' 'help: Esc or \? closes it'
key_says Escape 'help closed'
key_says F1 'help: Esc or \? closes it'
key_says '?' 'help closed'
key_says PPage 'output: (the oldest lines|a page back)'
key_says NPage 'output: the newest lines'
key_says '[' 'speed: [0-9.]+ steps/s'
key_says ']' 'speed: '
lua 'ui.speed(0)'
lua_out 'select(2, pcall(ui.speed, 1e-300))' | grep -q 'from 0.01 to 1e6'
check $? "ui.speed refuses a pace of nearly nothing (it would stop the trainer)"
key_says 0 'tied: in_scale 1 '
wait_for '●tied tied in×1 ' 30
check $? "after t three times the run is tied again, at in_scale 1"

# ---------------------------------------------------------------- the in_scale ladder
for want in 2 3 5 10 20 50 100 200 500 1000; do
  key +
  wait_row 24 "tied: in_scale $want " 30 || break
done
check $? "+ climbs 1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000"
key +
wait_row 24 'tied: in_scale 1000, the highest step' 30 && [ "$(lua_out "lab.runs.tied:metrics().in_scale")" = 1000.0 ]
check $? "+ at 1000 stays there and says so ($(cat "$WORK/out" 2>/dev/null))"
key 0
wait_row 24 'tied: in_scale 1 ' 30 && [ "$(lua_out "lab.runs.tied:metrics().in_scale")" = 1.0 ]
check $? "0 resets in_scale to 1"
for want in 1/2 1/3 1/5 1/10 1/20 1/50; do
  key -
  wait_row 24 "tied: in_scale $want " 30 || break
done
check $? "- goes down 1/2, 1/3, 1/5, 1/10, 1/20, 1/50"
key -
wait_row 24 'tied: in_scale 1/50, the lowest step' 30 && [ "$(lua_out "lab.runs.tied:metrics().in_scale")" = 0.02 ]
check $? "- at 1/50 stays there and says so"
wait_for '●tied tied in×0.02 ' 30
check $? "the status line shows the scale the ladder set"
lua 'ui.in_scale(4)'
key +
wait_row 24 'tied: in_scale 5 ' 30
check $? "from 4, between two steps, + goes to 5"
lua 'ui.in_scale(4)'
key -
wait_row 24 'tied: in_scale 3 ' 30
check $? "from 4, - goes to 3"
key 0
wait_row 24 'tied: in_scale 1 ' 30

# ---------------------------------------------------------------- the present view
s=$(settled_step)
lua 'ui.present("ratio")'
wait_row 24 'present view: ratio' 30 && wait_row 5 '^╭ grad out/in' 30 &&
  screen | sed -n 2p | grep -q 'tied out/in.*untied out/in' && screen | sed -n 3p | grep -q "steps [0-9]*-$s"
check $? "ui.present('ratio'): the ratio chart large, its figures labelled 'tied out/in' and 'untied out/in', over their steps"
want=$(lua_out "$RATIOS")
wait_digits 2 "$want"
check $? "the big digits read each run's gradient ratio, the mean of its last 100 steps to step $s ($want; read $(digits 2))"

lua 'ui.present("align")'
wait_row 24 'present view: align' 30 && screen | sed -n 3p | grep -q 'to E_in.*to E_out'
check $? "ui.present('align'): the two alignments, labelled 'to E_in' and 'to E_out'"
want=$(lua_out 'string.format("%.2f %.2f", lab.runs.tied:metrics().align.linear_in, lab.runs.tied:metrics().align.linear_out)')
wait_digits 2 "$want"
check $? "the big digits read the tied run's linear alignment to E_in and E_out ($want; read $(digits 2))"
wait_row 5 '^╭ align tied ' 30
check $? "under them the alignment chart over time, titled 'align tied'"
key Tab
wait_row 24 'selected: untied' 30 && wait_digits 2 "$want" && screen | sed -n 2p | grep -q 'tied linear' &&
  wait_row 5 '^╭ align tied ' 30
check $? "with the untied run selected, the tied run's alignment, named: 'tied linear' $want under 'align tied'"
key p
wait_row 24 'lab view' 30 && wait_for 'align tied vs untied @' 30 && ! screen | grep -q 'untied now'
check $? "the lab view with the untied run selected: the alignment panel shows the tied run's scores"
key Tab
wait_row 24 'selected: tied' 30
key p
wait_row 24 'present view' 30

lua 'ui.present("loss")'
want=$(lua_out "(function() $WMEAN local m = lab.runs.tied:metrics() return string.format('%.2f', wmean(lab.runs.tied, 'loss')) .. (m.val_loss == m.val_loss and string.format(' %.2f', m.val_loss) or '') end)()")
wait_digits 2 "$want" && wait_row 5 '^╭ loss' 30
check $? "ui.present('loss'): train loss (the mean of the last 100 steps) and validation loss in big digits ($want), the loss chart under them"

lua 'lab.plot("gap", 0.25) ui.present("gap")'
wait_digits 2 "0.250" && screen | sed -n 2p | grep -q 'gap' && screen | sed -n 3p | grep -q '^ *step [1-9][0-9]* '
check $? "ui.present with a lab.plot series: its newest value, labelled with its name and its step, the lab's (no on_step callback hands it over)"
lua 'lab.plot("gap", 0.31) lab.plot("gap", 0.27) ui.present("gap")'
wait_digits 2 "0.27" && screen | sed -n 3p | grep -q '^ *step [1-9][0-9]* '
check $? "a sparse series: its newest value, at the digits its spread allows (0.27 after 0.25, 0.31; read $(digits 2))"
lua 'for i = 1, 12 do lab.plot("noisy", i % 2 == 0 and 0.4 or 0.2) end ui.present("noisy")'
wait_digits 2 "0.3" && screen | sed -n 3p | grep -q '^ *step [1-9][0-9]* '
check $? "a series of many points: the mean of its newest steps (0.2 and 0.4 in turn: 0.3), not its newest point (read $(digits 2))"

lua 'lab.plot("gap2: x5", 0.5) lab.plot("gap2: control", 0.75) ui.present("gap2")'
wait_digits 2 "0.500 0.750" && screen | sed -n 2p | grep -q 'x5.*control' && screen | sed -n 3p | grep -q 'step [1-9][0-9]* .*step [1-9][0-9]* ' \
  && screen | grep -q 'gap2: x5.*gap2: control'
check $? "ui.present with a group of lab.plot series ('gap2: x5', 'gap2: control'): both charted, each's figure labelled with its arm and its step"

lua_out 'select(2, pcall(ui.present, "nonsense"))' | grep -q "no chart 'nonsense': one of loss, ratio, align, lens, scatter, or a lab.plot series"
check $? "ui.present with an unknown name says which charts there are"

lua 'ui.present("ratio") lab.caption("12.5")'
wait_digits 2 "12.5" && wait_digits 5 "$(lua_out "$RATIOS")"
check $? "a short caption in large type above the big digits"
lua 'lab.caption("Boost the input side five-fold: does the tied matrix move toward E_in, and how far?")'
wait_row 2 '^ *Boost the input side five-fold: does the tied matrix move toward E_in, and how *$' 30 &&
  wait_row 3 '^ +far\? *$' 30
check $? "a long caption as text, wrapped at a space and centred"
lua 'lab.caption()'
wait_row 5 '^╭ grad out/in' 30
check $? "without a caption the chart moves back up"
key z
wait_row 24 'present view: align' 30
check $? "z in the present view: the next chart"
key p
wait_row 24 'lab view' 30 && wait_for '^╭ loss' 30
check $? "p: back to the lab view"
key p
wait_row 24 'present view: align' 30
check $? "p again: the present view of the last chart"
key p

# ---------------------------------------------------------------- the throttle
# Under a throttle of S steps a second, steps start at least 1/S apart and
# none before it was asked for: N steps take at least (N - 1) / S seconds
# from the moment before the key that starts them, however slow the
# machine. Flat out they take a few milliseconds.
s0=$(settled_step)
lua 'ui.speed(5)'
t0=$(now_ms)
key Space
i=0
while [ "$(step_now)" -lt $((s0 + 10)) ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
t1=$(now_ms)
[ "$(step_now)" -ge $((s0 + 10)) ] && [ $((t1 - t0)) -ge 1800 ]
check $? "ui.speed(5): ten steps took $((t1 - t0)) ms (at least 1800), from step $s0 to $(step_now)"
[ "$(lua_out 'ui.speed()')" = 5.0 ] && lua_out 'ui.status()' | grep -q 'speed 5 steps/s'
check $? "ui.speed() and ui.status() say the speed"
lua 'ui.speed(0)'
s1=$(step_now) t1=$(now_ms)
i=0
while [ "$(step_now)" -lt $((s1 + 50)) ] && [ $i -lt 300 ]; do sleep 0.05; i=$((i + 1)); done
[ "$(step_now)" -ge $((s1 + 50)) ]
check $? "ui.speed(0): flat out again (50 steps in $(($(now_ms) - t1)) ms)"
key Space
wait_row 24 'training paused' 30
s1=$(settled_step)
lua 'ui.speed(4)'
t0=$(now_ms)
lua 'ui.step(6)'
i=0
while [ "$(step_now)" -lt $((s1 + 6)) ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
t1=$(now_ms)
[ "$(step_now)" -eq $((s1 + 6)) ] && [ $((t1 - t0)) -ge 1250 ]
check $? "the throttle holds tickets too: ui.step(6) at 4 steps/s took $((t1 - t0)) ms (at least 1250)"
lua 'ui.speed(0)'

# ---------------------------------------------------------------- saving and resuming say which runs
s=$(settled_step)
key q
wait_for 'Save [0-9]+ run' 30
key y
wait_dead 100
$T capture-pane -p -J -S -10 -t t >"$WORK/after.txt"
line=$(grep -E "^saved tied \(step $s\), untied \(step $s\) to /" "$WORK/after.txt")
dir=${line##* to }
[ "$(status)" = 0 ] && [ -n "$line" ] && ls "$dir"/tied-*.safetensors "$dir"/untied-*.safetensors >/dev/null 2>&1
check $? "quitting with save prints each run, its step and the folder, which holds them ($line)"

start --resume
wait_row 24 "^resumed tied \(step $s\), untied \(step $s\) from" 300
check $? "--resume says on the message line which runs it reopened at which step"
screen | tr -d '\n' | grep -Fq "resumed tied (step $s), untied (step $s) from" && screen | tr -d '\n' | grep -Fq "$dir"
check $? "and in the REPL output, with the folder"
key q
wait_for 'Save [0-9]+ run' 30 && key n
wait_dead 100

finish
