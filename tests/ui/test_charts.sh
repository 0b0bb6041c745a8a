#!/bin/sh
# test_charts.sh -- what the charts show in a real terminal: the lab in a
# private tmux server (driven by tests/lib/tmux.sh), its screen read with
# capture-pane. The time axis spans the data and says "step", log charts say
# so, the ratio chart has its line at 1, every run of five has its legend
# entry in every chart, event markers are named by kind, and the theme can
# be chosen. Column checks run in the C locale, where each cell is one byte.
# Every wait polls the screen until a deadline. Prints TAP.

: "${top_builddir:=.}" "${top_srcdir:=.}"
tmux_name=charts; . "$top_srcdir/tests/lib/tmux.sh"

LUA_MODEL='vocab = 256, dim = 32, layers = 2, heads = 2, ctx = 32, batch = 4'
# start LOCALE ARGS...: a new tielab in the pane ($EXTRA: more environment),
# in place of tmux.sh's: the locale is the test's to choose.
start() {
  loc=$1
  shift
  $T respawn-pane -k -t t "clear; env -u LC_ALL -u LC_CTYPE LANG=$loc NO_COLOR= $BASE $EXTRA $TIELAB $*; sleep 600"
}

# The loss chart's rows (the left half at 80 columns, ASCII): the columns
# of its plot, right of the y axis, for rows 'from'..'to'.
loss_plot() { screen | sed -n "$1,$2p" | cut -c8-40; }

# last_mark_fraction: how far right the newest point of the loss chart lies,
# in percent of the plot's width.
last_mark_fraction() {
  loss_plot 3 10 | awk '{ for (i = length($0); i > 0; i--) if (substr($0, i, 1) ~ /[*o:#+x@%&=]/) break;
                         if (i > m) m = i } END { printf "%d\n", m * 100 / 33 }'
}

# wait_at_least FUNCTION N TENTHS: until FUNCTION prints a number of at
# least N; the last number is left in 'got'.
wait_at_least() {
  i=0 got=0
  while [ $i -lt "$3" ]; do
    got=$($1)
    [ "$got" -ge "$2" ] && return 0
    sleep 0.1
    i=$((i + 1))
  done
  return 1
}

session 80 24

# ---------------------------------------------------------------- axes, in UTF-8
EXTRA=
start C.UTF-8 "$MODEL"
wait_for 'RUNNING step [1-9]' 300
wait_for '^╭ loss ' 50 && wait_for 'step └0.* step └0' 50
check $? "both charts label their time axis 'step'"
wait_for 'grad out/in \(log\)' 50 && wait_for 'out=in│' 50
check $? "the ratio chart says it is on a log scale and names its line at 1 where its y label would be"

# ---------------------------------------------------------------- the x span, in ASCII
start C "$MODEL"
wait_for 'RUNNING step [0-9]{3}' 600
wait_for '^╭ loss ' 50
wait_at_least last_mark_fraction 80 50
check $? "past step 100 the newest points lie at the right end of the time axis ($got% of the width)"
screen | grep -Eq '^\+-+ step \+0-+[0-9]+0-+[0-9]+0'
check $? "the time axis has round ticks"

# ---------------------------------------------------------------- five runs
key :
type_line "for i = 3, 5 do lab.run{name = 'in' .. i .. '_s1', tie = 'tied', in_scale = i, $LUA_MODEL} end"
wait_for 'in5_s1' 100
legends() { screen | sed -n '2,3p' | cut -c"$1"; }
all_named() {
  for name in tied untied in3_s1 in4_s1 in5_s1; do
    # an ASCII mark, a space, then the whole name (or without the
    # suffix the names share, which a narrow legend leaves out)
    legends "$1" | grep -Eq "(^| )[*o+x@%&=] ${name%_s1}(_s1)?( |\$)" || return 1
  done
}
i=0
while [ $i -lt 100 ]; do
  all_named 1-40 && all_named 41-80 && break
  sleep 0.1
  i=$((i + 1))
done
all_named 1-40
check $? "five runs: the loss chart's legend names every one"
all_named 41-80
check $? "five runs: the ratio chart's legend names every one"
screen | sed -n '2,3p' | cut -c1-40 | grep -Eq '(^| ): val( |$)'
check $? "validation has its own lighter mark in ASCII (':'), never a run's"

# ---------------------------------------------------------------- event kinds
key Escape
wait_for '^space run/pause' 50   # out of the REPL before the next key (else it reads as Alt-t)
key t
wait_for '\^ tie' 100
check $? "a tie change is marked, and the legend says what the mark means"
key +
wait_for 'S scale' 100
check $? "a scale change has its own mark and legend entry"
key :
type_line 'lab.runs[1]:set{lr = 2e-3}'
wait_for '! setting' 100
check $? "another setting's change has its mark, named in the legend"
type_line 'lab.phase("Act two")'
wait_for 'phase 1' 100 && wait_for '^\+- step \+.*P' 100
check $? "a lab.phase is a rule on the charts, labelled 'phase 1', with its mark on the time axis"
type_line "lab.runs[1]:set{tie = 'tied', tie_merge = 'mean'}"
wait_for 'tied \(mean\)' 100 && ! screen | sed -n 2,9p | grep -q 'tie_merge'
check $? "a re-tie and the matrix it keeps, at one step: one label, 'tied (mean)'"
key Escape
wait_for '^space run/pause' 50

# ---------------------------------------------------------------- themes
key :
type_line 'print("theme is " .. ui.theme("light"))'
wait_for '^theme is light' 50
check $? "ui.theme switches to the light theme"
type_line 'print("theme is " .. ui.theme())'
wait_for '^theme is light' 50
check $? "ui.theme() says which theme is in use"
EXTRA="NO_COLOR=1"
start C "$MODEL --theme dark"
wait_for 'RUNNING step [1-9]' 300
key :
type_line 'print("theme is " .. ui.theme("dark"))'
wait_for '^theme is mono' 50
check $? "NO_COLOR wins over --theme and ui.theme"
EXTRA="COLORFGBG='0;15'"
start C "$MODEL"
wait_for 'RUNNING step [1-9]' 300
key :
type_line 'print("theme is " .. ui.theme())'
wait_for '^theme is light' 50
check $? "COLORFGBG with a light background chooses the light theme"
EXTRA=
start C "$MODEL --theme light"
wait_for 'Lua REPL' 300
# Dim text (the REPL's notes) is a grey of the palette on light: a
# terminal's dim leaves black text on white black. With 256 colours only.
if [ "$(TERM=$($T show-options -gv default-terminal) tput colors 2>/dev/null)" -ge 256 ] 2>/dev/null; then
  $T capture-pane -e -p -t t | grep -q '38;5;244m[^[]*Lua REPL'
  check $? "on the light theme dim text is grey 244, not the terminal's dim"
else
  skip "dim grey: the pane has fewer than 256 colours"
fi
out=$($TIELAB --theme sepia 2>&1)
[ $? -eq 2 ] && echo "$out" | grep -q 'dark, light or mono'
check $? "--theme refuses an unknown theme"

# ---------------------------------------------------------------- five runs without colour, in ASCII
# The runs' marks in the loss chart (where two lines share a row, each
# keeps its own mark, a row apart: no mark is no run's), and the legend
# shows each mark beside a run's name.
EXTRA="NO_COLOR=1"
start C "$MODEL --ascii"
wait_for 'RUNNING step [1-9]' 300
key :
type_line "for i = 3, 5 do lab.run{name = 'in' .. i .. '_s1', tie = 'tied', in_scale = i, $LUA_MODEL} end"
wait_for 'in5_s1' 100
leave_repl
# plot_marks: the run marks in the loss chart's plot (left half, right of
# the y axis, below the legend's two rows, above the step axis, whose
# labels such as 80 would read as the mark 8), one per line, each once.
plot_marks() {
  screen | sed -n '4,10p' | grep -v ' step +' | cut -c8-40 | grep -o '[*o+x@%&=XOHWVZ8$#]' | sort -u
}
count_marks() { plot_marks | wc -l; }
wait_at_least count_marks 3 300
check $? "five runs, no colour, ASCII: the loss chart holds at least three marks ($got)"
# Each mark of the plot beside a name in the legend, read from one
# capture: a redraw between two looks may move the marks of a shared
# row (a character at a time: '*' must not glob).
marks_named() {
  screen >"$WORK/five"
  list=$(sed -n '4,10p' "$WORK/five" | grep -v ' step +' | cut -c8-40 | grep -o '[*o+x@%&=XOHWVZ8$#]' | sort -u | tr -d '\n')
  [ -n "$list" ] || return 1
  k=1
  while [ $k -le ${#list} ]; do
    m=$(printf '%s' "$list" | cut -c$k)
    sed -n '2,3p' "$WORK/five" | cut -c1-40 | grep -Eq -- "(^| )[$m] [a-z]" || return 1
    k=$((k + 1))
  done
}
i=0
while [ $i -lt 50 ] && ! marks_named; do sleep 0.1; i=$((i + 1)); done
marks_named
check $? "... and the legend shows each of them beside a name ($list)"

finish
