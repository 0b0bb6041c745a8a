#!/bin/sh
# test_cli.sh -- the command line as a user meets it: exit statuses 0/1/2,
# one clear line for each bad input, --bench's JSON line, the built-in
# headless loop and --compare paper (paper.lua), boolean settings and the recipe,
# short options and dashed names, options refused by the modes that do not
# use them, and script arguments.
tap_name=cli; . "${srcdir:-.}/tests/lib/tap.sh"
TINY="--vocab 256 --dim 32 --layers 2 --heads 2 --ctx 16 --batch 4 --threads 1"

check() {   # check DESCRIPTION EXPECTED_STATUS PATTERN -- COMMAND...
  desc=$1 want=$2 pattern=$3
  shift 4
  "$@" >"$tmp/out" 2>"$tmp/err"
  got=$?
  n=$((n + 1))
  if [ "$got" = "$want" ] && grep -Eq -- "$pattern" "$tmp/out" "$tmp/err"; then
    echo "ok $n - $desc"
  else
    failed=$((failed + 1))
    echo "not ok $n - $desc (status $got, want $want)"
    sed 's/^/# /' "$tmp/err" | head -5
  fi
}

check "--version" 0 "^tielab [0-9]" -- "$tielab" --version
check "--help lists run options" 0 "--in-scale" -- "$tielab" --help
check "--help lists booleans both ways" 0 "--\\[no-\\]decay-all" -- "$tielab" --help
check "unknown option" 2 "unknown option '--bogus'" -- "$tielab" --bogus
check "single-dash option" 2 "unknown option '-x'" -- "$tielab" -x
check "option without its value" 2 "needs a value" -- "$tielab" --dim
check "heads must divide dim" 2 "heads" -- "$tielab" --headless --dim 30 --heads 4
check "non-numeric size" 2 "'dim'" -- "$tielab" --dim abc
check "size out of range" 2 "'layers'" -- "$tielab" --layers 0
check "bad tie mode" 2 "tie" -- "$tielab" --tie sometimes
check "tie K beyond dim" 2 "tie" -- "$tielab" --dim 32 --heads 2 --tie 40
check "impossible memory is refused with the estimate" 2 "memory|GiB|bytes" -- \
  "$tielab" --headless --vocab 50000 --dim 4096 --layers 200 --heads 8 --ctx 1024 --batch 8
check "negative learning rate" 2 "'lr'" -- "$tielab" --lr -1
check "--resume is for the interactive lab" 2 "resume" -- "$tielab" --headless --resume

check "missing corpus" 1 "nothing.txt" -- "$tielab" --headless $TINY --steps 1 --corpus "$tmp/nothing.txt"
: > "$tmp/empty.txt"
check "empty corpus" 1 "empty.txt.*empty" -- "$tielab" --headless $TINY --steps 1 --corpus "$tmp/empty.txt"
printf 'short text\n' > "$tmp/short.txt"
check "too-short corpus" 1 "short.txt" -- "$tielab" --headless $TINY --steps 1 --corpus "$tmp/short.txt"
head -c 20000 /dev/urandom > "$tmp/binary.bin" 2>/dev/null || dd if=/dev/urandom of="$tmp/binary.bin" bs=1000 count=20 2>/dev/null
check "binary corpus" 1 "binary.bin.*binary" -- "$tielab" --headless $TINY --steps 1 --corpus "$tmp/binary.bin"
check "a directory as corpus" 1 "$tmp" -- "$tielab" --headless $TINY --steps 1 --corpus "$tmp"

check "--bench prints one JSON line" 0 '"tokens_per_s": ?[0-9]' -- \
  "$tielab" --bench $TINY --steps 3 --bench-warmup 1
if [ -x "$py" ]; then
  n=$((n + 1))
  if "$py" -c 'import json,sys; d=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]);
assert d["tokens_per_s"] > 0 and d["step_ms"] > 0 and d["params"] > 0 and d["gflops"] > 0
assert d["config"]["dim"] == 32 and d["bench_warmup"] == 1' "$tmp/out" 2>"$tmp/err"; then
    echo "ok $n - the bench JSON has config, params, tokens_per_s, step_ms, gflops"
  else
    failed=$((failed + 1)); echo "not ok $n - bench JSON fields"; sed 's/^/# /' "$tmp/err" | head -5
  fi
else
  skip "the bench JSON's fields: no $py to read them with"
fi

check "built-in headless loop prints a line per N steps" 0 "^ +20 +[0-9.]+ " -- \
  "$tielab" --headless $TINY --steps 20 --print-every 10
n=$((n + 1))
lines=$(grep -cE "^ +[0-9]+ +[0-9.]+ " "$tmp/out")
if [ "$lines" -ge 2 ]; then echo "ok $n - two progress lines ($lines)"; else failed=$((failed + 1)); echo "not ok $n - progress lines: $lines"; fi

# SIGTERM in the built-in loop: exit 130 and the run saved for --resume.
XDG_STATE_HOME="$tmp/state" "$tielab" --headless $TINY --steps 100000 --print-every 1000 >"$tmp/out" 2>"$tmp/err" &
pid=$!
# The loop's header says the handlers are in place; a loaded machine may
# take seconds to get there, and a signal before it would end tielab as
# SIGTERM's default does (143), which is not what is checked here.
for _ in $(seq 1 600); do grep -q "step" "$tmp/out" 2>/dev/null && break; sleep 0.05; done
sleep 0.3
kill -TERM "$pid"
wait "$pid"
got=$?
n=$((n + 1))
if [ "$got" = 130 ] && ls "$tmp"/state/tielab/autosave/*/run1-*.safetensors >/dev/null 2>&1; then
  echo "ok $n - SIGTERM ends the built-in loop with 130 and saves the run"
else
  failed=$((failed + 1)); echo "not ok $n - SIGTERM: status $got"; sed 's/^/# /' "$tmp/err" | head -5
fi

# --resume with a damaged autosave: one line naming the checkpoint once. The
# lab wants a terminal: 'script' gives it one, before the screen starts.
if have script; then
  n=$((n + 1))
  damaged="$tmp/resume/tielab/autosave/20200101-000000-1"
  mkdir -p "$damaged"
  head -c 100 "$tielab" >"$damaged/run1-1.safetensors"
  XDG_STATE_HOME="$tmp/resume" TERM=xterm timeout 20 script -qec "$tielab --resume" /dev/null \
    </dev/null >"$tmp/out" 2>&1
  times=$(grep -o "run1-1.safetensors" "$tmp/out" | wc -l)
  if [ "$times" = 1 ]; then echo "ok $n - --resume names a damaged checkpoint once"
  else failed=$((failed + 1)); echo "not ok $n - --resume names the checkpoint $times times"; sed 's/^/# /' "$tmp/out" | head -3; fi
else
  skip "--resume with a damaged checkpoint: no script(1) to give the lab a terminal"
fi

# --compare paper runs paper.lua (found along the script search path:
# from the build tree, the sources' lua/), with the run options given and
# --steps as steps=; in a folder of its own, for the paper_*.csv it writes.
mkdir "$tmp/paper"
(cd "$tmp/paper" && "$tielab" --headless --compare paper --vocab 256 --dim 8 --layers 1 --heads 1 --ctx 4 --batch 1 \
  --steps 3 --lens-every 0 --threads 1 --lr 0.01 >out 2>err)
n=$((n + 1))
p=$tmp/paper
if grep -qx 'tielab paper comparison: 3 steps, seeds 1,2,3, V=256 d=8 L=1 H=1 T=4 B=1' "$p/out" &&
   grep -q '^recipe olmo: lr 0.01, warmup 1, cosine' "$p/out" && grep -q "^the paper's findings" "$p/out" &&
   [ "$(grep -cE '^  (align_toward_output|early_l2_dominance|scaling_costs_ppl|shared_init_biases_in) ' "$p/out")" = 4 ] &&
   grep -q '^validation perplexity' "$p/out" && [ "$(grep -c '^1,tied,' "$p/paper_steps.csv")" = 3 ]; then
  echo "ok $n - --compare paper runs paper.lua with the sizes, --lr and --steps given, and prints its findings table"
else
  failed=$((failed + 1)); echo "not ok $n - --compare paper did not print paper.lua's table"
  sed 's/^/# /' "$p/out" "$p/err" | head -8
fi
check "--compare paper takes no --print-every now" 2 "--print-every is not used by --compare paper" -- \
  "$tielab" --headless --compare paper --print-every 10
check "--compare refuses --seed: paper.lua's arms set their seeds" 2 "--seed is not used by --compare paper" -- \
  "$tielab" --headless --compare paper --seed 4

# Run settings from the command line, as a script's lab.run sees them.
cat >"$tmp/opts.lua" <<'LUA'
local o = lab.run{name = "probe"}:options()
print(string.format("lr=%s eps=%s schedule=%s warmup=%d decay_steps=%d decay_all=%s nesterov=%s",
                    o.lr, o.eps, o.schedule, o.warmup, o.decay_steps, tostring(o.decay_all), tostring(o.nesterov)))
LUA
cat >"$tmp/floor.lua" <<'LUA'
local o = lab.run{name = "floor"}:options()
print(string.format("lr_min=%s lr_min_ratio=%s warmup_start=%s", o.lr_min, o.lr_min_ratio, o.warmup_start))
LUA
OLMO="eps=1e-05 schedule=cosine warmup=1000 decay_steps=10000 decay_all=true"
check "--recipe olmo then --lr: the explicit lr, the preset's others" 0 "lr=0.001 $OLMO" -- \
  "$tielab" --headless $TINY --recipe olmo --lr 1e-3 "$tmp/opts.lua"
check "--lr then --recipe olmo: the same" 0 "lr=0.001 $OLMO" -- \
  "$tielab" --headless $TINY --lr 1e-3 --recipe olmo "$tmp/opts.lua"
check "--recipe olmo alone: its lr" 0 "lr=0.0003 $OLMO" -- "$tielab" --headless $TINY --recipe olmo "$tmp/opts.lua"
check "--decay-all alone is true" 0 "decay_all=true" -- "$tielab" --headless $TINY --decay-all "$tmp/opts.lua"
check "--no-decay-all after the recipe wins" 0 "decay_all=false" -- \
  "$tielab" --headless $TINY --recipe olmo --no-decay-all "$tmp/opts.lua"
check "--decay-all=false" 0 "decay_all=false" -- "$tielab" --headless $TINY --decay_all=false "$tmp/opts.lua"
check "--warmup and --decay-steps are run settings" 0 "warmup=7 decay_steps=20" -- \
  "$tielab" --headless $TINY --warmup 7 --schedule linear --decay-steps 20 "$tmp/opts.lua"
check "--nesterov needs momentum" 2 "'nesterov' needs 'momentum'" -- \
  "$tielab" --headless $TINY --optimizer sgd --nesterov "$tmp/opts.lua"
check "a boolean takes true or false" 2 "'decay_all' must be true or false, got 'maybe'" -- \
  "$tielab" --headless $TINY --decay-all=maybe "$tmp/opts.lua"
check "--no- only for booleans" 2 "unknown option '--no-lr'" -- "$tielab" --headless $TINY --no-lr "$tmp/opts.lua"
check "--no-decay-all takes no value" 2 "takes no value" -- "$tielab" --no-decay-all=true
check "cosine with its horizon inside the warmup is refused" 2 "'decay_steps' \\(10\\) above 'warmup' \\(10\\)" -- \
  "$tielab" --headless $TINY --schedule cosine --warmup 10 --decay-steps 10 "$tmp/opts.lua"
check "--decay-all false is refused, not taken for a script" 2 \
  "--decay-all takes no value; use --decay-all=false or --no-decay-all" -- "$tielab" --headless $TINY --decay-all false
check "--decay-all true is refused the same way" 2 "--decay-all takes no value; use --decay-all=true" -- \
  "$tielab" --headless $TINY --decay-all true
check "--no-decay-all true is refused" 2 "--no-decay-all takes no value" -- "$tielab" --headless $TINY --no-decay-all true
check "--bench --warmup alone points to --bench-warmup" 2 "--bench-warmup" -- "$tielab" --bench $TINY --warmup 0
check "--bench --warmup with a schedule is the lr warmup" 0 '"warmup":3' -- \
  "$tielab" --bench $TINY --steps 2 --bench-warmup 0 --warmup 3 --schedule constant
check "--bench's JSON carries the optimizer and schedule" 0 \
  '"optim":\{"lr":0.0003,"warmup":1000,"warmup_start":0.1,"schedule":"cosine",.*"lr_min_ratio":0.1,.*"optimizer":"adamw"' -- \
  "$tielab" --bench $TINY --steps 2 --bench-warmup 0 --recipe olmo
check "olmo's floor is relative" 0 "lr_min=0 lr_min_ratio=0.1 warmup_start=0.1" -- \
  "$tielab" --headless $TINY --recipe olmo --lr 1e-3 "$tmp/floor.lua"
check "a decay that would rise is refused naming both keys" 2 "'lr_min' \\(0.01\\) is above 'lr' \\(0.001\\)" -- \
  "$tielab" --headless $TINY --schedule cosine --decay-steps 10 --lr-min 1e-2 "$tmp/floor.lua"
check "--bench with the recipe" 0 '"bench_warmup":1' -- "$tielab" --bench $TINY --steps 2 --bench-warmup 1 --recipe olmo

# Conventions: short options, dashed names, refusals naming option and mode.
check "-h is --help" 0 "^usage: tielab" -- "$tielab" -h
check "-V is --version" 0 "^tielab [0-9]" -- "$tielab" -V
n=$((n + 1))
if "$tielab" --help | awk 'length > 80 { bad = 1 } END { exit bad }' && ! "$tielab" --help | grep -q "(default )\|default.*(default"; then
  echo "ok $n - --help fits 80 columns, with no empty or doubled defaults"
else failed=$((failed + 1)); echo "not ok $n - --help too wide or a default empty or doubled"; fi
check "--help names the environment" 0 "XDG_STATE_HOME" -- "$tielab" --help
cat >"$tmp/merge.lua" <<'LUA'
print("tie_merge=" .. lab.run{}:options().tie_merge)
LUA
check "--tie-merge is the dashed name" 0 "tie_merge=out" -- "$tielab" --headless $TINY --tie-merge out "$tmp/merge.lua"
check "--tie_merge still works" 0 "tie_merge=mean" -- "$tielab" --headless $TINY --tie_merge mean "$tmp/merge.lua"
check "--compare refuses --name, naming the mode" 2 "--name is not used by --compare paper" -- \
  "$tielab" --headless --compare paper --tie untied --in_scale 3 --name zz
check "--compare refuses --tie" 2 "--tie is not used by --compare paper" -- \
  "$tielab" --headless --compare paper --tie untied
check "--compare refuses --in-scale" 2 "--in-scale is not used by --compare paper" -- \
  "$tielab" --headless --compare paper --in_scale 3
check "the lab refuses --steps" 2 "--steps is not used by the interactive lab" -- "$tielab" --steps 5
check "a script refuses --print-every before its name" 2 "--print-every is not used by a --headless script" -- \
  "$tielab" --headless --print-every 3 "$tmp/opts.lua"
check "--bench refuses --tie-merge" 2 "--tie-merge is not used by --bench" -- "$tielab" --bench --tie-merge out
check "--bench --corpus with no such file" 1 "nothing.txt" -- "$tielab" --bench $TINY --steps 1 --corpus "$tmp/nothing.txt"
awk 'BEGIN { for (i = 0; i < 300; i++) print "a corpus line for the bench, number " i }' >"$tmp/bench.txt"
check "--bench --corpus trains on it" 0 "\"data\":\\{\"corpus\":\"$tmp/bench.txt\"" -- \
  "$tielab" --bench $TINY --steps 1 --bench-warmup 0 --corpus "$tmp/bench.txt"
check "--bench honours --in-scale" 0 '"in_scale":3' -- "$tielab" --bench $TINY --steps 1 --bench-warmup 0 --in-scale 3
check "--bench --instruments --tie untied times an untied run" 0 '"tie":"untied"' -- \
  "$tielab" --bench --instruments $TINY --steps 1 --bench-warmup 0 --tie untied
check "--bench --forward times forward passes alone" 0 '"mode":"forward".*"fwd_ms":[0-9.]+' -- \
  "$tielab" --bench --forward $TINY --steps 2 --bench-warmup 0
check "--bench --align times each Table 1 metric and the four together" 0 \
  '"ms":\{"linear":[0-9.]+,"procrustes":[0-9.]+,"knn":[0-9.]+,"cka":[0-9.]+,"table1":[0-9.]+\}' -- \
  "$tielab" --bench --align --vocab 300 --dim 16 --threads 1 --steps 1
check "--bench --align with --forward is refused" 2 "--forward or --align, not both" -- \
  "$tielab" --bench --align --forward
check "--bench --align --bench-warmup 1 makes one untimed call first" 0 '"warmup_calls":1,' -- \
  "$tielab" --bench --align --vocab 256 --dim 8 --threads 1 --steps 1 --bench-warmup 1
check "--align is --bench's alone" 2 "--align is not used by --bench --instruments" -- \
  "$tielab" --bench --instruments --align
if command -v prlimit >/dev/null && [ -z "${ASAN_OPTIONS:-}" ]; then
  check "--bench --align that cannot fit says what it needs" 1 "bench: aligning \\[50000,2048\\] needs .*, more than the .* this process can still allocate \\(limit: RLIMIT_AS\\)" -- \
    prlimit --as=400000000 "$tielab" --bench --align --vocab 50000 --dim 2048
else
  skip "--bench --align's memory check: no prlimit, or AddressSanitizer reserves the address space"
fi

# Script arguments: --key value, and a bad one is one line with status 2.
cat >"$tmp/args.lua" <<'LUA'
local a = lab.args(arg, {steps = 3, fast = false})
print("steps=" .. a.steps .. " fast=" .. tostring(a.fast))
LUA
check "script arguments: --steps 7" 0 "steps=7 fast=false" -- "$tielab" --headless "$tmp/args.lua" --steps 7
check "script arguments: --fast --steps=8" 0 "steps=8 fast=true" -- "$tielab" --headless "$tmp/args.lua" --fast --steps=8
check "script arguments: -- ends them" 0 "steps=9 fast=false" -- "$tielab" --headless "$tmp/args.lua" steps=9 -- --junk
check "a bad script argument: exit 2" 2 "^tielab: unknown argument 'stepz' \\(known: fast, steps\\)$" -- \
  "$tielab" --headless "$tmp/args.lua" --stepz 3
n=$((n + 1))
if [ "$(wc -l <"$tmp/err")" = 1 ] && ! grep -q traceback "$tmp/err"; then echo "ok $n - and it is one line, no traceback"
else failed=$((failed + 1)); echo "not ok $n - a bad script argument printed:"; sed 's/^/# /' "$tmp/err" | head -5; fi
check "a script argument missing its value" 2 "argument 'steps' needs a value" -- "$tielab" --headless "$tmp/args.lua" --steps
# A run option before the script's name is the default of the key of its
# name: as a number over a number, as text over text ("" or a list).
cat >"$tmp/given.lua" <<'LUA'
local a = lab.args(arg, {dim = "128", lr = "", layers = 4, recipe = ""})
print(string.format("dim=%s lr=%s layers=%s recipe=%s", a.dim, a.lr, math.type(a.layers), a.recipe))
LUA
check "run options before the script: defaults of their keys, text where the default is text" 0 \
  "^dim=32 lr=0.003 layers=integer recipe=olmo$" -- "$tielab" --headless --dim 32 --lr 3e-3 --layers 2 --recipe olmo "$tmp/given.lua"

# Every setting the settings table gives a script's mode is an option a
# --headless script takes, at its default; the names and defaults come
# from the table itself (lab.settings), so a new setting is checked too.
cat >"$tmp/defaults.lua" <<'LUA'
for _, s in ipairs(lab.settings()) do print(s.name .. "=" .. s.default) end
LUA
echo 'print("parsed")' >"$tmp/parsed.lua"
"$tielab" --headless --no-init "$tmp/defaults.lua" >"$tmp/defaults" 2>"$tmp/err"
"$tielab" --list-options >"$tmp/options" 2>>"$tmp/err"
refused="" count=0
while IFS= read -r pair; do
  key=${pair%%=*} value=${pair#*=} option=$(echo "${pair%%=*}" | tr _ -)
  grep -Eq -- "^--$option [^ ]+ [^ ]+ ([^ ]*,)?script(,|$)" "$tmp/options" || continue
  count=$((count + 1))
  "$tielab" --headless --no-init "--$option=$value" "$tmp/parsed.lua" >"$tmp/out" 2>>"$tmp/err" &&
    grep -q parsed "$tmp/out" || refused="$refused $key"
done <"$tmp/defaults"
n=$((n + 1))
if [ -z "$refused" ] && [ "$count" -ge 40 ]; then echo "ok $n - a script takes each of its $count settings at its default"
else failed=$((failed + 1)); echo "not ok $n - refused at their defaults:$refused ($count tried)"; sed 's/^/# /' "$tmp/err" | head -5; fi

tap_done
