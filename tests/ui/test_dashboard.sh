#!/bin/sh
# test_dashboard.sh -- the screen a talk shows, as a person sees it: a tied
# and an untied run of a talk's shape (V=512, d=64, 3 layers, ctx 32,
# batch 8) trained for a minute, then the lab at 80x24, 120x40 and 200x60,
# driven in a private tmux server by tests/lib/tmux.sh. At each size: at most
# 5% of the rows blank (a row of spaces, blank Braille and box borders
# says nothing), not one U+FFFD, each chart's legend on its box's top
# border with both runs named whole and the plot right under it (no
# legend wrapped to a second row, none cut), the lens table naming both
# runs; then the present view of the lens naming both, tied beside
# untied; the fitted lens before a fit and with one run fitted; and a
# script's series plotted at one step drawn along an axis of its own.
# Then every present view (loss, ratio, lens, scatter, align and a
# script's series) at the three sizes: at most 5% of the rows blank, no
# U+FFFD, the legend whole on its box's border, both runs named where
# both are shown. Last the same lab resumed under --ascii, its lab view
# held to the same rules at the three sizes.
# DASHBOARD_SECONDS sets the minute. Prints TAP.

: "${top_builddir:=.}" "${top_srcdir:=.}"
tmux_name=dashboard; . "$top_srcdir/tests/lib/tmux.sh"

# This script's text tools count characters, not bytes.
LC_ALL=C.UTF-8
export LC_ALL
SHAPE="--vocab 512 --dim 64 --layers 3 --heads 4 --ctx 32 --batch 8"

# blank_rows: rows of the screen (stdin) with nothing but spaces, blank
# Braille and box drawing.
blank_rows() { perl -CS -ne 'chomp; s/[ \x{2800}\x{2500}-\x{257f}]//g; $n++ if $_ eq ""; END { print $n + 0 }'; }

# blank_ascii: the same under --ascii, where borders are dashes, pluses
# and bars: a bar in a column where some row has a box's or an axis' corner
# ('+'); elsewhere a bar is a chart's span, which is data.
blank_ascii() {
  perl -CS -e 'my @rows = map { chomp; $_ } <STDIN>; my %edge;
    for my $r (@rows) { while ($r =~ /\+/g) { $edge{pos($r) - 1} = 1 } }
    my $n = 0;
    for my $r (@rows) {
      my $blank = 1;
      for my $i (0 .. length($r) - 1) {
        my $c = substr($r, $i, 1);
        next if $c eq " " || $c eq "-" || $c eq "+" || ($c eq "|" && $edge{$i});
        $blank = 0;
        last;
      }
      $n += $blank;
    }
    print $n'
}

# rows_ok NAME ROWS [ASCII]: the screen, kept as $WORK/NAME, has at most 5%
# of its ROWS blank and not one U+FFFD.
rows_ok() {
  screen >"$WORK/$1"
  if [ -n "$3" ]; then blank=$(blank_ascii <"$WORK/$1"); else blank=$(blank_rows <"$WORK/$1"); fi
  [ "$blank" -le $(($2 * 5 / 100)) ]
  check $? "$1: $blank blank rows of $2 (at most 5%)"
  ! grep -q "$(printf '\357\277\275')" "$WORK/$1"
  check $? "$1: no U+FFFD anywhere"
}

# legend_ok TITLE: the chart box titled TITLE has its title and both runs
# whole on its top border, and its plot's y axis on the row under it.
legend_ok() {
  screen | perl -CSA -e 'my ($title) = @ARGV; my @rows = <STDIN>; my $ok = 0;
    for my $r (0 .. $#rows - 1) {
      my $at = index($rows[$r], "\x{256d} $title");
      next if $at < 0;
      my $top = substr($rows[$r], $at);
      $top =~ s/\x{256e}.*//s;   # this box only
      my $axis = substr($rows[$r + 1], $at + 8, 1);
      $ok = $top =~ / tied / && $top =~ / untied / && $top !~ /\x{2026}/ && $axis =~ /[\x{2502}\x{2524}]/;
      last;
    }
    exit !$ok' "$1"
}

# border_ok CORNER TITLE [NAMES...]: the box whose top border starts with
# CORNER and TITLE has each of NAMES whole on that border row, and no
# ellipsis (U+2026, '~' in ASCII) on it: a legend not cut.
border_ok() {
  screen | perl -CSA -e 'my ($corner, $title, @names) = @ARGV; my $ok = 0;
    for my $row (<STDIN>) {
      my $at = index($row, "$corner $title");
      next if $at < 0;
      my $top = substr($row, $at);
      $ok = $top !~ /[\x{2026}~]/;
      for my $n (@names) { $ok &&= $top =~ / \Q$n\E / }
      last;
    }
    exit !$ok' "$@"
}

# size_to COLS ROWS: the pane resized, the screen laid out again for it
# (the status line fills its row).
size_to() {
  $T resize-window -t t -x "$1" -y "$2" 2>/dev/null || $T resize-pane -t t -x "$1" -y "$2"
  wait_for "^.{$(($1 - 1))}[^ ]" 50
}

# lab_at COLS ROWS: the lab view at that size, laid out for it: the lens
# history shows from 120 columns only.
lab_at() {
  size_to "$1" "$2" && wait_for 'lens KL bits' 50
  if [ "$1" -ge 120 ]; then wait_for 'over steps' 50; else wait_gone 'over steps' 50; fi
}

session 80 24
start "$SHAPE"
wait_for 'RUNNING step [1-9]' 600
check $? "a tied and an untied run of a talk's shape train"
# The minute a talk trains before its first slide: a duration, not a guess.
sleep "${DASHBOARD_SECONDS:-60}"
wait_for 'lens KL bits.*@[1-9]' 300 && wait_for 'align tied vs untied @' 300
check $? "after a minute the lens and the alignment are measured"

for size in 80x24 120x40 200x60; do
  COLS=${size%x*} ROWS=${size#*x}
  lab_at "$COLS" "$ROWS"
  rows_ok "$size" "$ROWS"
  legend_ok loss && legend_ok 'grad out/in'
  check $? "$size: the loss and ratio legends name both runs whole on one row"
  grep -A1 'lens KL bits' "$WORK/$size" | sed -n 2p | grep -q ' tied .* untied '
  check $? "$size: the lens table names the tied run and the untied one beside it"
done

key :
type_line 'ui.present("lens")'
leave_repl
# The present view alone has big figures: each labelled "layer 0 @step".
wait_for 'present view: lens' 50 && wait_for 'layer 0 @[0-9]+ .*layer 0 @[0-9]+' 50
check $? "ui.present('lens'): each run's KL at layer 0 in big digits"
screen | grep -A3 '╭ lens KL bits' | grep -q ' tied .* untied '
check $? "ui.present('lens'): the tied run beside the untied one, in the lens's box"
screen | grep -q '[^n]tied KL' && screen | grep -q 'untied KL'
check $? "ui.present('lens'): the figures name both runs"
screen | grep -Eq '│ out  tied acc 0\.[0-9]+  untied acc 0\.[0-9]+ +\(KL 0' &&
  [ "$(screen | grep -c '│ out')" = 1 ]
check $? "ui.present('lens'): the output position one row, each run's accuracy (its KL is 0 by definition)"

# The fitted lens: before any fit the panel says so, run by run; with only
# the tied run fitted, its numbers alone, and the untied run's reason on
# the border.
key :
type_line 'ui.present(false) ui.lens("fitted")'
wait_for 'lens by layer \(tuned lens, fitted\)' 50 && wait_for '│ tied: no fit yet: r:fit_lens\(\)' 50 &&
  wait_for '│ untied: no fit yet: r:fit_lens\(\)' 50
check $? "the fitted lens before any fit: the panel says each run has none"
type_line 'lab.runs.tied:fit_lens{steps = 20, tokens_per_step = 64}; print("fit done")'
wait_for '^fit done' 600 && wait_for 'lens KL bits.*fitted @[1-9]' 100 && wait_for '^╰ untied: no fit yet' 50 &&
  wait_for '│   0 .*[0-9]\.[0-9][0-9]' 50
check $? "only the tied run fitted: its numbers, and on the border why the untied run has none"
type_line 'ui.lens("tuned")'
leave_repl

# A script's series plotted after training, all at one step, as a script
# that reports its arms does: one point after another along the axis,
# not every one in the first column.
key :
type_line 'for i = 1, 8 do lab.plot("arm", i % 3) end ui.present("arm")'
leave_repl
wait_for 'point' 50
# Columns of marks inside the chart's box only (the big digits above it
# are blocks too).
cols=$(screen | perl -CS -ne '$in = 1 if /\x{256d}/; $in = 0 if /\x{2570}/; next unless $in;
  while (/[\x{2581}-\x{2588}\x{2801}-\x{28ff}]/g) { $c{pos()} = 1 } END { print scalar keys %c }')
[ "$cols" -ge 8 ]
check $? "a series plotted at one step spreads over its own axis of points ($cols columns of marks)"

# Every present view at every size: the rows a taller or wider screen
# adds go to the chart, never to empty rows. A script's series ("gap",
# the tied run's ratio less one every 20 steps) stands for lab.plot's.
key :
type_line 'local h = lab.runs.tied:history("grad_ratio") for i = 1, h.n, 20 do lab.plot("gap", h.values[i] - 1, h.steps[i]) end'
leave_repl
for size in 80x24 120x40 200x60; do
  COLS=${size%x*} ROWS=${size#*x}
  size_to "$COLS" "$ROWS"
  for view in loss ratio lens scatter align gap; do
    case $view in
      loss) box='loss' names='tied untied' ;;
      ratio) box='grad out/in' names='tied untied' ;;
      lens) box='lens KL bits' names= ;;
      scatter) box='tied' names='tied untied' ;;
      align) box='align tied' names= ;;
      gap) box='gap' names= ;;
    esac
    key :
    type_line "ui.present('$view')"
    leave_repl
    wait_for "present view: $view" 50 && wait_for "^╰" 50 && wait_for "^╭ $box" 50
    sleep 0.5   # the frame after the message
    rows_ok "$size.present.$view" "$ROWS"
    # shellcheck disable=SC2086 # the names are words
    border_ok '╭' "$box" $names
    check $? "$size ui.present('$view'): its legend whole on the box's border${names:+, naming both runs}"
    if [ "$view" = lens ]; then
      grep -A1 '╭ lens KL bits' "$WORK/$size.present.$view" | sed -n 2p | grep -q ' tied .* untied '
      check $? "$size ui.present('lens'): the tied run beside the untied one"
    fi
  done
done
key :
type_line 'ui.present(false)'
leave_repl

# The same lab under --ascii: saved on the way out, resumed with ASCII
# glyphs and borders; a blank row there is spaces, dashes, bars and pluses.
key q
wait_for 'Save' 50 && key y
wait_dead 600
check $? "q then y saves the lab and quits"
start "--resume --ascii $SHAPE"
wait_for 'step [1-9]' 600 && wait_for 'lens KL bits.*@[1-9]' 600
check $? "--ascii: the lab resumed, its lens measured"
for size in 80x24 120x40 200x60; do
  COLS=${size%x*} ROWS=${size#*x}
  lab_at "$COLS" "$ROWS"
  rows_ok "ascii.$size" "$ROWS" ascii
  border_ok '+' loss tied untied && border_ok '+' 'grad out/in' tied untied
  check $? "--ascii $size: the loss and ratio legends name both runs whole, marks apart from names"
  grep -A1 'lens KL bits' "$WORK/ascii.$size" | sed -n 2p | grep -q ' tied .* untied '
  check $? "--ascii $size: the lens table names the tied run and the untied one beside it"
done

key q
wait_for 'Save' 50 && key n
wait_dead 100
check $? "q then n quits"
finish
