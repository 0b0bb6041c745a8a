#!/bin/sh
# test_record.sh -- tielab --record FILE.cast: the lab trains in a private
# tmux server's pane, is resized once and quits; the cast must be a valid
# asciicast v2 file (checked by tests/cast_check: the header with the
# pane's size, then [time, "o"|"r", data] events with times that never go
# back), and its output played into a fresh pane of the final size must
# show exactly the screen the lab showed last. Also reports the cast's
# bytes per second while training at 80x24 and 200x60. Every wait polls
# the screen up to a deadline. Prints TAP.

: "${top_builddir:=.}" "${top_srcdir:=.}"
TIELAB=${TIELAB:-$top_builddir/tielab}
case $TIELAB in /*) ;; *) TIELAB=$PWD/$TIELAB ;; esac
CHECK=$top_builddir/tests/cast_check
case $CHECK in /*) ;; *) CHECK=$PWD/$CHECK ;; esac

if ! command -v tmux >/dev/null 2>&1; then echo "1..0 # SKIP tmux is not installed"; exit 0; fi
if [ ! -x "$TIELAB" ] || [ ! -x "$CHECK" ]; then echo "1..0 # SKIP tielab or cast_check was not built"; exit 0; fi

SOCK=tielab-record-$$
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tielab-record.XXXXXX") || exit 1
T="tmux -L $SOCK -f /dev/null"
cleanup() {
  pid=$(tielab_pid 2>/dev/null)
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
  $T kill-server >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
MODEL="--vocab 256 --dim 32 --layers 2 --heads 2 --ctx 32 --batch 4"
ENV="env -u LC_ALL -u LC_CTYPE LANG=C.UTF-8 NO_COLOR= XDG_STATE_HOME=$WORK/state XDG_CACHE_HOME=${XDG_CACHE_HOME:-$WORK/cache} OPENBLAS_NUM_THREADS=1"

n=0 failed=0
screen() { $T capture-pane -p -t "${1:-t}" 2>/dev/null; }
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
pass() { n=$((n + 1)); echo "ok $n - $1"; }
fail() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; screen | sed 's/^/#   |/'; }
check() { if [ "$1" -eq 0 ]; then pass "$2"; else fail "$2"; fi; }
wait_for() {
  i=0
  while [ $i -lt "${2:-100}" ]; do
    screen "${3:-t}" | grep -Eq -- "$1" && return 0
    sleep 0.1
    i=$((i + 1))
  done
  return 1
}
pane() { $T display -p -t t "$1"; }
tielab_pid() { pgrep -P "$(pane '#{pane_pid}')" | head -n 1; }
wait_dead() {
  i=0
  while [ $i -lt "${1:-100}" ]; do
    [ -s "$WORK/status" ] && return 0
    sleep 0.1
    i=$((i + 1))
  done
  return 1
}
# start FILE ARGS...: tielab recording to FILE, its stderr kept apart.
start() {
  cast=$1
  shift
  rm -f "$WORK/status"
  $T respawn-pane -k -t t "clear; $ENV $TIELAB --record $cast $* 2>'$WORK/stderr'; echo \$? >'$WORK/status'"
}
key() { $T send-keys -t t "$@"; }
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

$T new-session -d -s t -x 80 -y 24 "sleep 600" || { echo "1..0 # SKIP cannot start tmux"; exit 0; }
$T set -g remain-on-exit on
$T set -sg escape-time 0

# ---------------------------------------------------------------- a recording, resized once
start "$WORK/a.cast" "$MODEL"
wait_for 'RUNNING step [1-9][0-9]' 300
check $? "the lab trains while it records"
$T resize-window -t t -x 100 -y 30
wait_for '^loss' 50 && [ "$(pane '#{window_width}x#{window_height}')" = 100x30 ]
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
if command -v asciinema >/dev/null 2>&1; then
  $T new-session -d -s asc -x 100 -y 30 "asciinema cat '$WORK/a.cast' >'$WORK/asc.raw' 2>'$WORK/asc.err'; echo \$? >'$WORK/asc.status'; exec sleep 600"
  i=0
  while [ $i -lt 100 ] && [ ! -s "$WORK/asc.status" ]; do sleep 0.1; i=$((i + 1)); done
  [ "$(cat "$WORK/asc.status" 2>/dev/null)" = 0 ] && cmp -s "$WORK/asc.raw" "$WORK/play.raw"
  check $? "asciinema cat reads the cast and writes exactly its output events"
  $T kill-session -t asc
else
  n=$((n + 1))
  echo "ok $n # SKIP asciinema is not installed"
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

echo "1..$n"
exit $((failed > 0))
