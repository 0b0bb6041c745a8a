#!/bin/sh
# test_slurm.sh -- a sweep's job array on a real (one-node, private) Slurm
# cluster. First the cluster itself: an array whose tasks write files, and
# a task that fails making sbatch --wait fail. Then lua/sweep.lua: a tiny
# grid run serially in one folder, and in another written out as an sbatch
# script (slurm), submitted as an array and merged (merge); both print the
# same table and write the same sweep.csv, byte for byte. Submitted again,
# every task finds its result and leaves it alone: no file but the Slurm
# logs is written again, and each log says the task was done already.
# Last, a data-parallel job: srun --mpi=pmix starts two ranks of one run,
# whose numbers are one process's.
# Skips where no cluster can be started here.
tap_name=slurm; . "${srcdir:-.}/tests/lib/tap.sh"
slurm_name=slurm; . "${srcdir:-.}/tests/lib/slurm.sh"
lua_dir=$(cd "${srcdir:-.}/lua" && pwd)
slurm_start
cd "$tmp" || exit 1

# submit ARGS...: sbatch --wait, bounded (generously: a loaded machine's
# slurmctld is slow to start a job and to see it end): a job that never
# starts (a node gone down) fails the test instead of hanging it; the
# cleanup cancels it.
submit() { timeout 300 sbatch --wait --quiet "$@"; }

cat >plain.sh <<'EOF'
#!/bin/sh
echo "task $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_TASK_COUNT in $SLURM_ARRAY_JOB_ID on $SLURMD_NODENAME" \
  >"plain/out.$SLURM_ARRAY_TASK_ID"
EOF
mkdir plain
submit --array=0-2 --output=plain/%A_%a.log plain.sh
ok $? "sbatch --wait --array=0-2 runs the array to its end"
good=0
for k in 0 1 2; do
  grep -q "^task $k of 3 in [0-9][0-9]* on $SLURM_NODE\$" "plain/out.$k" || good=1
done
ok $good "each task wrote its file, knowing its index, the array's size and the node: $(cat plain/out.* | tr '\n' ';')"
[ "$(ls plain | wc -l)" -eq 6 ]
ok $? "and its log: $(ls plain | tr '\n' ' ')"

printf '#!/bin/sh\n[ "$SLURM_ARRAY_TASK_ID" = 1 ] && exit 3\nexit 0\n' >fails.sh
submit --array=0-1 --output=/dev/null fails.sh
st=$?
[ "$st" -ne 0 ] && [ "$st" -ne 124 ]
ok $? "sbatch --wait fails when one task fails (status $st)"

# ---- the sweep, serially and as an array
tap_corpus corpus.txt 300
GRID="vocab=256 dim=16 layers=1 heads=2 ctx=16 batch=4 steps=20 seeds=1,2 scales=1,3 corpus=corpus.txt"
sweep() { $CAP "$tielab" --headless "$lua_dir/sweep.lua" $GRID "$@"; }

sweep out=serial >serial.out 2>serial.err
ok $? "the sweep runs serially ($(tail -n 2 serial.err | tr '\n' ' '))"
[ -s serial.out ] && [ -s serial/sweep.csv ]
ok $? "and prints its table and writes serial/sweep.csv: $(head -n 1 serial/sweep.csv)"

sweep out=array slurm >slurm.out 2>slurm.err
ok $? "the sweep writes its sbatch script ($(tail -n 2 slurm.err | tr '\n' ' '))"
array=$(sed -n 's/^#SBATCH  *--array=\(0-[0-9][0-9]*\)\(%[0-9][0-9]*\)\{0,1\} *$/\1/p' array/sweep.sbatch 2>/dev/null)
[ -n "$array" ]
ok $? "array/sweep.sbatch asks for an array from 0: $(grep '^#SBATCH' array/sweep.sbatch | tr '\n' ' ')"

submit array/sweep.sbatch
ok $? "sbatch --wait array/sweep.sbatch runs tasks $array ($(cat array/*.log array/*/*.log 2>/dev/null | grep -i 'error' | head -n 2))"
sweep out=array merge >merge.out 2>merge.err
ok $? "merge gathers the tasks ($(tail -n 2 merge.err | tr '\n' ' '))"
cmp serial.out merge.out
ok $? "the merged table is the serial one: $(tail -n 1 merge.out)"
cmp serial/sweep.csv array/sweep.csv
ok $? "array/sweep.csv is serial/sweep.csv: $(wc -l <array/sweep.csv) lines"

# Submitted again, the array's tasks rerun nothing: every file but the
# Slurm logs (named by the script's --output and --error, relative to
# where sbatch runs) keeps its size, modification time and inode.
logs=$(sed -n 's/^#SBATCH  *\(--output=\|--error=\|-o  *\|-e  *\)\([^ ]*\).*/\2/p' array/sweep.sbatch |
  sed 's/%[a-zA-Z]/*/g')
snapshot() (
  set -f
  find "$PWD/array" -type f | LC_ALL=C sort | while IFS= read -r f; do
    for pat in $logs; do
      case $pat in /*) ;; *) pat=$PWD/$pat ;; esac
      # shellcheck disable=SC2254
      case $f in $pat) continue 2 ;; esac
    done
    stat -c '%n %s %i %y' "$f"
  done
)
snapshot >before
submit array/sweep.sbatch
ok $? "the array submitted again runs to its end"
snapshot >after
[ -s before ] && cmp before after >/dev/null
ok $? "no task wrote anything again ($(wc -l <before) files; changed: $(diff before after | grep '^>' | cut -c3- | cut -d' ' -f1 | tr '\n' ' '))"
grep -q sweep.csv before
ok $? "sweep.csv was among the files kept"
# and each task said so in its log
k=0 said=0
while [ $k -le "${array#0-}" ]; do
  # shellcheck disable=SC2086
  cat $logs 2>/dev/null | grep -q "task $k .*done already" || said=1
  k=$((k + 1))
done
ok $said "each of tasks $array found its result: $(cat $logs 2>/dev/null | grep -m 1 'done already')"

# ---- data-parallel training as a job: srun starts the ranks (PMIx)
# (Not under the sanitizers: what Open MPI keeps to the end is reported as
# leaks, as tests/dist/test_mpi.sh says.)
if grep -q "^#define HAVE_MPI 1" "$(dirname "$tielab")/config.h" && srun --mpi=list 2>&1 | grep -q pmix &&
  [ -z "${ASAN_OPTIONS:-}" ]; then
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
  cat >dp.lua <<'LUA'
local r = lab.run{vocab = 256, dim = 32, layers = 2, heads = 2, ctx = 16, batch = 8, threads = 1, seed = 3}
lab.on_step(function(step) print(string.format("%d %.9g %.9g", step, r:metrics().loss, r:metrics().grad_norm)) end)
r:step(20)
io.stderr:write(string.format("rank %d of %d\n", lab.rank, lab.world))
LUA
  "$tielab" --headless dp.lua >dp1.out 2>dp1.err
  printf '#!/bin/sh\nexec srun --mpi=pmix "%s" --headless dp.lua >dp2.out 2>dp2.err\n' "$tielab" >dp.sh
  submit --ntasks=2 --output=dp.log dp.sh
  st=$?
  ok $st "sbatch --ntasks=2 with srun --mpi=pmix trains one run on 2 ranks (status $st: $(cat dp.log dp2.err 2>/dev/null | tr '\n' ' ' | head -c 600))"
  worst=$(awk 'NR == FNR { a[$1] = $2 " " $3; next }
    { split(a[$1], x, " "); for (i = 1; i <= 2; i++) { d = (x[i] - $(i + 1)) / x[i]; d = d < 0 ? -d : d; if (d > w) w = d }
      n++ }
    END { printf "%d %.3g", n, w }' dp1.out dp2.out)
  grep -q "rank 0 of 2" dp2.err && [ "${worst% *}" -eq 20 ] && awk -v w="${worst#* }" 'BEGIN { exit !(w <= 1e-5) }'
  ok $? "rank 0 of 2 under srun, and 20 steps of losses and gradient norms as one process's to 1e-5 (steps, worst: $worst)"
else
  skip "the data-parallel job: a build without MPI, a Slurm without its PMIx plugin, or the sanitizers" 2
fi
tap_done
