#!/bin/sh
# test_record.sh -- tielab --record FILE.cast: the lab trains in a private
# tmux server's pane, is resized once and quits; the cast must be a valid
# asciicast v2 file (checked by tests/ui/cast_check: the header with the
# pane's size, then [time, "o"|"r", data] events with times that never go
# back), and its output played into a fresh pane of the final size must
# show exactly the screen the lab showed last. Also reports the cast's
# bytes per second while training at 80x24 and 200x60. Every wait polls
# the screen up to a deadline. Prints TAP.

: "${top_builddir:=.}" "${top_srcdir:=.}"
tmux_name=record; . "$top_srcdir/tests/lib/tmux.sh"
CHECK=$top_builddir/tests/ui/cast_check
case $CHECK in /*) ;; *) CHECK=$PWD/$CHECK ;; esac
[ -x "$CHECK" ] || bail_out "$CHECK was not built"

# The screen's glyphs with their SGR sequences, blanks and line ends left
# out: the text comparison checks where everything is, and the colour of
# a blank cell cannot be seen (curses may erase a run of them or write
# them, and the terminal keeps a colour only for the second).
# tmux writes a cell's attributes as it finds them changed, so two equal
# screens may show, say, dim and the default colour in either order: runs
# of SGR sequences are put in one order (each run cut at a reset, which
# stays first) before comparing.
styled() {
  $T capture-pane -e -p -t "$1" 2>/dev/null | tr -d '\n ' |
    perl -pe 'sub seg { my @q = $_[0] =~ /\e\[[0-9;]*m/g; my $h = $q[0] =~ /^\e\[(?:0[;m]|m)/ ? shift @q : ""; $h . join "", sort @q }
              s/((?:\e\[[0-9;]*m)+)/join "", map { seg($_) } split m{(?=\e\[(?:0[;m]|m))}, $1/ge'
}
# start FILE ARGS...: tielab recording to FILE, its stderr kept apart.
start() {
  cast=$1
  shift
  in_pane "clear; $ENV $TIELAB --record $cast $* 2>'$WORK/stderr'"
}
type_text() { $T send-keys -t t -l "$1"; }
# settled: the screen stands still over a few polls (training is paused).
settled() {
  a=$(screen) i=0
  while [ $i -lt 50 ]; do
    sleep 0.2
    b=$(screen)
    [ "$a" = "$b" ] && return 0
    a=$b i=$((i + 1))
  done
  return 1
}

session 80 24

# ---------------------------------------------------------------- a recording, resized once
start "$WORK/a.cast" "$MODEL"
wait_for 'RUNNING step [1-9][0-9]' 300
check $? "the lab trains while it records"
$T resize-window -t t -x 100 -y 30
wait_for '^╭ loss' 50 && [ "$(pane '#{window_width}x#{window_height}')" = 100x30 ]
check $? "the pane is resized to 100x30 while recording"
key :
type_text 'ui.running(false)'
key Enter
wait_for 'PAUSED step' 50
check $? "training paused from the REPL"
type_text 'ui.quit(false)'
wait_for '> ui.quit\(false\)' 50 && settled
check $? "the screen stands still before quitting"
screen >"$WORK/live.txt"
styled t >"$WORK/live.sgr"
key Enter
wait_dead 100
check $? "the lab quits"
grep -q "recorded .* to $WORK/a.cast" "$WORK/stderr"
check $? "on the way out it says where the recording went"

"$CHECK" "$WORK/a.cast" 80 24 "$WORK/play.raw" >"$WORK/check.txt"
check $? "the cast is valid asciicast v2: header of the pane's size, ordered [time, code, data] events ($(cat "$WORK/check.txt"))"
grep -q '"r", "100x30"\]$' "$WORK/a.cast"
check $? "the resize is an \"r\" event with the new size"

$T new-session -d -s play -x 100 -y 30 "cat '$WORK/play.raw'; exec sleep 600"
i=0
while [ $i -lt 100 ]; do
  screen play >"$WORK/played.txt"
  cmp -s "$WORK/live.txt" "$WORK/played.txt" && break
  sleep 0.1
  i=$((i + 1))
done
cmp -s "$WORK/live.txt" "$WORK/played.txt"
check $? "played back in a fresh 100x30 pane, the cast shows the lab's last screen exactly"
[ $i -lt 100 ] || diff "$WORK/live.txt" "$WORK/played.txt" | sed 's/^/#   /' | head -n 20
styled play >"$WORK/played.sgr"
cmp -s "$WORK/live.sgr" "$WORK/played.sgr"
check $? "and with the same colours and attributes in every cell (capture-pane -e)"
if ! cmp -s "$WORK/live.sgr" "$WORK/played.sgr"; then
  at=$(cmp "$WORK/live.sgr" "$WORK/played.sgr" | sed -n 's/.* byte \([0-9]*\),.*/\1/p')
  from=$((at > 100 ? at - 100 : 1))
  for f in live played; do echo "# $f: $(cut -b "$from-$((at + 100))" "$WORK/$f.sgr" | cat -v)"; done
fi
$T kill-session -t play

# asciinema itself, when installed, reads the cast and plays the same bytes
# (its 'cat' wants a terminal: it runs in a pane).
if have asciinema; then
  $T new-session -d -s asc -x 100 -y 30 "asciinema cat '$WORK/a.cast' >'$WORK/asc.raw' 2>'$WORK/asc.err'; echo \$? >'$WORK/asc.status'; exec sleep 600"
  i=0
  while [ $i -lt 100 ] && [ ! -s "$WORK/asc.status" ]; do sleep 0.1; i=$((i + 1)); done
  [ "$(cat "$WORK/asc.status" 2>/dev/null)" = 0 ] && cmp -s "$WORK/asc.raw" "$WORK/play.raw"
  check $? "asciinema cat reads the cast and writes exactly its output events"
  $T kill-session -t asc
else
  skip "asciinema cat: asciinema is not installed (Debian package asciinema)"
fi

# ---------------------------------------------------------------- bytes per second while training
rate() {   # rate COLS ROWS: record a few seconds of training at that size
  $T resize-window -t t -x "$1" -y "$2"
  start "$WORK/r$1.cast" "$MODEL"
  wait_for 'RUNNING step [1-9][0-9]{3}' 600 && wait_for 'RUNNING step [3-9][0-9]{3}|RUNNING step [0-9]{5}' 600
  key q
  wait_for 'Save' 50 && key n
  wait_dead 100
  "$CHECK" "$WORK/r$1.cast" "$1" "$2" >"$WORK/r$1.txt" || return 1
  read -r _ events _ seconds _ bytes _ steady <"$WORK/r$1.txt"
  echo "# $1x$2: $events events over $seconds s, $bytes bytes of output; $steady bytes/s after the first second"
}
rate 80 24
check $? "a cast of training at 80x24 is valid"
rate 200 60
check $? "a cast of training at 200x60 is valid"

# ---------------------------------------------------------------- a full disk, and no screen
$T resize-window -t t -x 80 -y 24
start /dev/full "$MODEL"
wait_for 'the recording stopped \(No space left on device\)' 300
check $? "a cast to a full disk: the screen says the recording stopped, and why"
s=$(step_now)
wait_step $((s + 20))
check $? "the lab goes on training"
key q
wait_for 'Save' 50 && key n
wait_dead 100
grep -q "/dev/full: could not write the whole recording: No space left on device" "$WORK/stderr" &&
  ! grep -q "recorded .* to /dev/full" "$WORK/stderr"
check $? "on the way out it reports the failure, not a recording"
(cd "$WORK" && env TERM=dumb OPENBLAS_NUM_THREADS=1 XDG_CACHE_HOME="$WORK/cache" "$TIELAB" --record dumb.cast $MODEL </dev/null >"$WORK/dumb.out" 2>&1)
rc=$?
[ $rc -eq 1 ] && [ ! -e "$WORK/dumb.cast" ] && grep -q -- "--record records the screen, and this terminal (TERM=dumb) has none" "$WORK/dumb.out"
check $? "with no screen (TERM=dumb) --record is refused, and no invalid cast is left (exit $rc)"

finish
