# tmux.sh -- the lab in a real terminal, driven the way tmux's own regress
# tests drive tmux: a private server (-L), no configuration file, a pane
# running tielab; keys go in with send-keys and every step is checked on
# capture-pane's text. Each wait polls until a pattern shows or a deadline
# passes; nothing sleeps and hopes. Sourced after the defaults of
# top_builddir and top_srcdir, with 'tmux_name' naming the test:
#
#   tmux_name=ui; . "$top_srcdir/tests/lib/tmux.sh"
#   session 80 24
#   start "$MODEL"
#   wait_for 'RUNNING step [1-9]' 300
#   check $? "training starts"
#   finish
#
# It skips the whole test where tmux is missing, and bails out where
# tielab was not built. The TAP helpers are tests/lib/tap.sh's (skip, have,
# bail_out); it sets TIELAB (absolute), T (the tmux command), WORK (a
# fresh folder, removed at exit), MODEL (a tiny model's options), BASE and
# ENV (the environment tielab runs in); the pane is 't'. Prints TAP.

tap_name=${tmux_name:-test}; . "${top_srcdir:-.}/tests/lib/tap.sh"
TIELAB=${TIELAB:-${top_builddir:-.}/tielab}
case $TIELAB in /*) ;; *) TIELAB=$PWD/$TIELAB ;; esac

have tmux || skip_all "tmux is not installed"
have pgrep || skip_all "no pgrep to find the lab in its pane (Debian package procps)"
[ -x "$TIELAB" ] || bail_out "$TIELAB was not built"

SOCK=tielab-${tmux_name:-test}-$$
WORK=$tmp
T="tmux -L $SOCK -f /dev/null"
# At the end a tielab still running is killed outright: a hangup from
# kill-server would make it save into the folder being removed.
cleanup() {
  pid=$(tielab_pid 2>/dev/null)
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
  $T kill-server >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
MODEL="--vocab 256 --dim 32 --layers 2 --heads 2 --ctx 32 --batch 4"
# State (autosaves) in the work folder; the cache make check shares between
# tests, or one of its own; one BLAS thread, as make check runs every test.
BASE="XDG_STATE_HOME=$WORK/state XDG_CACHE_HOME=${XDG_CACHE_HOME:-$WORK/cache} OPENBLAS_NUM_THREADS=1"
ENV="env -u LC_ALL -u LC_CTYPE LANG=C.UTF-8 NO_COLOR= $BASE"
# More environment for the next start; empty unless a test sets it, so
# that none leaks in from the caller's.
EXTRA=

# screen [PANE]: the pane's text ('t' unless named).
screen() { $T capture-pane -p -t "${1:-t}" 2>/dev/null; }
show() { screen | sed 's/^/#   |/'; }
pass() { n=$((n + 1)); echo "ok $n - $1"; }
# A failure shows the screen it saw, which says more than the message.
fail() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; show; }
check() { if [ "$1" -eq 0 ]; then pass "$2"; else fail "$2"; fi; }
# finish: the plan, and the exit status that says whether all passed.
finish() { tap_done; }

# session COLS ROWS: the server and its pane 't', which waits for a start;
# a pane whose program ended stays, so its last screen can be read; escape
# sequences are not waited for, so that Escape reaches tielab at once.
session() {
  $T new-session -d -s t -x "$1" -y "$2" "sleep 600" || bail_out "tmux cannot start a server"
  $T set -g remain-on-exit on
  $T set -sg escape-time 0
}

# wait_for REGEX [TENTHS [PANE]]: until the screen matches (default 10 s).
wait_for() {
  i=0
  while [ $i -lt "${2:-100}" ]; do
    screen "${3:-t}" | grep -Eq -- "$1" && return 0
    sleep 0.1
    i=$((i + 1))
  done
  return 1
}
# wait_row ROW REGEX [TENTHS]: until screen row ROW (1-based) matches.
wait_row() {
  i=0
  while [ $i -lt "${3:-100}" ]; do
    screen | sed -n "$1p" | grep -Eq -- "$2" && return 0
    sleep 0.1
    i=$((i + 1))
  done
  return 1
}
# wait_gone REGEX [TENTHS]: until the screen no longer matches.
wait_gone() {
  i=0
  while [ $i -lt "${2:-100}" ]; do
    screen | grep -Eq -- "$1" || return 0
    sleep 0.1
    i=$((i + 1))
  done
  return 1
}

pane() { $T display -p -t t "$1"; }
# The pane runs a shell that runs tielab and writes its exit status to a
# file: the shell reaps tielab, and the file says it has ended and how. As
# the shell's child (not exec'd in its place), tielab is what tielab_pid
# finds and the cleanup kills.
# in_pane COMMAND: COMMAND in the pane, in place of what ran there.
in_pane() {
  rm -f "$WORK/status"
  $T respawn-pane -k -t t "$1; echo \$? >'$WORK/status'"
}
# start ARGS...: a new tielab in the pane ($EXTRA: more environment).
start() { in_pane "clear; $ENV $EXTRA $TIELAB $*"; }
tielab_pid() { pgrep -P "$(pane '#{pane_pid}')" | head -n 1; }
status() { cat "$WORK/status" 2>/dev/null; }
# wait_file FILE [TENTHS]: until FILE holds something (default 10 s).
wait_file() {
  i=0
  while [ $i -lt "${2:-100}" ]; do
    [ -s "$1" ] && return 0
    sleep 0.1
    i=$((i + 1))
  done
  return 1
}
# wait_dead [TENTHS]: until tielab has ended.
wait_dead() { wait_file "$WORK/status" "${1:-100}"; }

key() { $T send-keys -t t "$@"; }
# type_line TEXT: TEXT as typed (-l: no word read as a key's name), then Enter.
type_line() { $T send-keys -t t -l "$1"; $T send-keys -t t Enter; }
# quit_unsaved: q, no to the save, and whether tielab ended with status 0.
quit_unsaved() {
  key q
  wait_for 'Save [0-9]+ run' 50
  key n
  wait_dead 100 && [ "$(status)" = 0 ]
}
# leave_repl: Esc, then wait until the keys are the lab's again: an Esc
# and the next key read together are Alt+key, which goes to the REPL.
leave_repl() { key Escape; wait_for ': or Enter to type Lua' 50; }
# step_now: the lab's step on the status line.
step_now() { screen | sed -n '1s/.*step \([0-9]*\).*/\1/p'; }
# settled_step [SECONDS [TIMES]]: the step once it stands still for two
# looks SECONDS apart (a fifth of one unless said: a step may be under
# way), looked at no more than TIMES (20) times.
settled_step() {
  a=$(step_now) i=0 same=0
  while [ $i -lt "${2:-20}" ]; do
    sleep "${1:-0.2}"
    b=$(step_now)
    # twice the same: a loaded machine may show a step in flight late
    if [ "$a" = "$b" ]; then same=$((same + 1)); [ $same -ge 2 ] && break; else same=0; fi
    a=$b i=$((i + 1))
  done
  echo "$a"
}
# moved_from STEP [TENTHS]: until the step is another (default 10 s).
moved_from() {
  i=0
  while [ "$(step_now)" = "$1" ] && [ $i -lt "${2:-100}" ]; do sleep 0.1; i=$((i + 1)); done
  [ "$(step_now)" != "$1" ]
}
# wait_step N [TENTHS]: until the step is at least N (default 30 s).
wait_step() {
  i=0
  while [ $i -lt "${2:-300}" ]; do
    s=$(step_now)
    [ -n "$s" ] && [ "$s" -ge "$1" ] && return 0
    sleep 0.1
    i=$((i + 1))
  done
  return 1
}
