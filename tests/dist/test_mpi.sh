#!/bin/sh
# test_mpi.sh -- data-parallel training under mpirun: two ranks sharing
# every batch give the losses and gradient norms of one process stepping
# the whole batch, to 1e-5 relative over 50 steps (a tied run with its
# online lens and validation, and an untied run with a scaled input side);
# both ways of summing the gradient (by layers, overlapped with the
# backward, or whole) give the same numbers; lab.rank and lab.world say
# where a script runs; rank 0 alone writes (a script's files, under
# --sandbox too, r:save); a
# batch that does not split evenly, the interactive lab and a bad or
# mixed TIELAB_ALLREDUCE are refused before training; scripts that part
# ways on one rank (a step more, an early end, an error, a setting, a run
# of its own, r:save on rank 0 alone) end the job with a message, never a
# hang; r:save answers alike on every rank; a rank's stderr stays small;
# the launchers' variables are read in their order; when one rank dies the
# other stops with a message, its run saved whole, and so it is when
# mpirun is sent SIGTERM or SIGHUP. A build without MPI refuses a job of
# several ranks instead.
tap_name=mpi; . "${srcdir:-.}/tests/lib/tap.sh"

have mpirun || skip_all "no mpirun (Debian: openmpi-bin libopenmpi-dev)"
have pgrep pkill || skip_all "no pgrep and pkill to find the ranks (Debian package procps)"
# What Open MPI, PMIx, libevent and the plugins they unload keep to the
# end is reported as leaks, often with no module left to name them by.
[ -z "${ASAN_OPTIONS:-}" ] || skip_all "under the sanitizers (Open MPI's own allocations are reported as leaks)"
# Open MPI refuses root unless told; tests in containers run as root.
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM OMPI_MCA_rmaps_base_oversubscribe
mpi() { timeout 300 mpirun --oversubscribe -np "$@"; }
cd "$tmp" || exit 1

if ! grep -q "^#define HAVE_MPI 1" "$(dirname "$tielab")/config.h"; then
  printf 'lab.run{vocab = 256, dim = 16, layers = 1, heads = 2, ctx = 8, batch = 4}\n' >one.lua
  mpi 2 "$tielab" --headless one.lua >out 2>err
  rc=$?
  ok $((rc == 0)) "a build without MPI refuses a job of 2 ranks (status $rc)"
  grep -q "built without MPI" err
  ok $? "saying the build has no MPI ($(head -c 300 err))"
  tap_done
fi

# ------------------------------------------------ the same numbers as one process
cat >train.lua <<'LUA'
local function shape(name) return {name = name, vocab = 256, dim = 32, layers = 2, heads = 2, ctx = 16, batch = 8,
                                   threads = 1, lens_every = 10, eval_every = 10, seed = 3} end
local tied = lab.run(shape("tied"))
local untied = lab.run(shape("untied"), {tie = "untied", init_seed = 4, in_scale = 2})
local function row(step, r)
  local m = r:metrics()
  print(string.format("%d %s %.9g %.9g %.9g %.9g %.9g %.9g", step, r.name, m.loss, m.grad_norm, m.grad_in,
                      m.grad_out, m.grad_in_act, m.val_loss))
end
lab.on_step(function(step) row(step, tied) row(step, untied) end)
lab.step(50)
local al = lab.align(tied, untied)
print(string.format("align x %.9g %.9g", al.linear_in, al.linear_out))
for p, kl in ipairs(tied:metrics().lens.kl) do print(string.format("lens %d %.9g", p, kl)) end
io.stderr:write(string.format("rank %d of %d\n", lab.rank, lab.world))
local f = assert(io.open("written-" .. lab.rank .. ".tmp", "w"))
f:write("rank ", lab.rank, "\n")
f:close()
assert(os.rename("written-" .. lab.rank .. ".tmp", "written-" .. lab.rank))
tied:save("tied.safetensors")
LUA
"$tielab" --headless train.lua >one.out 2>one.err
ok $? "one process trains the two runs ($(tail -n 2 one.err))"
rm -f written-0
mpi 2 "$tielab" --headless train.lua >two.out 2>two.err
ok $? "two ranks train them ($(tail -n 3 two.err))"

# Every number of one process against the two ranks' (the first two fields
# are labels). Two ranks sum each gradient in another order than one
# process: the last bits differ, and training carries the difference on
# (at lr 1e-3 to a few 1e-6 by step 50; at 3e-3 to 4e-5).
compare() {
  awk -v tol="$3" -v num='^-?[0-9.]+(e[-+]?[0-9]+)?$' 'NR == FNR { a[FNR] = $0; n = FNR; next }
    { split(a[FNR], x, " "); m = split($0, y, " ")
      if (m != split(a[FNR], x, " ")) { bad = bad " line " FNR; next }
      for (i = 3; i <= m; i++) {
        if (x[i] == y[i]) continue
        if (x[i] !~ num || y[i] !~ num) { bad = bad " line " FNR " (" x[i] " vs " y[i] ")"; continue }
        d = x[i] - y[i]; if (d < 0) d = -d
        s = x[i] < 0 ? -x[i] : x[i]; if (s < 1e-30) s = 1e-30
        if (d / s > worst) worst = d / s
      }
      lines++ }
    END { if (lines != n) bad = bad " (" lines " lines of " n ")"
          printf "%d lines, worst relative difference %.3g%s\n", lines, worst, bad
          exit (bad != "" || worst > tol) }' "$1" "$2"
}
n_rows=$(grep -c ' tied ' one.out)
ok $((n_rows != 50)) "one process printed 50 steps of the tied run ($n_rows)"
result=$(compare one.out two.out 1e-5)
ok $? "losses, gradient norms, validation, alignment and lens of 2 ranks agree with 1 process to 1e-5 ($result)"
grep -q "rank 0 of 1" one.err && grep -q "rank 0 of 2" two.err
ok $? "lab.rank and lab.world: 0 of 1 in a plain process, 0 of 2 on rank 0 under mpirun"
[ -f written-0 ] && [ ! -e written-1 ] && [ ! -e written-1.tmp ] && [ "$(cat written-0)" = "rank 0" ]
ok $? "only rank 0's script writes files (io.open, os.rename): $(ls written-* 2>&1 | tr '\n' ' ')"
cat >sbx.lua <<'LUA'
local f = assert(io.open("sbx-" .. lab.rank .. ".tmp", "w"))
f:write("rank ", lab.rank, "\n")
f:close()
assert(os.rename("sbx-" .. lab.rank .. ".tmp", "sbx-" .. lab.rank))
io.output("out-" .. lab.rank)
io.write("rank ", lab.rank, "\n")
io.close()
LUA
mpi 2 "$tielab" --headless --sandbox sbx.lua >sbx.out 2>sbx.err
rc=$?
[ "$rc" -eq 0 ] && [ "$(cat sbx-0 out-0)" = "rank 0
rank 0" ] && [ ! -e sbx-1 ] && [ ! -e sbx-1.tmp ] && [ ! -e out-1 ]
ok $? "and so under --sandbox, whose io.open, io.output and os.rename are its own (status $rc: $(ls sbx-* out-* 2>&1 | tr '\n' ' '))"
cat >load.lua <<'LUA'
local r = lab.load("tied.safetensors")
print(string.format("%d %.9g", r:metrics().step, r:metrics().loss))
LUA
"$tielab" --headless load.lua >load.out 2>load.err
grep -q '^50 ' load.out
ok $? "the checkpoint rank 0 saved loads in one process, at step 50 ($(cat load.out load.err | head -c 300))"

TIELAB_ALLREDUCE=whole mpi 2 "$tielab" --headless train.lua >whole.out 2>whole.err
cmp -s two.out whole.out
ok $? "the gradient summed whole gives the numbers summed layer by layer, to the bit"

# Each rank with two threads of its own (the pool splits the rows again).
sed 's/threads = 1/threads = 2/' train.lua >threads.lua
"$tielab" --headless threads.lua >one2.out 2>one2.err &&
  mpi 2 "$tielab" --headless threads.lua >two2.out 2>two2.err
ok $? "with threads = 2 one process and two ranks train ($(tail -n 2 two2.err))"
result=$(compare one2.out two2.out 1e-5)
ok $? "and agree to 1e-5 ($result)"

# ------------------------------------------------ refused before training
printf 'lab.run{vocab = 256, dim = 16, layers = 1, heads = 2, ctx = 8, batch = 5}\nprint("trained")\n' >odd.lua
mpi 2 "$tielab" --headless odd.lua >odd.out 2>odd.err
rc=$?
ok $((rc == 0)) "a batch of 5 across 2 ranks is an error (status $rc)"
grep -q "batch 5 does not split evenly across 2 ranks" odd.err && ! grep -q trained odd.out
ok $? "naming the sizes, before training ($(grep -m1 batch odd.err))"
mpi 2 "$tielab" >ui.out 2>ui.err </dev/null
rc=$?
[ $rc -eq 2 ] && [ "$(grep -c "does not run under mpirun" ui.err)" -eq 1 ]
ok $? "the interactive lab is refused under mpirun, once, with status 2 (status $rc: $(grep -m1 tielab ui.err))"
TIELAB_ALLREDUCE=fast mpi 2 "$tielab" --headless odd.lua >bad.out 2>bad.err
rc=$?
[ $rc -eq 2 ] && [ "$(grep -c "TIELAB_ALLREDUCE='fast'" bad.err)" -eq 1 ]
ok $? "a bad TIELAB_ALLREDUCE is named, once, with status 2 (status $rc: $(grep -m1 TIELAB bad.err | head -c 200))"

# Ranks started with other settings for one run (mpirun's ':' gives each
# its own command line) stop at its first step, before any weight moves,
# naming every setting that differs and each rank's value.
T="$tielab --headless --vocab 256 --dim 32 --layers 2 --heads 2 --ctx 16 --batch 8 --threads 1 --steps 20 --print-every 10"
# shellcheck disable=SC2086
timeout 300 mpirun --oversubscribe -np 1 $T --lr 0.001 --in-scale 3 : -np 1 $T --lr 0.002 --optimizer sgd \
  --in-scale 3 >apart.out 2>apart.err
rc=$?
grep -q "run 'run1' is not the same on every rank at step 1: lr is 0.001 on rank 0, 0.002 on rank 1; optimizer is adamw on rank 0, sgd on rank 1" apart.err &&
  ! grep -Eq '^ +10 ' apart.out && ! grep -q 'in_scale is' apart.err
ok $((rc == 0)) "ranks given another lr and optimizer stop at step 1, naming both and each rank's value, in_scale alike not named (status $rc: $(grep -m1 'not the same' apart.err))"
# shellcheck disable=SC2086
timeout 300 mpirun --oversubscribe -np 1 $T --data-seed 4 : -np 1 $T --data-seed 5 >seed.out 2>seed.err
grep -q "data_seed is 4 on rank 0, 5 on rank 1" seed.err
ok $? "another data seed is named too ($(grep -m1 'not the same' seed.err | head -c 300))"

# ------------------------------------------------ scripts that part ways
# Every rank runs the same script; one that takes another path on one rank
# must end the job with a message, never hang it or mix the ranks' sums.
# (timeout 120: a hang shows as status 124.)
# part NAME LINE [OPTIONS]: LINE runs on rank 1 alone after step 5; true
# when the job failed ('rc' its status) without hanging.
part() {
  cat >"$1.lua" <<LUA
local r = lab.run{name = "p", vocab = 256, dim = 32, layers = 2, heads = 2, ctx = 16, batch = 8, threads = 1${3:-}}
r:step(5)
if lab.rank == 1 then $2 end
r:step(40)
print("finished")
LUA
  timeout 120 mpirun --oversubscribe -np 2 "$tielab" --headless "$1.lua" >"$1.out" 2>"$1.err"
  rc=$?
  [ $rc -ne 0 ] && [ $rc -ne 124 ]
}
part extra 'r:step(1)' &&
  grep -q "rank 0 ended (status 0) while this rank waits for the loss of run 'p' at step 46" extra.err
ok $? "rank 1 steps once more: it says rank 0 has ended while it waits, and the job fails (status $rc; $(grep -m1 'rank 0 ended' extra.err))"
part early 'return' && ! grep -q finished early.out &&
  grep -q "early.lua:4: rank 1 ended (status 0) while this rank waits for the loss of run 'p' at step 6" early.err
ok $? "rank 1's script ends early: rank 0 stops, naming rank 1 and its step (status $rc; $(grep -m1 'rank 1 ended' early.err))"
part fails 'error("a file only rank 1 lacks")' &&
  grep -q "rank 1 ended (status 1) while this rank waits .*; its last line on stderr: fails.lua:3: a file only rank 1 lacks" fails.err &&
  [ "$(grep -c "a file only rank 1 lacks" fails.err)" -eq 1 ]
ok $? "an error on rank 1 alone: rank 0 stops and says it, once, with rank 1's reason (status $rc; $(grep -m1 'rank 1 ended' fails.err))"
part order 'r:set{in_scale = 3}' && ! grep -q finished order.out &&
  grep -q "order.lua:4: run 'p' is not the same on every rank at step 6: in_scale is 1 on rank 0, 3 on rank 1" order.err
ok $? "a setting changed on rank 1 alone stops the next step, naming it and each rank's value (status $rc; $(grep -m1 'not the same' order.err))"
part lens6 'r:set{in_scale = 3}' ', lens_every = 6' &&
  grep -q "run 'p' is not the same on every rank at step 7: in_scale is 1 on rank 0, 3 on rank 1" lens6.err
ok $? "and at the step after when the next is one the ranks step alone, the lens's (status $rc; $(grep -m1 'not the same' lens6.err))"
part twin 'lab.run{name = "q", vocab = 256, dim = 32, layers = 2, heads = 2, ctx = 16, batch = 8, threads = 1}:step(1)' &&
  grep -q "the ranks disagree at the loss of run" twin.err
ok $? "rank 1 steps a run of its own: the ranks disagree on the run, and say so (status $rc; $(grep -m1 disagree twin.err))"
cat >aside.lua <<'LUA'
if lab.rank == 0 then lab.run{vocab = 256, dim = 16, layers = 1, heads = 2, ctx = 8, batch = 4} end
local r = lab.run{vocab = 256, dim = 32, layers = 2, heads = 2, ctx = 16, batch = 8, threads = 1}
r:step(40)
assert(r:save("aside.safetensors"))
print("finished " .. r.name)
LUA
mpi 2 "$tielab" --headless aside.lua >aside.out 2>aside.err
rc=$?
[ $rc -eq 0 ] && grep -q "finished run2" aside.out
ok $? "a run only rank 0 makes, and never steps, leaves the others' steps and saves alone, named by the lab or not (status $rc; $(cat aside.out) $(head -c 300 aside.err))"
cat >saved0.lua <<'LUA'
local r = lab.run{name = "s", vocab = 256, dim = 32, layers = 2, heads = 2, ctx = 16, batch = 8, threads = 1}
r:step(2)
if lab.rank == 0 then assert(r:save("zero.safetensors")) end
r:step(2)
LUA
mpi 2 "$tielab" --headless saved0.lua >saved0.out 2>saved0.err
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "disagree at r:save of run 's'.*(r:save is the job's: call it on every rank, not on rank 0 alone; rank 0 wrote the file)" saved0.err
ok $? "r:save under 'if lab.rank == 0' says it is the job's, to be called on every rank (status $rc; $(grep -m1 "job's" saved0.err | head -c 400))"

# Every rank must sum the gradient alike.
timeout 120 mpirun --oversubscribe -np 1 -x TIELAB_ALLREDUCE=whole "$tielab" --headless odd.lua : \
  -np 1 -x TIELAB_ALLREDUCE=layers "$tielab" --headless odd.lua >mixed.out 2>mixed.err
rc=$?
[ $rc -eq 2 ] && [ "$(grep -c "TIELAB_ALLREDUCE is not the same on every rank" mixed.err)" -eq 1 ]
ok $? "TIELAB_ALLREDUCE whole on one rank and layers on the other is refused, once (status $rc; $(grep -m1 TIELAB mixed.err))"

# A rank above 0 keeps only the last of its stderr, however much it writes.
cat >chatty.lua <<'LUA'
local r = lab.run{vocab = 256, dim = 16, layers = 1, heads = 2, ctx = 8, batch = 4, threads = 1}
local line = string.rep("x", 2047) .. "\n"
lab.on_step(function() io.stderr:write(line) end)
r:step(300)
print("ready") io.stdout:flush()
lab.sleep(60)
LUA
timeout 120 mpirun --oversubscribe -np 2 "$tielab" --headless "$tmp/chatty.lua" >chatty.out 2>/dev/null &
job=$!
i=0
while [ $i -lt 600 ] && ! grep -q ready chatty.out 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
size=
for p in $(pgrep -f "tielab --headless $tmp/chatty.lua"); do
  tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1' && size=$(stat -L -c %s "/proc/$p/fd/2")
done
pkill -f "^mpirun .*--headless $tmp/chatty.lua"
wait $job
[ -n "$size" ] && [ "$size" -le 270000 ]
ok $? "after 600 KB written to stderr, rank 1 keeps ${size:-?} bytes of it (at most 256 KiB and a step's)"

# The launchers' variables: PMI's size is believed before srun's count of
# a step (MPICH's proxies under Slurm carry both), and one MPI cannot
# join is refused, naming both sizes.
printf 'print("world " .. lab.world)\n' >world.lua
SLURM_STEP_NUM_TASKS=1 PMI_RANK=0 PMI_SIZE=4 "$tielab" --headless world.lua >pmi.out 2>pmi.err
rc=$?
[ $rc -eq 2 ] && grep -q "the launcher started 4 processes, but MPI joined 1 of them" pmi.err
ok $? "PMI_SIZE=4 beside SLURM_STEP_NUM_TASKS=1, in a process MPI joins alone: refused (status $rc; $(head -c 200 pmi.err))"
SLURM_STEP_NUM_TASKS=2 "$tielab" --headless world.lua >plainsrun.out 2>&1
[ "$(cat plainsrun.out)" = "world 1" ]
ok $? "srun's count alone, without an MPI plugin's rank, is a plain process ($(head -c 200 plainsrun.out))"

# r:save and r:export are the job's: rank 0 writes, every rank gets its
# answer (here a folder stands where the file would go, on rank 0's side).
mkdir -p taken.safetensors
cat >save.lua <<'LUA'
local r = lab.run{vocab = 256, dim = 32, layers = 2, heads = 2, ctx = 16, batch = 8, threads = 1}
r:step(2)
local ok, why = r:save("taken.safetensors")
if ok then error("rank " .. lab.rank .. ": r:save said it saved") end
print("refused: " .. why)
r:step(2)
assert(r:save("saved.safetensors"))
print("saved")
LUA
mpi 2 "$tielab" --headless save.lua >save.out 2>save.err
rc=$?
[ $rc -eq 0 ] && grep -q "^refused: " save.out && grep -q "^saved" save.out && [ -f saved.safetensors ]
ok $? "a save rank 0 cannot make fails on every rank alike, and the job goes on (status $rc; $(head -c 200 save.out) $(head -c 300 save.err))"

# ------------------------------------------------ one rank dies
# start_job SCRIPT OUT STATE: SCRIPT's job of 2 ranks in the background
# ('job' its pid), stdout to OUT.out and stderr to OUT.err, saving into
# STATE, once it has printed "ready"; 'victim' then is rank 1's pid.
start_job() {
  XDG_STATE_HOME="$3" mpi 2 "$tielab" --headless "$tmp/$1" >"$2.out" 2>"$2.err" &
  job=$!
  i=0
  while [ $i -lt 1200 ] && ! grep -q ready "$2.out" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
  victim=
  for p in $(pgrep -f "tielab --headless $tmp/$1"); do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1' && victim=$p
  done
}
sed 's/lab.step(50)/lab.step(3) print("ready") io.stdout:flush() lab.step(1000000)/' train.lua >long.lua
state="$tmp/state"
start_job long.lua long "$state"
[ -n "$victim" ] && kill -KILL "$victim"
wait $job
rc=$?
ok $((rc == 0 || rc == 124)) "when rank 1 ($victim) is killed the job ends, with an error (status $rc)"
grep -q "rank 0 of 2): stopped while waiting for the other ranks" long.err
ok $? "rank 0 stops with a message ($(grep -m1 'rank 0 of 2' long.err))"
saved=$(find "$state" -name '*.safetensors' | head -n 1)
printf 'local r = lab.load(arg[1]) print(r:metrics().step > 0)\n' >check.lua
[ -n "$saved" ] && [ -z "$(find "$state" -name '*.tmp*')" ] && "$tielab" --headless check.lua "$saved" | grep -q true
ok $? "its runs are saved whole where --resume finds them, no partial file ($(find "$state" -type f | tr '\n' ' '))"
pgrep -f "tielab --headless $tmp/long.lua" >/dev/null
[ $? -eq 1 ]
ok $? "no rank is left running"

# A signal to one rank alone (a node's own shutdown, a kill by hand) stops
# the job within seconds, as a signal to mpirun does: the rank tells the
# others it was stopped, and rank 0 saves the runs; so too while every
# rank sleeps in its script, summing nothing (a thread of each watches).
cat >sleepy.lua <<'LUA'
local r = lab.run{name = "z", vocab = 256, dim = 32, layers = 2, heads = 2, ctx = 16, batch = 8, threads = 1}
r:step(3) print("ready") io.stdout:flush() lab.sleep(120) r:step(1)
LUA
# stop_one SCRIPT SIG WHILE: SIG to rank 1 of SCRIPT's job once it is ready.
stop_one() {
  state="$tmp/state-one-$1-$2"
  start_job "$1" one "$state"
  [ -n "$victim" ] && kill -"$2" "$victim"
  # tenths of a second until no rank runs: the job must end by itself, on
  # a loaded machine too (the time is reported, never judged)
  i=0
  while [ $i -lt 900 ] && pgrep -f "tielab --headless $tmp/$1" >/dev/null; do sleep 0.1; i=$((i + 1)); done
  wait $job
  rc=$?
  saved=$(find "$state" -name '*.safetensors' | head -n 1)
  [ -n "$victim" ] && [ $i -lt 900 ] && [ -n "$saved" ] && grep -q "interrupted; saved in" one.err &&
    "$tielab" --headless check.lua "$saved" | grep -q true
  ok $? "SIG$2 to rank 1 alone $3 ends the job ($((i / 10)).$((i % 10)) s), rank 0 saving the runs (rank 1: ${victim:-not found}; status $rc; $(grep -m1 saved one.err))"
}
stop_one long.lua TERM "while the ranks sum"
stop_one long.lua HUP "while the ranks sum"
stop_one sleepy.lua TERM "while every rank sleeps in its script"

# ------------------------------------------------ the job is stopped (Ctrl-C, a dropped SSH link)
# mpirun passes SIGTERM to every rank and kills them a second later: rank
# 0 saves the runs in that second. (A script that prints every step may be
# blocked on mpirun's pipe by then: this one is quiet, and says it is
# ready once a step is done, so that the run saved has one however slow
# the machine.)
printf 'lab.run{vocab = 256, dim = 32, layers = 2, heads = 2, ctx = 16, batch = 8, threads = 1}\nlab.step(1) print("ready") io.stdout:flush()\nlab.step(1000000)\n' >quiet.lua
for sig in TERM HUP; do
  state="$tmp/state-$sig"
  XDG_STATE_HOME="$state" mpi 2 "$tielab" --headless "$tmp/quiet.lua" >quiet.out 2>quiet.err &
  job=$!
  i=0
  while [ $i -lt 1200 ] && ! grep -q ready quiet.out 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
  sleep 0.5
  pkill -"$sig" -f "^mpirun .*--headless $tmp/quiet.lua"   # this job's mpirun only
  wait $job
  rc=$?
  saved=$(find "$state" -name '*.safetensors' | head -n 1)
  [ -n "$saved" ] && grep -q "interrupted; saved in" quiet.err && "$tielab" --headless check.lua "$saved" | grep -q true
  ok $? "SIG$sig to mpirun: rank 0 saves the run whole (status $rc; $(grep -m1 saved quiet.err))"
done
pgrep -f "tielab --headless $tmp/quiet.lua" >/dev/null
[ $? -eq 1 ]
ok $? "no rank is left running"

tap_done
