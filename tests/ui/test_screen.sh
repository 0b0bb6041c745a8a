#!/bin/sh
# test_screen.sh -- the whole terminal used and nothing cut, with five runs
# at 80x24, 100x30, 120x40 and 200x60, driven in a private tmux server by
# tests/lib/tmux.sh. At each size: every run on the status line, the
# essential key hints, few blank rows on the tall screens, the loss legend
# naming every run and "val", the time axis spanning the data and saying
# "step"; and in the lab view, each zoom, the help overlay and the present
# view, no word cut: every word on the screen is one the program can print
# (from the string literals of the sources, the docs and the Lua scripts),
# or a beginning of one ended by an ellipsis, or an end of one after it;
# and no panel's text runs into its neighbour or leaves a lone letter
# against its right edge.
# The sample panel shows what the model writes, words of no dictionary; its
# rectangle (from tests/ui/test_layout, which prints the layout) is left out.
# Last, at 80x24, a caption, and two runs named in CJK (two columns a
# character) whose names every line and legend shortens in columns.
# Prints TAP.

: "${top_builddir:=.}" "${top_srcdir:=.}"
tmux_name=screen; . "$top_srcdir/tests/lib/tmux.sh"
LAYOUT=${LAYOUT:-$top_builddir/tests/ui/test_layout}
[ -x "$LAYOUT" ] || bail_out "$LAYOUT was not built"

# This script's own text tools count characters, not bytes.
LC_ALL=C.UTF-8
export LC_ALL
RUNS="tied untied tied_x2_s1 tied_x5_s1 tied_x10_s1"
ELL=$(printf '\342\200\246')

# wait_runs N: until the status line shows N runs (a separator before each).
wait_runs() {
  i=0
  while [ $i -lt 100 ]; do
    [ "$(screen | sed -n 1p | grep -o '│' | wc -l)" -eq "$1" ] && return 0
    sleep 0.1
    i=$((i + 1))
  done
  return 1
}

# span X W H: from the rows of a chart (stdin) whose columns start at X, W
# wide, how far across its plot the newest point lies, in percent: the
# rightmost Braille dot's or half block's (two runs in one cell) column
# from the y axis' line to the right edge.
span() {
  perl -CS -ne 'BEGIN { ($x, $w) = @ARGV[0, 1]; @ARGV = () }
    $r = substr($_, $x, $w); $a = index($r, "\x{2502}"); next if $a < 0;
    for ($i = length($r) - 1; $i > $a; $i--) { if (substr($r, $i, 1) =~ /[\x{2801}-\x{28ff}\x{2580}-\x{259f}]/) { $m = $i if $i > $m; last } }
    $axis = $a if !defined $axis || $a < $axis;
    END { print defined $m && $w - 1 > $axis ? int(100 * ($m - $axis) / ($w - 1 - $axis)) : 0 }' "$1" "$2"
}

# ---------------------------------------------------------------- the dictionary
# Every word the program can print: letters of its string literals, of the
# Lua API's documentation and of the scripts, lowercased.
{
  for f in "$top_srcdir"/src/*.c "$top_srcdir"/src/*/*.c "$top_srcdir"/src/*/*.h; do grep -o '"[^"]*"' "$f"; done
  cat "$top_srcdir"/docs/*.md "$top_srcdir"/lua/*.lua
  echo "$RUNS"
} | tr 'A-Z' 'a-z' | tr -c 'a-z\n' '\n' | grep -v '^$' | sort -u >"$WORK/dict"

# cut_words FILE: the words of the screen in FILE that are in no dictionary
# and are neither a beginning of one before an ellipsis nor an end of one
# after it, as "row N: word".
cut_words() {
  tr 'A-Z' 'a-z' <"$1" | sed "s/$ELL/~/g" | awk '
    NR == FNR { dict[$0] = 1; next }
    function begins(w, k) { for (k in dict) if (index(k, w) == 1) return 1; return 0 }
    function ends(w, k) { for (k in dict) if (length(k) >= length(w) && substr(k, length(k) - length(w) + 1) == w) return 1; return 0 }
    {
      line = $0; at = 0
      while (match(line, /[a-z]+/)) {
        w = substr(line, RSTART, RLENGTH)
        before = RSTART > 1 ? substr(line, RSTART - 1, 1) : ""
        after = substr(line, RSTART + RLENGTH, 1)
        line = substr(line, RSTART + RLENGTH)
        if (w in dict) continue
        if (after == "~" && begins(w)) continue
        if (before == "~" && ends(w)) continue
        print "row " FNR - 1 ": " w
      }
    }' "$WORK/dict" -
}

# edge_cuts FILE X,Y,H...: words that meet a right edge (column X, rows
# Y..Y+H-1, 0-based) badly: a letter there that runs on into the next
# column's letter (text running into its neighbour), or a single letter
# alone against the edge (what is left of a word cut there), as "row N:
# ...". A dictionary cannot tell a cut "t" from the key t; its place at
# the edge can.
edge_cuts() {
  file=$1
  shift
  perl -CSA -ne 'BEGIN { @e = map { [split /,/] } @ARGV; @ARGV = () } chomp; my @c = split //; my $row = $. - 1;
    for my $edge (@e) {
      my ($x, $y, $h) = @$edge;
      next unless $row >= $y && $row < $y + $h && $x < @c && $c[$x] =~ /\p{L}/;
      if ($x + 1 < @c && $c[$x + 1] =~ /\p{L}/) { print "row ", $. - 1, ": runs on at column $x (", join("", @c[$x - 2 .. $x + 2]), ")\n"; next }
      print "row ", $. - 1, ": \x27$c[$x]\x27 alone at the edge, column $x\n" if $x == 0 || $c[$x - 1] !~ /[\p{L}\p{N}_]/;
    }' "$@" <"$file"
}

# scroll_now: the rows the REPL's output has now: those between the last
# box's bottom border and the input line.
scroll_now() { screen | awk -v R="$ROWS" '/^╰/ { last = NR } END { print R - 2 - last }'; }

# layout: the lab view's rectangles at this size, with the REPL's output as
# tall as it is now and the lens table of the model's three positions.
layout() { "$LAYOUT" "$ROWS" "$COLS" "$(scroll_now)" 4; }

# lab_edges: the right edge of every panel of the lab view but the sample
# panel, as X,Y,H.
lab_edges() { layout | awk '$1 != "sample" { print $3 + $5 - 1 "," $2 "," $4 }'; }

# rect NAME: "y x h w" of a panel in the lab view at this size.
rect() { layout | awk -v p="$1" '$1 == p { print $2, $3, $4, $5 }'; }

# blank_cols Y H X1 X2: the screen (stdin) with columns X1..X2-1 of rows
# Y..Y+H-1 blanked (sed counts characters in a UTF-8 locale; awk here
# counts bytes).
blank_cols() {
  if [ "$4" -le "$3" ]; then cat; return; fi
  sp=$(printf "%$(($4 - $3))s" '')
  sed -E "$(($1 + 1)),$(($1 + $2))s/^(.{$3}).{0,$(($4 - $3))}/\1$sp/"
}

# blank_rect Y X H W [BX BW]: a rectangle blanked, except columns
# BX..BX+BW-1 (an overlay drawn over it).
blank_rect() {
  y=$1 x=$2 h=$3 w=$4 bx=${5:--1} bw=${6:-0}
  if [ "$bx" -lt 0 ]; then blank_cols "$y" "$h" "$x" $((x + w)); return; fi
  a=$((bx < x + w ? bx : x + w)) b=$((bx + bw > x ? bx + bw : x))
  blank_cols "$y" "$h" "$x" "$a" | blank_cols "$y" "$h" "$b" $((x + w))
}

# cols X W: columns X..X+W-1 of each line of stdin.
cols() { sed -E "s/^.{0,$1}//; s/^(.{0,$2}).*/\1/"; }

# no_cut WHAT [BX BW]: the current screen without its sample panel has no
# cut word, and no word meets a right edge badly (the lab view's panels
# when no overlay is given, else the screen's).
no_cut() {
  screen >"$WORK/raw"
  if [ -n "$2" ]; then edges="$((COLS - 1)),0,$ROWS"; else edges=$(lab_edges); fi
  set -- "$1" $(rect sample) "${2:--1}" "${3:-0}"
  what=$1
  shift
  if [ -n "$4" ]; then blank_rect "$@" <"$WORK/raw" >"$WORK/shot"; else cp "$WORK/raw" "$WORK/shot"; fi
  # An overlay hides what lies under it, and may cut what it covers: of
  # its rows (those its border starts at column BX) only its own columns
  # are read, and nothing of the rest.
  if [ "$5" -gt 0 ] 2>/dev/null; then
    perl -CS -ne 'BEGIN { ($bx, $bw) = splice @ARGV, 0, 2 } chomp; my @c = split //;
      print $bx < @c && $c[$bx] =~ /[\x{250c}\x{2502}\x{2514}]/ ? join("", @c[$bx .. ($bx + $bw - 1 < $#c ? $bx + $bw - 1 : $#c)]) : "", "\n"' \
      "$5" "$6" <"$WORK/raw" >"$WORK/shot"
  fi
  { cut_words "$WORK/shot"; edge_cuts "$WORK/shot" $edges; } >"$WORK/cut"
  if [ -s "$WORK/cut" ]; then
    fail "$what: no word cut ($(tr '\n' ' ' <"$WORK/cut"))"
  else
    pass "$what: no word cut"
  fi
}

# ---------------------------------------------------------------- matching names
# shown_as NAME TOKEN: TOKEN is NAME, or NAME shortened on purpose: a part
# of it ("tied_x2" for "tied_x2_s1"), or its beginning and a part of it
# around an ellipsis ("tie…x2").
shown_as() {
  case $2 in
    *"$ELL"*)
      head=${2%%"$ELL"*} tail=${2#*"$ELL"}
      case $1 in "$head"*) ;; *) return 1 ;; esac
      case $1 in *"$tail"*) return 0 ;; esac
      return 1
      ;;
  esac
  [ ${#2} -ge 2 ] || return 1
  case $1 in *"$2"*) return 0 ;; esac
  return 1
}

# every_run TEXT: each run shown once in TEXT's words (names as whole words
# first, so "tied" is not taken for "tied_x2_s1"); prints what is missing.
every_run() {
  words=$(printf '%s\n' "$1" | sed "s/[^A-Za-z0-9_$ELL]\{1,\}/ /g")
  left=$words missing=
  for r in $RUNS; do
    found=
    for w in $left; do [ "$w" = "$r" ] && found=$w && break; done
    if [ -z "$found" ]; then
      for w in $left; do shown_as "$r" "$w" && found=$w && break; done
    fi
    if [ -z "$found" ]; then missing="$missing $r"; continue; fi
    rest= dropped=
    for w in $left; do
      if [ -z "$dropped" ] && [ "$w" = "$found" ]; then dropped=1; else rest="$rest $w"; fi
    done
    left=$rest
  done
  echo "$missing"
}

# dcols X W: display columns X..X+W-1 of each line of stdin: a wide
# character takes two (and is left out when only half of it is inside),
# an accent none.
dcols() {
  perl -CSA -ne 'BEGIN { ($x, $w) = @ARGV; @ARGV = () } chomp; ($c, $o) = (0, "");
    for $g (/\X/g) { $cw = $g =~ /^[\p{Ea=W}\p{Ea=F}]/ ? 2 : 1; $o .= $g if $c >= $x && $c + $cw <= $x + $w; $c += $cw }
    print "$o\n"' "$1" "$2"
}

# whole_or_cut NAME TOKEN: TOKEN is NAME, or its beginning and its end
# around an ellipsis.
whole_or_cut() {
  [ "$1" = "$2" ] && return 0
  case $2 in *"$ELL"*) ;; *) return 1 ;; esac
  head=${2%%"$ELL"*} tail=${2#*"$ELL"}
  case $1 in "$head"*"$tail") return 0 ;; esac
  return 1
}

# named NAME TEXT: some word of TEXT (after a mark: ━ or ●) shows NAME
# whole or cut around an ellipsis.
named() {
  for word in $(printf '%s\n' "$2" | sed 's/[━●│]/ /g'); do whole_or_cut "$1" "$word" && return 0; done
  return 1
}

# ---------------------------------------------------------------- each size
session 80 24

for size in 80x24 100x30 120x40 200x60; do
  COLS=${size%x*} ROWS=${size#*x}
  $T resize-window -t t -x "$COLS" -y "$ROWS" 2>/dev/null || $T resize-pane -t t -x "$COLS" -y "$ROWS"
  start "$MODEL"
  wait_for 'RUNNING step [1-9]' 300
  check $? "$size: training starts"
  wait_for 'alignment of tied' 30 && wait_for "writes @" 100
  no_cut "$size first screen, alignment not measured yet"
  key :
  for k in 2 5 10; do type_line "lab.run{name='tied_x${k}_s1', tie='tied', in_scale=$k}"; done
  leave_repl
  wait_for "tielab.run 'tied_x10_s1'" 100 && wait_runs 5 && wait_step 300 &&
    wait_for 'align tied vs untied @' 300
  check $? "$size: five runs train, alignment measured"
  # The sample panel: the selected run's text, and from 40 rows its
  # partner's beneath, tied over untied.
  if [ "$ROWS" -ge 40 ]; then
    wait_for '[╭│] *tied writes @[0-9]+:' 30 && wait_for '│ *untied writes @[0-9]+:' 30
  else
    wait_for '[╭│] *tied writes @[0-9]+:' 30 && ! screen | grep -q 'untied writes @'
  fi
  check $? "$size: the sample panel shows $([ "$ROWS" -ge 40 ] && echo "the tied run's text over the untied's" || echo "the selected run's text")"

  status=$(screen | sed -n 1p)
  missing=$(every_run "$(printf '%s\n' "$status" | sed 's/^[^│]*//')")
  [ -z "$missing" ] && [ "$(printf '%s\n' "$status" | grep -o '│' | wc -l)" -eq 5 ]
  check $? "$size: every run on the status line${missing:+ (missing:$missing)}"
  # The meter shows '-' for a second after a gap of over 5 s between two
  # draws (a slow step on a loaded machine): give it that second.
  wait_for 'RUNNING step [0-9]+ [0-9.]+[kM]? tok/s' 30
  check $? "$size: the status line gives the lab's tokens per second"
  hint=$(screen | sed -n '$p')
  case $hint in *"p present"*"? help"*"q quit"*) r=0 ;; *) r=1 ;; esac
  check $r "$size: the hint line keeps p, ? and q"

  if [ "$size" = 80x24 ]; then
    # Paused, with steps owed to a script: it trains, and says so.
    key Space
    wait_for 'PAUSED step' 30
    key :
    type_line 'lab.step(100000)'
    key Escape
    wait_for 'RUNNING( \+[0-9]*)? step' 100
    check $? "$size: RUNNING while a script's steps are owed, training paused"
    missing=$(every_run "$(screen | sed -n 1p | sed 's/^[^│]*//')")
    check "${#missing}" "$size: every run on the status line beside the owed steps${missing:+ (missing:$missing)}"
    key C-c
    wait_for 'PAUSED step' 50 && key Space && wait_for 'RUNNING step' 30
    check $? "$size: Ctrl-C stops the script, space trains again"
  fi

  if [ "$ROWS" -ge 40 ]; then
    blank=$(screen | grep -c '^ *$')
    [ "$blank" -le $((ROWS * 15 / 100)) ]
    check $? "$size: $blank blank rows of $ROWS while training (at most 15%)"
  fi

  if [ "$COLS" -ge 120 ]; then
    # The alignment chart's legend: one row, names whole; Procrustes' lines
    # where that row has room for them.
    set -- $(rect alignchart)
    top=$(screen | sed -n "$(($1 + 1))p" | cols "$2" "$4")
    under=$(screen | sed -n "$(($1 + 2))p" | cols "$2" "$4")
    printf '%s\n' "$top" | grep -q 'lin in.*rand.*lin out' && ! printf '%s\n' "$under" | grep -Eq 'lin|rand|pro' &&
      if [ "$COLS" -ge 200 ]; then printf '%s\n' "$top" | grep -q 'pro in.*pro out'; fi
    check $? "$size: the alignment chart's legend on one row, names whole: $top"
  fi

  set -- $(rect loss)
  ly=$1 lx=$2 lh=$3 lw=$4
  legend=$(screen | sed -n "$((ly + 1)),$((ly + 2))p" | cols "$lx" "$lw")
  axis=$(screen | sed -n "$((ly + lh - 1)),$((ly + lh))p" | cols "$lx" "$lw")
  missing=$(every_run "$legend")
  [ -z "$missing" ] && printf '%s\n' "$legend" | grep -q 'val'
  check $? "$size: the loss legend names every run and val${missing:+ (missing:$missing)}"
  printf '%s\n' "$axis" | grep -q 'step'
  check $? "$size: the x axis says step"
  step=$(step_now)
  across=$(screen | sed -n "$((ly + 2)),$((ly + lh - 1))p" | span "$lx" "$lw")
  # The axis keeps the newest step at 90% to 100% of the width; the newest
  # point is a bucket's mean, drawn at its middle step and in whole cells,
  # a little to the left of that.
  [ "$step" -gt 50 ] && [ "$across" -ge 85 ]
  check $? "$size: the newest point (step $step) within the last 15% of the loss chart's width ($across% across)"

  no_cut "$size lab view"
  set -- $(rect alignchart)
  if [ -n "$1" ]; then
    # the alignment chart's scores are cosines and CKA: its y axis stops at 1
    top=$(screen | sed -n "$(($1 + 2)),$(($1 + $3))p" | cols "$2" "$4" | sed -n 's/^│ *\([-0-9.][0-9.]*\)[│┤].*/\1/p' | sort -g | tail -n 1)
    [ -n "$top" ] && awk -v t="$top" 'BEGIN { exit !(t <= 1) }'
    check $? "$size: the alignment chart's y axis ends at or below 1 (top label ${top:-none})"
  fi
  lens=$(screen | grep '╭ lens KL bits')
  printf '%s\n' "$lens" | grep -q 'online @[0-9]'
  check $? "$size: the lens panel says the tuned lens is the online one, at its step"
  key Tab
  wait_for '●untied' 30 && wait_for 'untied now|untied:' 30
  no_cut "$size lab view, the untied run selected"
  key Tab Tab Tab Tab
  wait_for '●tied' 30 && wait_for 'align tied vs untied @' 30
  # Each zoom in turn (ui.zoom's order), known by its title alone on top.
  for z in loss:'^╭ loss ':'grad out/in' ratio:'^╭ grad out/in':'^╭ loss ' align_chart:'^╭ align tied ':'^╭ grad out/in' \
    lens:'^╭ lens KL bits':'^╭ align tied ' \
    align:'^╭ align tied vs untied':'lens KL bits' extra:'^╭ grad L2':'align tied vs'; do
    name=${z%%:*} rest=${z#*:}
    key z
    wait_for "${rest%%:*}" 30 && wait_gone "${rest#*:}" 30
    check $? "$size: z zooms $name"
    no_cut "$size zoom $name" 0 "$COLS"
  done
  key z
  wait_for 'align tied vs untied @' 30
  key '?'
  wait_for 'tielab keys' 30
  bw=$((COLS - 2 < 78 ? COLS - 2 : 78))
  no_cut "$size help" $(((COLS - bw) / 2)) "$bw"
  key '?'
  wait_gone 'tielab keys' 30
  key p
  wait_gone 'lens KL bits' 30 && wait_for '^╭ loss' 30
  check $? "$size: p shows the present view"
  no_cut "$size present view" 0 "$COLS"
  key p
  wait_for 'align tied vs untied @' 30
done

# ---------------------------------------------------------------- a caption
# A script's caption on the hint line, shortened on purpose, beside the
# keys a speaker must find.
COLS=80 ROWS=24
$T resize-window -t t -x "$COLS" -y "$ROWS" 2>/dev/null || $T resize-pane -t t -x "$COLS" -y "$ROWS"
cat >"$WORK/caption.lua" <<'LUA'
local lab = require "tielab"
lab.caption("Boost the input side five-fold: does the matrix move toward E_in, or does it stay?")
lab.run{name = "tied", tie = "tied", vocab = 256, dim = 32, layers = 2, heads = 2, ctx = 32, batch = 4}
LUA
start "$WORK/caption.lua"
wait_for '^Boost the input side' 300
hint=$(screen | sed -n '$p')
case $hint in "Boost the input side five-fold:"*"$ELL"*"p present"*"? help"*"q quit") r=0 ;; *) r=1 ;; esac
check $r "80x24: a long caption shortened with an ellipsis, p, ? and q beside it"
no_cut "80x24 with a caption"

# ---------------------------------------------------------------- wide names
# Two runs named in CJK text, two columns a character, too long for the
# status line and the legends whole: each shows both names whole or cut
# around an ellipsis, never by an edge; each chart's legend keeps to its
# own columns (the last one blank), so the chart to the right of the loss
# chart begins with its title where the layout puts it.
WIDE1=$(printf '\346\235\261\344\272\254\343\201\256\345\255\246\347\277\222\347\216\207\345\256\237\351\250\223_\347\265\220\345\220\210\343\201\202\343\202\212')
WIDE2=$(printf '\345\244\247\351\230\252\343\201\256\345\255\246\347\277\222\347\216\207\345\256\237\351\250\223_\347\265\220\345\220\210\343\201\252\343\201\227')
cat >"$WORK/wide.lua" <<LUA
local lab = require "tielab"
lab.run{name = "$WIDE1", tie = "tied", vocab = 256, dim = 32, layers = 2, heads = 2, ctx = 32, batch = 4}
lab.run{name = "$WIDE2", tie = "untied", vocab = 256, dim = 32, layers = 2, heads = 2, ctx = 32, batch = 4}
LUA
start "$WORK/wide.lua"
# A script's lab starts paused: train, so the charts have lines and "val".
wait_for 'PAUSED step' 300 && key Space && wait_step 150
started=$?
screen >"$WORK/wide"
wrong=
named "$WIDE1" "$(sed -n 1p "$WORK/wide")" && named "$WIDE2" "$(sed -n 1p "$WORK/wide")" || wrong="$wrong status line,"
for chart in loss ratio; do
  set -- $(rect $chart)
  y=$1 x=$2 w=$4
  legend=$(sed -n "$((y + 1)),$((y + 2))p" "$WORK/wide" | dcols "$x" "$w")
  named "$WIDE1" "$legend" && named "$WIDE2" "$legend" || wrong="$wrong $chart legend's names,"
  last=$(sed -n "$((y + 1)),$((y + 2))p" "$WORK/wide" | dcols $((x + w - 2)) 1 | tr -d ' ─\n')
  [ -z "$last" ] || wrong="$wrong $chart legend's last column,"
done
set -- $(rect ratio)
[ "$(sed -n "$(($1 + 1))p" "$WORK/wide" | dcols $(($2 + 2)) 11)" = "grad out/in" ] || wrong="$wrong grad out/in's place,"
[ $started -eq 0 ] && [ -z "$wrong" ]
check $? "80x24, two runs named in CJK: the status line and each legend name both, whole or cut around an ellipsis, each legend within its chart's columns, the next chart's title where it belongs${wrong:+ (wrong:${wrong%,})}"

finish
