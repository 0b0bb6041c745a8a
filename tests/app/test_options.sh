#!/bin/sh
# test_options.sh -- every option that --help lists, in every mode: either
# used (the output changes, or its value shows in the output) or refused
# with exit status 2 and a message naming the option and the mode. The
# lab runs as the line REPL (TERM=dumb) fed a probe on its input; the
# screen-only options (--ascii, --theme, --record) run the screen under
# script(1) and are judged by the cast it records.
: "${top_builddir:=.}" "${top_srcdir:=.}"
tap_name=opts; . "${srcdir:-.}/tests/lib/tap.sh"
paper=$(cd "$top_srcdir/lua" && pwd)/paper.lua
models_py=$(cd "$top_srcdir/tests/lib" && pwd)/make_models.py
cd "$tmp" || exit 1
# an init file that says it ran, so that --no-init shows where it is used
mkdir -p "$tmp/config/tielab"
echo 'print("init=ran")' >"$tmp/config/tielab/init.lua"
export XDG_STATE_HOME="$tmp/state" XDG_CONFIG_HOME="$tmp/config" TERM=dumb
BASE="--vocab 256 --dim 16 --heads 2 --layers 1 --ctx 8 --batch 2 --threads 1"
QUIET="--lens-every 0 --eval-every 0 --align-every 0"   # no instruments: quicker
RUN=$CAP   # the address-space cap, but none under AddressSanitizer

cat >probe.lua <<'LUA'
local r = lab.runs[1] or lab.run{}
local o, keys = r:options(), {}
for k in pairs(o) do keys[#keys + 1] = k end
table.sort(keys)
for _, k in ipairs(keys) do print(k .. "=" .. tostring(o[k])) end
print("run=" .. r.name)
print("execute=" .. tostring(os.execute ~= nil))
local _, cap = lab.mem()
print("lua_cap=" .. cap)
LUA
# --compare paper runs the paper.lua the script search path finds first:
# here the working directory's, which runs the shipped one at one seed and
# no lens fits (as quick as the other modes), then the probe on its first arm.
cat >paper.lua <<LUA
arg = {[0] = "$paper", "seeds=1", "scales=5", "fit=", "out=", table.unpack(arg)}
dofile(arg[0])
dofile("probe.lua")
LUA
awk 'BEGIN { for (i = 0; i < 400; i++) print "the quick brown fox jumps over the lazy dog " i }' >corpus.txt
printf 'print(1 + 1)\n' | $RUN "$tielab" --journal "$tmp/journal" $BASE >/dev/null 2>&1

# The words of an option as the test gives it.
args_of() {
  case $1 in
    --steps) echo "--steps 3" ;;
    --bench-warmup) echo "--bench-warmup 2" ;;
    --print-every) echo "--print-every 1" ;;
    --compare) echo "--compare paper" ;;
    --theme) echo "--theme mono" ;;
    --lua-mem) echo "--lua-mem 512" ;;
    --record) echo "--record $tmp/x.cast" ;;
    --journal) echo "--journal $tmp/x.journal.$2" ;;
    --replay) echo "--replay $tmp/journal" ;;
    --inspect) echo "--inspect $tmp/model" ;;
    --against) echo "--against $tmp/model" ;;
    --json) echo "--json" ;;
    --name) echo "--name zz" ;;
    --vocab) echo "--vocab 300" ;;
    --dim) echo "--dim 24" ;;
    --layers) echo "--layers 2" ;;
    --heads) echo "--heads 4" ;;
    --ctx) echo "--ctx 12" ;;
    --batch) echo "--batch 3" ;;
    --tie) echo "--tie untied" ;;
    --tie-merge) echo "--tie-merge out" ;;
    --seed | --init-seed | --data-seed | --corpus-seed) echo "$1 7" ;;
    --lr) echo "--lr 0.003" ;;
    --in-scale) echo "--in-scale 3" ;;
    --out-scale) echo "--out-scale 2" ;;
    --corpus) echo "--corpus $tmp/corpus.txt" ;;
    --corpus-max) echo "--corpus-max 5" ;;
    --lens-every | --eval-every | --align-every) echo "$1 1" ;;
    --partner) echo "--partner untied" ;;
    --threads) echo "--threads 3" ;;
    --warmup) echo "--warmup 2" ;;
    --warmup-start) echo "--warmup-start 0.5" ;;
    --schedule) echo "--schedule cosine --decay-steps 10" ;;
    --decay-steps) echo "--decay-steps 4" ;;
    --lr-min) echo "--lr-min 0.0005" ;;
    --lr-min-ratio) echo "--lr-min-ratio 0.25" ;;
    --eps) echo "--eps 0.01" ;;
    --beta1) echo "--beta1 0.8" ;;
    --beta2) echo "--beta2 0.9" ;;
    --weight-decay) echo "--weight-decay 2" ;;
    --optimizer) echo "--optimizer sgd" ;;
    --momentum) echo "--momentum 0.5" ;;
    --nesterov) echo "--optimizer sgd --momentum 0.5 --nesterov" ;;
    --clip) echo "--clip 0.01" ;;
    --grad-scale) echo "--grad-scale 2" ;;
    --emb-lr-scale) echo "--emb-lr-scale 2" ;;
    --emb-warmup) echo "--emb-warmup 2" ;;
    --recipe) echo "--recipe olmo" ;;
    --headless | --bench | --instruments | --forward | --align | --resume | --sandbox | --no-init | --ascii | --trust | --help | --version | \
    --decay-all) echo "$1" ;;
    *) return 1 ;;
  esac
}

# What an option needs beside it to matter at all (a warmup's start needs a
# warmup, momentum the SGD optimizer, ...): the test runs the option with
# these words and compares with a run of these words alone.
companion_of() {
  [ "$2:$1" = inspect:--threads ] && { echo "--against $tmp/model"; return; }   # threads serve Table 1
  case $1 in
    --warmup-start) echo "--warmup 2 --schedule cosine --decay-steps 10" ;;
    --decay-steps) echo "--schedule cosine --decay-steps 50" ;;
    --lr-min | --lr-min-ratio) echo "--lr 0.001 --schedule linear --decay-steps 3" ;;   # an lr above the floor (--compare's recipe has 3e-4)
    --momentum) echo "--optimizer sgd" ;;
    --grad-scale) echo "--optimizer sgd --lr 0.5 --clip 0" ;;
    --weight-decay | --decay-all | --clip | --eps) echo "--lr 0.1" ;;
  esac
}

# The mode's words, its name in messages; 'run MODE ARGS' leaves the output in out.
mode_phrase() {
  case $1 in
    lab) echo "the interactive lab" ;;
    lab-script) echo "the lab with a script" ;;
    script) echo "a --headless script" ;;
    loop) echo "the built-in --headless loop" ;;
    compare) echo "--compare paper" ;;
    bench) echo "--bench" ;;
    bench-instruments) echo "--bench --instruments" ;;
    replay) echo "--replay" ;;
    inspect) echo "--inspect" ;;
  esac
}

run() {
  mode=$1
  shift
  base="$BASE $QUIET"
  [ "$1" = --resume ] && base=   # --resume takes the saved runs as they were
  case $mode in
    lab) echo 'dofile("probe.lua")' | $RUN "$tielab" $base "$@" ;;
    lab-script) $RUN "$tielab" $base "$@" probe.lua </dev/null ;;
    script) $RUN "$tielab" --headless $base "$@" probe.lua ;;
    loop) $RUN "$tielab" --headless $BASE --eval-every 0 --steps 6 --print-every 2 "$@" ;;
    compare) $RUN "$tielab" --headless --compare paper $BASE --lens-every 0 --steps 2 "$@" ;;
    bench) $RUN "$tielab" --bench $BASE --steps 2 --bench-warmup 0 "$@" ;;
    bench-instruments) $RUN "$tielab" --bench --instruments $base --steps 2 --bench-warmup 0 "$@" ;;
    replay) $RUN "$tielab" --replay "$tmp/journal" "$@" ;;
    inspect) $RUN "$tielab" --inspect "$tmp/model" "$@" ;;
  esac >"out.$mode" 2>&1
  status=$?
  out=out.$mode norm=norm.$mode
  # what changes from run to run: timings, the autosave folder, prompts
  sed -E -e 's/"(tokens_per_s|step_ms|step_ms_min|step_ms_max|fwd_ms|bwd_ms|opt_ms|gflops)":[0-9.e+-]*//g' \
    -e 's/^( +[0-9]+ +[0-9.]+ +[-0-9.]+ +[-0-9.]+) +[0-9]+$/\1/' -e 's|autosave/[^ ]*|autosave/X|' -e '/^> *$/d' \
    -E -e '1s/^(# [^:]*: [0-9]+ steps).*/\1/' "$out" >"$norm"   # the settings the loops echo are not a use
  return $status
}

# --inspect reads a released model's folder, written here in GPT-2's layout.
INSPECT=inspect
"$py" "$models_py" gpt2 "$tmp/model" --vocab 300 --dim 16 >/dev/null 2>&1 || INSPECT=
MODES="lab lab-script script loop compare bench bench-instruments replay $INSPECT"
for m in $MODES; do run "$m"; cp "$norm" "base.$m"; done

# Screen options in the lab modes: the cast of the screen, quit with q y.
screen_cast() {   # screen_cast CAST [SCRIPT] OPTIONS...
  cast=$1 script=$2
  shift 2
  (sleep 1; printf q; sleep 0.3; printf y; sleep 0.5) |
    TERM=xterm-256color timeout 20 script -qec "$tielab --record $cast $BASE $* $script" /dev/null >/dev/null 2>&1
}
sgr_set() { grep -io 'u001b\[[0-9;]*m' "$1" | sort -u; }
glyphs() { LC_ALL=C tr -d '\000-\177' <"$1" | wc -c; }

screen_used() {   # screen_used OPTION SCRIPT MODE: whether the option shows in the cast
  c=$tmp/$3
  case $1 in
    --record) screen_cast "$c.r.cast" "$2" && [ -s "$c.r.cast" ] ;;
    --ascii) screen_cast "$c.a.cast" "$2" --ascii && [ "$(glyphs "$c.a.cast")" -lt $(($(glyphs "$tmp/base.cast") / 4)) ] ;;
    --theme) screen_cast "$c.t.cast" "$2" --theme mono && [ "$(sgr_set "$c.t.cast")" != "$(sgr_set "$tmp/base.cast")" ] ;;
  esac
}

# judge MODE OPTION: one line 'pass WHAT', 'fail WHAT' or 'skip WHY' (and
# '#' lines of detail), for the lanes' outputs to be counted in order.
judge() {
  m=$1 opt=$2
  words=$(args_of "$opt" "$m") || { echo "fail $opt has no test value"; return; }
  key=$(echo "${opt#--}" | tr - _)
  value=$(echo "$words" | awk '{ print (NF > 1 && $(NF - 1) == "'"$opt"'") ? $NF : "true" }')
  if { [ "$m" = lab ] || [ "$m" = lab-script ]; } &&
     { [ "$opt" = --ascii ] || [ "$opt" = --theme ] || [ "$opt" = --record ]; }; then
    if ! have script; then echo "skip $m: $opt: no script(1) to give the screen a terminal"; return; fi
    script=; [ "$m" = lab-script ] && script=probe.lua
    if screen_used "$opt" "$script" "$m"; then echo "pass $m: $opt is used (the screen shows it)"
    else echo "fail $m: $opt does not change the screen"; fi
    return
  fi
  case $m:$opt in   # the option that chooses the mode is in the mode's own words
    script:--headless | loop:--headless | compare:--headless | compare:--compare | bench*:--bench | \
    bench-instruments:--instruments | replay:--replay | inspect:--inspect)
      echo "pass $m: $opt chooses the mode"
      return ;;
  esac
  with=$(companion_of "$opt" "$m")
  baseline=base.$m
  if [ -n "$with" ]; then   # the companion's own run is the baseline
    baseline=base.$m.$(echo "$with" | tr -c 'a-z0-9\n' _)
    # shellcheck disable=SC2086
    [ -f "$baseline" ] || { run "$m" $with && cp "$norm" "$baseline"; }
    [ -f "$baseline" ] || { with=; baseline=base.$m; }   # the mode refuses the companion: the option alone
  fi
  # shellcheck disable=SC2086
  run "$m" $with $words
  st=$?
  phrase=$(mode_phrase "$m")
  case $opt in --headless | --bench | --instruments | --compare | --replay | --inspect | --help | --version) phrase= ;; esac
  named=0
  for w in $words; do case $w in --*) grep -qF -- "$w" "$out" && named=1 ;; esac; done
  if [ "$st" = 2 ] && [ "$named" = 1 ] && grep -qF -- "$phrase" "$out"; then
    echo "pass $m: $opt is refused"
  elif [ "$st" = 0 ] && { grep -Eq -- "$key[\"=: ]{1,3}$value" "$norm" || ! cmp -s "$norm" "$baseline"; }; then
    echo "pass $m: $opt is used"
  elif [ "$opt" = --threads ] && [ "$st" = 0 ] && grep -Eq -- "threads[\"=: ]{1,3}3" "$out"; then
    echo "pass $m: $opt is used (threads change the speed, not the numbers: the run's settings show it)"
  elif [ "$opt" = --journal ] && [ "$st" = 0 ] && [ -s "$tmp/x.journal.$m" ]; then
    echo "pass $m: $opt is used (the journal is written)"
  else
    echo "fail $m: $opt neither used nor refused (status $st)"
    sed 's/^/# /' "$out" | head -4
  fi
}

if have script; then screen_cast "$tmp/base.cast" ""; fi
# A saved lab for --resume to find. The modes' first runs do not step: at
# the end of their input they save only when training took a step before
# it, which on a busy machine it need not have.
echo 'lab.step(2)' | $RUN "$tielab" $BASE $QUIET >saved.out 2>&1 && grep -q '^> saved ' saved.out ||
  bail_out "a lab that stepped did not save at the end of its input: $(tail -n 1 saved.out)"
options=$("$tielab" --help | sed -nE 's/^  (-[a-zA-Z], )?(--(\[no-\])?[a-z][a-z0-9-]*).*/\2/p' | sed 's/\[no-\]//')
[ "$(echo "$options" | wc -l)" -gt 50 ] || bail_out "--help lists fewer than 50 options"
# Two lanes of modes side by side; the lines are numbered at the end.
# Each lane saves and resumes in a state folder of its own, a copy of the
# one the modes' first runs saved into: the other lane's saves and
# resumes, at times that depend on the machine's load, never meet its own.
lane() {
  XDG_STATE_HOME=$tmp/state-$1
  cp -r "$tmp/state" "$XDG_STATE_HOME"
  shift
  for m in "$@"; do for opt in $options; do judge "$m" "$opt"; done; done
}
lane 1 lab script compare bench $INSPECT >lane1 &
[ -n "$INSPECT" ] || echo "skip the --inspect mode: no $py to write a model folder" >>lane1
lane 2 lab-script loop bench-instruments replay >lane2
wait
# The lanes' lines in order, each result through tap.sh.
while IFS= read -r line; do
  case $line in
    "pass "*) ok 0 "${line#pass }" ;;
    "fail "*) ok 1 "${line#fail }" ;;
    "skip "*) skip "${line#skip }" ;;
    *) echo "$line" ;;
  esac
done <<LANES
$(cat lane1 lane2)
LANES
tap_done
