#!/bin/sh
# test_sweep.sh -- lua/sweep.lua as tasks: a tiny grid (2 seeds x 2 scales
# on a generated corpus) run serially in one folder, and through 'tasks |
# parallel -j 2' and 'merge' in another, gives the same report and
# sweep.csv byte for byte; a rerun skips what is done; a task out of range,
# another grid in the same folder and two verbs at once are refused,
# saying why; a missing and a corrupt task file are named at merge and the
# rest merged; the command lines survive paths with spaces and quotes; the
# slurm verb writes an array job that runs a task; the sandbox lets a
# sweep write its folder and nothing outside; and paper.lua, one seed a
# task, merges to the report and CSV files its one-process run writes.
# Hostile input: a task file of the wrong types, /dev/zero or a FIFO is
# named at merge with why, at once, and the gap ends the report; a grid
# one of whose tasks could not run (seeds=-1) is refused before any task
# is handed out; task lines carry --sandbox and the options the sweep
# runs under; no value can put a line of its own into the job script.
tap_name=sweep; . "${srcdir:-.}/tests/lib/tap.sh"
have parallel || skip_all "GNU parallel is not installed (Debian package parallel)"
lua_dir=$(cd "${srcdir:-.}/lua" && pwd)
script="$lua_dir/sweep.lua"
exe=$(readlink -f "$tielab")
cd "$tmp" || exit 1
tap_corpus corpus.txt 200
G="vocab=264 dim=16 layers=1 heads=2 ctx=16 batch=4 steps=20 seeds=1,2 scales=1,3 corpus=corpus.txt"
sweep() { "$tielab" --headless "$script" "$@"; }

# ---- serially, in one process
sweep $G out=serial >serial.out 2>serial.err
ok $? "no verb: every task runs here, then the report ($(tail -n 1 serial.err))"
[ -s serial/task-0.json ] && [ -s serial/task-3.json ] && ! [ -e serial/task-4.json ] && [ -s serial/sweep.json ]
ok $? "serial/ holds task-0.json .. task-3.json and sweep.json"
grep -q '^in_scale sweep: 20 steps' serial.out && grep -q '^4 of 4 tasks$' serial.out &&
  grep -q '^V=264 d=16 L=1 H=2 T=16 B=4: mean+-sd over seeds$' serial.out
ok $? "the report names the sweep, the tasks merged and the model size"
head -n 1 serial/sweep.csv | grep -qx 'seed,in_scale,vocab,dim,layers,heads,ctx,batch,val_ppl,ratio_10pct,linear_in,linear_out' &&
  [ "$(cut -d, -f1,2 serial/sweep.csv | tail -n +2 | tr '\n' ' ')" = "1,1 1,3 2,1 2,3 " ]
ok $? "sweep.csv: the plot's columns and the size, one row per task in grid order (seed, then scale)"
# The table's mean and sd of val_ppl at in_scale 1, and the paired
# difference at 3, recomputed from the CSV (t_0.975 with 1 df = 12.706205).
awk -F, 'NR > 1 { v[$1 "," $2] = $9 }
  END {
    a = v["1,1"]; b = v["2,1"]; m = (a + b) / 2; sd = sqrt(((a - m)^2 + (b - m)^2) / 1)
    d1 = v["1,3"] - a; d2 = v["2,3"] - b; dm = (d1 + d2) / 2; dsd = sqrt(((d1 - dm)^2 + (d2 - dm)^2) / 1)
    h = 12.706205 * dsd / sqrt(2)
    printf "%.2f+-%.2f\n%+.2f [%+.2f, %+.2f]\n", m, sd, dm, dm - h, dm + h
  }' serial/sweep.csv >want.txt
grep -F "$(sed -n 1p want.txt)" serial.out | grep -q '^        1  2 ' &&
  grep -F "$(sed -n 2p want.txt)" serial.out | grep -q '^        3  2 '
ok $? "mean+-sd and the paired 95% interval agree with the CSV ($(tr '\n' ' ' <want.txt))"

# ---- as tasks, under GNU parallel
sweep $G out=par tasks >tasks.txt 2>tasks.err
ok $? "tasks prints the command lines"
[ "$(wc -l <tasks.txt)" -eq 4 ] &&
  awk -v exe="$exe" -v script="$script" -v out="$tmp/par" '
    index($0, exe " --headless " script " ") != 1 { bad = 1 }
    $NF != "task=" NR - 1 || $(NF - 1) != "out=" out { bad = 1 }
    !/ corpus=\// { bad = 1 }
    END { exit bad }' tasks.txt
ok $? "one line a task, task=0..3: the binary, --headless, the script, the grid, out= and corpus= absolute"
parallel -j 2 <tasks.txt >parallel.out 2>parallel.err
ok $? "parallel -j 2 runs them"
sweep $G out=par merge >par.out 2>par.err
ok $? "merge"
cmp serial.out par.out
ok $? "the report is the same byte for byte, serially and under parallel"
cmp serial/sweep.csv par/sweep.csv
ok $? "so is sweep.csv"
sweep $G out= >memory.out 2>memory.err && cmp serial.out memory.out
ok $? "out= (no folder): the same report, nothing written"

# ---- a rerun skips what is done
cp par/task-2.json task-2.before
sweep $G out=par >rerun.out 2>rerun.err
ok $? "a rerun with no verb ends well"
[ "$(grep -c 'is done already.*skipped' rerun.err)" -eq 4 ] && cmp task-2.before par/task-2.json && cmp serial.out rerun.out
ok $? "it skips the 4 tasks done, saying so on stderr, and reports the same"
sweep $G out=par task=1 >one.out 2>one.err && grep -q "task 1 (seed 1, in_scale 3, .*) is done already: $tmp/par/task-1.json, skipped" one.err
ok $? "task=1 done already is skipped: $(head -n 1 one.err)"

# ---- refusals
sweep $G out=par task=4 >range.out 2>range.err
[ $? -eq 2 ] && grep -q 'task=4 is out of range: this grid has 4 tasks, task=0..3' range.err
ok $? "task=4 is refused naming the range: $(cat range.err)"
sweep $G out=par task=-3 >/dev/null 2>range.err
[ $? -eq 2 ] && grep -q 'task=0..3' range.err
ok $? "so is task=-3"
sweep $G dim=32 threads=2 out=par merge >grid.out 2>grid.err
[ $? -eq 2 ] && grep -q 'dim recorded 16, given 32' grid.err && grep -q 'threads recorded 1, given 2' grid.err &&
  ! grep -q 'seeds recorded' grid.err
ok $? "another grid in the folder is refused, naming each key: $(cat grid.err)"
sweep $G out= tasks >/dev/null 2>noout.err
[ $? -eq 2 ] && grep -q 'tasks needs out=DIR' noout.err
ok $? "a verb without out= is refused: $(cat noout.err)"
sweep $G out=par tasks merge >/dev/null 2>two.err
[ $? -eq 2 ] && grep -q 'one of tasks, task=K, slurm, merge' two.err
ok $? "two verbs at once are refused: $(cat two.err)"

# ---- a missing and a corrupt task file at merge
cp -r par gap
rm gap/task-1.json
head -c 40 par/task-2.json >gap/task-2.json
sweep $G out=gap merge >gap.out 2>gap.err
rc=$?
[ $rc -eq 1 ] && grep -q "task 1 (seed 1, in_scale 3, .*): no $tmp/gap/task-1.json" gap.err &&
  grep -q "task 2 (seed 2, in_scale 1, .*): $tmp/gap/task-2.json cannot be read" gap.err &&
  grep -q 'merged 2 of 4 tasks' gap.err && grep -q '^2 of 4 tasks$' gap.out
ok $? "merge names the missing and the corrupt file, merges the rest, exit status 1 (got $rc)"
sed -n '1p;2p;5p' par/sweep.csv | cmp - gap/sweep.csv
ok $? "gap/sweep.csv holds the two tasks there, as they were"
sweep $G out=gap >gapfill.out 2>gapfill.err && grep -q 'task-2.json cannot be read.*runs again' gapfill.err &&
  cmp serial.out gapfill.out && cmp serial/sweep.csv gap/sweep.csv
ok $? "no verb fills the gap (the corrupt task runs again) and the report is whole again"

# ---- bad task files at merge: each named with why, never waited on, the rest merged
cp -r par bad
sed 's/"val_ppl":[^,}]*/"val_ppl":"high"/' par/task-0.json >bad/task-0.json
rm bad/task-1.json && ln -s /dev/zero bad/task-1.json
rm bad/task-2.json && mkfifo bad/task-2.json
timeout 60 "$tielab" --headless "$script" $G out=bad merge >bad.out 2>bad.err
rc=$?
[ $rc -eq 1 ] && grep -q "task 0 (seed 1, in_scale 1, .*): $tmp/bad/task-0.json cannot be read: result.val_ppl is a string, not a number" bad.err &&
  grep -q "task 1 (seed 1, in_scale 3, .*): $tmp/bad/task-1.json cannot be read: is a character device, not a regular file" bad.err &&
  grep -q "task 2 (seed 2, in_scale 1, .*): $tmp/bad/task-2.json cannot be read: is a FIFO, not a regular file" bad.err &&
  ! grep -q "traceback\|not enough memory" bad.err
ok $? "merge names a wrong-typed record, /dev/zero and a FIFO as task files, each with why, at once (status $rc)"
grep -q '^1 of 4 tasks$' bad.out && grep -q '^not merged: 3 of 4 tasks, missing or unreadable$' bad.out &&
  grep -q '^  task 2 (seed 2, in_scale 1, .*): .*is a FIFO' bad.out && sed -n '1p;5p' par/sweep.csv | cmp - bad/sweep.csv
ok $? "the report merges task 3 and ends with the gap, task by task; sweep.csv holds task 3"
rm bad/task-1.json bad/task-2.json
printf '{"task": 1, "point": ' >bad/task-1.json
printf '{"task": 2, "point": {"seed": 2}, "result": {}}\n' >bad/task-2.json
sweep $G out=bad merge >/dev/null 2>bad.err
grep -q "task-1.json cannot be read: not JSON: " bad.err && grep -q "task-2.json cannot be read: a record of another point" bad.err
ok $? "a record cut short is not JSON, one of another point is named so: $(grep 'task 1 ' bad.err | cut -c1-200)"

# ---- a grid whose tasks could not run is refused before any is handed out
sweep $G seeds=-1 out=neg tasks >neg.out 2>neg.err
rc=$?
[ $rc -eq 2 ] && ! [ -s neg.out ] && ! [ -e neg ] &&
  grep -q "task 0 (seed -1, in_scale 1, .*) could not run: 'seed' must be a whole number in \[0," neg.err
ok $? "seeds=-1: tasks refuses the grid, naming the task and why, and prints no task (status $rc): $(cat neg.err)"
sweep $G scales=1,-3 out=neg task=0 >/dev/null 2>neg.err
rc=$?
[ $rc -eq 2 ] && grep -q "task 1 (seed 1, in_scale -3, .*) could not run: 'in_scale' must be a number in \[0, " neg.err && ! [ -e neg ]
ok $? "scales=1,-3: even task=0 is refused before it runs (status $rc)"
"$tielab" --headless "$lua_dir/paper.lua" seeds=1,-2 steps=2 out=neg tasks >/dev/null 2>neg.err
[ $? -eq 2 ] && grep -q "task 1 (seed -2) could not run: " neg.err
ok $? "so does paper.lua: $(cat neg.err)"

# ---- the task lines hold what the sweep runs under
mkdir sbox && cp corpus.txt sbox/
(cd sbox && "$tielab" --headless --sandbox --no-init --lens-every 0 "$script" $G out=sandboxed tasks >../sandbox.txt 2>/dev/null)
[ "$(wc -l <sandbox.txt)" -eq 4 ] &&
  awk -v exe="$exe" 'index($0, exe " --headless --sandbox --no-init --lens-every=0 ") != 1 { bad = 1 } END { exit bad }' sandbox.txt
ok $? "under --sandbox each task line runs its task under --sandbox too, with the options given: $(head -c 120 sandbox.txt)..."
(cd sbox && sh -c "$(sed -n 1p ../sandbox.txt)" >/dev/null 2>../sandboxed.err) && [ -s sbox/sandboxed/task-0.json ]
ok $? "and such a line runs its task"

# ---- no #SBATCH line can be injected
sweep $G out=inject slurm "partition=debug
#SBATCH --wrap=evil" >/dev/null 2>inject.err
rc=$?
[ $rc -eq 2 ] && ! [ -e inject/sweep.sbatch ] && grep -q 'partition= holds a control character (debug\\010#SBATCH --wrap=evil)' inject.err
ok $? "a partition= with a newline is refused, no job script written (status $rc)"
sweep $G out=inject slurm 'time=1:00;rm -rf x' >/dev/null 2>inject.err
rc=$?
sweep $G out=inject slurm cpus=two >/dev/null 2>>inject.err
rc2=$?
[ $rc -eq 2 ] && [ $rc2 -eq 2 ] && grep -q 'time=1:00;rm -rf x is not a time limit' inject.err &&
  grep -q 'cpus=two is not a whole number >= 1' inject.err && ! [ -e inject/sweep.sbatch ]
ok $? "so are a time= and a cpus= that are not Slurm's: $(tr '\n' ' ' <inject.err)"
mkdir "new
line"
sweep $G "out=new
line/x" tasks >/dev/null 2>inject.err
[ $? -eq 2 ] && grep -q 'out= holds a control character' inject.err
ok $? "a folder with a newline in its name makes no task line"

# ---- paths with a space and a quote
mkdir "my data"
cp corpus.txt "my data/it's.txt"
Q="vocab=256 dim=16 layers=1 heads=2 ctx=16 batch=4 steps=5 seeds=1 scales=1,2"
sweep $Q "corpus=my data/it's.txt" "out=q dir" tasks >qtasks.txt 2>/dev/null &&
  sed -n 2p qtasks.txt | sh >/dev/null 2>qtask.err && [ -s "q dir/task-1.json" ] && ! [ -e "q dir/task-0.json" ]
ok $? "a command line with a space and a quote in its paths runs under sh: $(sed -n 2p qtasks.txt | cut -c1-60)..."

# ---- slurm
sweep $G out=par slurm partition=debug time=0:05:00 cpus=2 >slurm.out 2>slurm.err
ok $? "slurm writes the array job"
sb=par/sweep.sbatch
[ "$(cat slurm.out)" = "sbatch $tmp/par/sweep.sbatch" ] && [ "$(head -n 1 $sb)" = "#!/bin/bash" ] &&
  grep -qx '#SBATCH --array=0-3' $sb && grep -qx "#SBATCH --output=$tmp/par/logs/task-%a.out" $sb &&
  grep -qx "#SBATCH --error=$tmp/par/logs/task-%a.err" $sb && grep -qx '#SBATCH --partition=debug' $sb &&
  grep -qx '#SBATCH --time=0:05:00' $sb && grep -qx '#SBATCH --cpus-per-task=2' $sb &&
  grep -q '^#SBATCH --job-name=' $sb && [ -d par/logs ]
ok $? "sweep.sbatch: bash, --array=0-3, logs under par/logs/, partition, time, cpus-per-task; the sbatch command printed"
grep 'task="\$SLURM_ARRAY_TASK_ID"$' $sb | grep -q "^exec $exe --headless $script "
ok $? "its body runs the task command with task=\$SLURM_ARRAY_TASK_ID"
rm par/task-3.json
SLURM_ARRAY_TASK_ID=3 bash $sb >sb.out 2>sb.err && [ -s par/task-3.json ] && cmp par/task-3.json serial/task-3.json
ok $? "run as array task 3 it writes par/task-3.json, the same as the serial one"
bash $sb >/dev/null 2>sb.err
[ $? -eq 2 ] && grep -q 'SLURM_ARRAY_TASK_ID is not set' sb.err
ok $? "run outside Slurm it says what is missing"
sweep $G out=plain slurm >/dev/null 2>&1 && ! grep -q -- '--partition\|--time\|--cpus-per-task' plain/sweep.sbatch
ok $? "without partition=, time=, cpus= their lines are left out"

# ---- the sandbox
mkdir box
cp corpus.txt box/
(cd box && "$tielab" --headless --sandbox "$script" $G out=inside task=0 >/dev/null 2>../box.err) &&
  cmp box/inside/task-0.json serial/task-0.json
ok $? "under --sandbox a task writes its folder in the working directory, the same record"
(cd box && "$tielab" --headless --sandbox "$script" $G out="$tmp/outside" task=0 >/dev/null 2>../box.err)
[ $? -ne 0 ] && grep -q 'outside the working directory' box.err && ! [ -e outside ]
ok $? "and is refused a folder outside it: $(head -n 1 box.err)"
# ---- paper.lua through the same module: one seed a task
paper="$lua_dir/paper.lua"
PA="steps=12 dim=16 vocab=256 ctx=16 batch=2 layers=1 heads=1 seeds=1,2 scales=5 lens_steps=5 lens_tokens=32 lr=0.01"
"$tielab" --headless "$paper" $PA out=whole >whole.out 2>whole.err
ok $? "paper.lua with no verb runs every seed here, as before (out=PREFIX files)"
"$tielab" --headless "$paper" $PA out=pp tasks >ptasks.txt 2>/dev/null &&
  [ "$(wc -l <ptasks.txt)" -eq 2 ] && grep -q "^$exe --headless $paper .* out=$tmp/pp task=1\$" ptasks.txt
ok $? "paper.lua tasks: one line a seed"
parallel -j 2 <ptasks.txt >/dev/null 2>pparallel.err &&
  "$tielab" --headless "$paper" $PA out=pp merge >pmerge.out 2>pmerge.err
ok $? "the seeds under parallel, then merge"
head -n -2 whole.out | cmp - pmerge.out && cmp whole_steps.csv pp/paper_steps.csv &&
  cmp whole_lens.csv pp/paper_lens.csv && cmp whole_summary.csv pp/paper_summary.csv
ok $? "merge prints the report of the one-process run byte for byte, and writes the same three CSV files"
"$tielab" --headless "$paper" $PA out=pp task=0 >/dev/null 2>pskip.err && grep -q 'task 0 (seed 1) is done already' pskip.err
ok $? "paper.lua task=0 done already is skipped"
"$tielab" --headless "$paper" $PA out=pp task=2 >/dev/null 2>prange.err
[ $? -eq 2 ] && grep -q 'task=2 is out of range: this grid has 2 tasks, task=0..1' prange.err
ok $? "paper.lua task=2 is refused naming the range"
"$tielab" --headless "$paper" $PA warmup=3 out=pp merge >/dev/null 2>pgrid.err
[ $? -eq 2 ] && grep -q 'warmup recorded (none), given 3' pgrid.err
ok $? "a run setting given only now is another grid: $(cat pgrid.err)"
"$tielab" --headless "$script" $G out=pp merge >/dev/null 2>pother.err
[ $? -eq 2 ] && grep -q 'holds a sweep of paper.lua, not of sweep.lua' pother.err
ok $? "sweep.lua refuses paper.lua's folder"
rm pp/task-1.json
"$tielab" --headless "$paper" $PA out=pp merge >pgap.out 2>pgap.err
[ $? -eq 1 ] && grep -q "task 1 (seed 2): no $tmp/pp/task-1.json" pgap.err && grep -q "the paper's findings" pgap.out &&
  ! grep -q '^2,' pp/paper_steps.csv && grep -q '^1,tied,' pp/paper_steps.csv
ok $? "a missing seed at merge is named, the other reported"
"$tielab" --headless "$paper" $PA out=pp slurm >pslurm.out 2>/dev/null && grep -qx '#SBATCH --array=0-1' pp/sweep.sbatch &&
  SLURM_ARRAY_TASK_ID=1 bash pp/sweep.sbatch >/dev/null 2>&1 &&
  "$tielab" --headless "$paper" $PA out=pp merge >pslurm2.out 2>/dev/null && cmp pmerge.out pslurm2.out
ok $? "paper.lua slurm: an array of 2; its task 1 fills the gap and the report is whole again"
tap_done
