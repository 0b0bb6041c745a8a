#!/bin/sh
# test_resume.sh -- 'tielab --resume' and a folder still being written: a
# live writer is waited for and then every run comes back; a writer that
# died mid-save gives what is complete and names what is missing or older;
# one bad file never costs the rest: a checkpoint cut short, a FIFO, a
# symbolic link or a folder in its place, a FIFO manifest or .writer, a
# .writer of no process id and a manifest of noise each leave every intact
# run reopened and the bad one named with why, at once; 300 runs all come
# back; a lab with several runs ended by SIGHUP and a --resume started at
# once gets every run back. The lab runs in its line mode (TERM=dumb), which
# reads the same folder and saves the same way as the screen; each wait
# polls up to a deadline.
tap_name=resume; . "${srcdir:-.}/tests/lib/tap.sh"
cd "$tmp" || exit 1

export OPENBLAS_NUM_THREADS=1 XDG_CACHE_HOME="${XDG_CACHE_HOME:-$tmp/cache}"
TINY="--vocab 256 --dim 16 --layers 1 --heads 2 --ctx 8 --batch 2 --threads 1"

# wait_grep PATTERN FILE [TENTHS]: until FILE has a line matching PATTERN
# (default 20 s).
wait_grep() {
  i=0
  while [ $i -lt "${3:-200}" ]; do
    grep -Eq -- "$1" "$2" 2>/dev/null && return 0
    sleep 0.1
    i=$((i + 1))
  done
  return 1
}
# resume STATE: --resume in the line mode with state folder STATE, stdin at
# its end (so it quits at once), into 'out' and 'err'. The lab it opens may
# save into a folder of its own as it quits: that folder is removed, so the
# next --resume finds the test's folder again.
resume() {
  XDG_STATE_HOME="$1" TERM=dumb timeout -k 10 60 "$tielab" --resume $TINY </dev/null >out 2>err
  status=$?
  find "$1/tielab/autosave" -mindepth 1 -maxdepth 1 ! -name 20200101-000000-1 -exec rm -rf {} +
  return $status
}
show() { awk '{ print "#   " $0 }' out err | head -20; }
# check STATUS DESCRIPTION: ok, and what --resume said when it failed.
check() { ok "$1" "$2"; [ "$1" = 0 ] || show; }

# Three checkpoints, of steps 1, 2 and 3.
cat >mk.lua <<'EOF'
local shape = {vocab = 256, dim = 16, layers = 1, heads = 2, ctx = 8, batch = 2}
for i, n in ipairs{"alpha", "beta", "gamma"} do
  local r = lab.run(shape, {name = n, seed = i})
  r:step(i)
  r:save(n .. ".safetensors")
end
EOF
"$tielab" --headless mk.lua >/dev/null 2>&1
ok $([ -s alpha.safetensors ] && [ -s beta.safetensors ] && [ -s gamma.safetensors ]; echo $?) "three checkpoints to save"
manifest='1 alpha.safetensors alpha
2 beta.safetensors beta
3 gamma.safetensors gamma'
# put NAME DIR: checkpoint NAME into DIR as run_save does: aside, renamed.
put() { cp "$1.safetensors" "$2/$1.safetensors.part" && mv "$2/$1.safetensors.part" "$2/$1.safetensors"; }

# ---------------------------------------------------------------- a live writer
# A writer that has put the marker, the manifest and one checkpoint, and
# writes the other two only once --resume has said that it waits for it.
dir=$tmp/live/tielab/autosave/20200101-000000-1
mkdir -p "$dir"
rm -f err
sh -c '
  echo $$ >"$1/.writer.part" && mv "$1/.writer.part" "$1/.writer"
  printf "%s\n" "$2" >"$1/manifest"
  cp alpha.safetensors "$1/"
  i=0
  while [ $i -lt 300 ] && ! grep -q "waiting for it" err 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
  for r in beta gamma; do cp $r.safetensors "$1/$r.safetensors.part" && mv "$1/$r.safetensors.part" "$1/$r.safetensors"; done
  rm "$1/.writer"
' writer "$dir" "$manifest" &
writer=$!
wait_grep . "$dir/.writer" 100 && wait_grep . "$dir/manifest" 100
resume "$tmp/live"
rc=$?
wait $writer
grep -q "^resumed alpha (step 1), beta (step 2), gamma (step 3) from $dir$" out
check $? "a live writer's folder: --resume waits for it, then reopens every run (status $rc)"
grep -q "^tielab: process $writer is saving to $dir: waiting for it" err
check $? "and says on stderr which folder and which process it waits for"

# ---------------------------------------------------------------- a dead writer
# A writer that died after two of three checkpoints: its pid no longer exists.
dir=$tmp/dead/tielab/autosave/20200101-000000-1
mkdir -p "$dir"
printf '%s\n' "$manifest" >"$dir/manifest"
put alpha "$dir" && put beta "$dir"
sh -c 'echo $$' >"$dir/.writer"
gone=$(cat "$dir/.writer")
resume "$tmp/dead"
rc=$?
grep -q "^not found: gamma (step 3) (process $gone ended before its save was complete); resumed alpha (step 1), beta (step 2) from $dir$" out
check $? "a dead writer's folder: what is complete comes back, the missing run is named (status $rc)"
grep -q "^tielab: not found: gamma (step 3) .*resumed alpha" err
check $? "and stderr says so too"

# A run whose checkpoint is of an earlier step than the save meant.
printf '%s\n' "1 alpha.safetensors alpha" "5 beta.safetensors beta" >"$dir/manifest"
resume "$tmp/dead"
grep -q "^older than saved: beta (step 2, not 5) (process $gone ended before its save was complete); resumed alpha (step 1), beta (step 2) from $dir$" out
check $? "a checkpoint older than the manifest's step is reopened and named as older"

# A checkpoint of a run the save no longer held (removed since an earlier save).
printf '%s\n' "1 alpha.safetensors alpha" >"$dir/manifest"
resume "$tmp/dead"
grep -q "^left out, not in the lab saved: beta.safetensors (process $gone ended before its save was complete); resumed alpha (step 1) from $dir$" out
check $? "a checkpoint the manifest does not list is left out, and named"

# Nothing written but the manifest: nothing to reopen, and it says what is lost.
rm "$dir"/*.safetensors
printf '%s\n' "$manifest" >"$dir/manifest"
resume "$tmp/dead"
rc=$?
[ $rc = 1 ] && grep -q "^tielab: nothing to resume in $dir: not found: alpha (step 1), beta (step 2), gamma (step 3) (process $gone ended" err
check $? "a save that wrote no checkpoint: an error naming every run it meant to write (status $rc)"

# ---------------------------------------------------------------- one bad file never costs the rest
# Each case is a folder of its own, of a writer that is gone; --resume must
# end (timeout's deadline is only for a hang), reopen every intact run and
# name each one it cannot reopen, with why.
# folder NAME: a fresh state folder $tmp/NAME with the session folder $dir
# holding alpha and beta and their manifest, written by a process now gone.
folder() {
  state=$tmp/$1
  dir=$state/tielab/autosave/20200101-000000-1
  mkdir -p "$dir"
  printf '%s\n' "1 alpha.safetensors alpha" "2 beta.safetensors beta" >"$dir/manifest"
  put alpha "$dir" && put beta "$dir"
  echo "$gone" >"$dir/.writer"
}

folder truncated
head -c 1000 beta.safetensors >"$dir/beta.safetensors"
resume "$state"
rc=$?
why="cannot reopen beta.safetensors (beta, step 2): header length [0-9]* is past the end of the file (1000 bytes)"
[ $rc = 1 ] && grep -q "^$why; resumed alpha (step 1) from $dir$" out && grep -q "^tielab: $why; resumed alpha" err
check $? "two runs, one checkpoint cut short: the other comes back, the cut one is named with why (status $rc)"

rm "$dir/manifest"
resume "$state"
rc=$?
[ $rc = 1 ] && grep -q "^cannot reopen beta.safetensors: header length .*; resumed alpha (step 1) from $dir$" out
check $? "the same without a manifest (status $rc)"

folder fifo
rm "$dir/beta.safetensors" && mkfifo "$dir/beta.safetensors"
resume "$state"
rc=$?
[ $rc = 1 ] && grep -q "cannot reopen beta.safetensors (beta, step 2): is a FIFO, not a regular file; resumed alpha" out
check $? "a FIFO in place of a checkpoint is refused at once, the rest reopened (status $rc)"

folder link
ln -sf "$tmp/beta.safetensors" "$dir/beta.safetensors"
mkdir "$dir/gamma.safetensors"
echo "3 gamma.safetensors gamma" >>"$dir/manifest"
resume "$state"
rc=$?
grep -q "cannot reopen beta.safetensors (beta, step 2): is a symbolic link, refused here" out &&
  grep -q "cannot reopen gamma.safetensors (gamma, step 3): is a folder, not a regular file" out &&
  grep -q "resumed alpha (step 1) from $dir$" out
check $? "a symbolic link (to a good checkpoint) and a folder in place of checkpoints are refused (status $rc)"

folder marks
rm "$dir/manifest" "$dir/.writer" && mkfifo "$dir/manifest" "$dir/.writer"
resume "$state"
rc=$?
grep -q "manifest not read, every checkpoint reopened: $dir/manifest: is a FIFO, not a regular file" out &&
  grep -q "resumed alpha (step 1), beta (step 2) from $dir$" out
check $? "a FIFO as the manifest and as .writer blocks nothing: every checkpoint comes back (status $rc)"

folder absurd
echo 99999999999999999999 >"$dir/.writer"
resume "$state"
rc=$?
[ $rc = 0 ] && ! grep -q "waiting for it\|still writing" err && grep -q "^resumed alpha (step 1), beta (step 2) from $dir$" out
check $? "a .writer of 99999999999999999999 is no process to wait for (status $rc)"
printf '%s\n' "1 alpha.safetensors alpha" "2 beta.safetensors beta" "3 gamma.safetensors gamma" >"$dir/manifest"
resume "$state"
grep -q "^not found: gamma (step 3) (its writer's mark, .writer, holds no process id); resumed alpha" out
check $? "and what the save lacks is said with why"

folder garbage
head -c 100000 /dev/urandom | tr '\n' x >"$dir/manifest"
resume "$state"
[ "$(wc -c <err)" -lt 400 ] && grep -q "^tielab: manifest not read, every checkpoint reopened: $dir/manifest:1: " err &&
  grep -q "resumed alpha (step 1), beta (step 2) from $dir$" out
check $? "a manifest of 100 KB of noise: one short line naming the file and line, every checkpoint reopened"
printf '%s\n' "1 alpha.safetensors alpha" "2 beta.safetensors beta" "3 ../../../x.safetensors x" >"$dir/manifest"
resume "$state"
grep -q "manifest:3: '../../../x.safetensors' is not a checkpoint's file name" err
check $? "a manifest line naming a file outside the folder: the line is named, with why"

# The REPL's history beside the autosave folder, a FIFO: readline would
# wait on it forever; it is passed over, said, and the lab goes on.
folder history
mkfifo "$state/tielab/history"
resume "$state"
rc=$?
[ $rc = 0 ] && grep -q "^resumed alpha (step 1), beta (step 2) from $dir$" out &&
  grep -q "^tielab: $state/tielab/history: is a FIFO, not a regular file (the REPL's history is neither read nor kept)$" err
check $? "a FIFO as the REPL's history is passed over, said, and every run comes back (status $rc)"

# A session folder that is a symbolic link (to a folder of checkpoints,
# the newest by its name) is passed over for the real one.
folder linked
mkdir "$tmp/elsewhere" && put alpha "$tmp/elsewhere"
ln -s "$tmp/elsewhere" "$state/tielab/autosave/20990101-000000-1"
resume "$state"
grep -q "^resumed alpha (step 1), beta (step 2) from $dir$" out
check $? "a session folder that is a symbolic link is passed over"

# Three hundred runs (tiny ones, on a small corpus): every one comes back.
state=$tmp/many
dir=$state/tielab/autosave/20200101-000000-1
mkdir -p "$dir"
tap_corpus small.txt 64
cat >many.lua <<EOF
local shape = {vocab = 256, dim = 8, layers = 1, heads = 1, ctx = 4, batch = 1, threads = 1, lens_every = 0,
               eval_every = 0, align_every = 0, corpus = "small.txt"}
local lines = {}
for i = 1, 300 do
  local r = lab.run(shape, {name = string.format("r%03d", i)})
  assert(r:save(string.format("$dir/r%03d-%d.safetensors", i, i)))
  lines[i] = string.format("0 r%03d-%d.safetensors r%03d", i, i, i)
  r:remove()
end
local f = assert(io.open("$dir/manifest", "w"))
f:write(table.concat(lines, "\n"), "\n")
f:close()
EOF
"$tielab" --headless many.lua >/dev/null 2>many.err
ok $? "three hundred checkpoints to save $(head -n 1 many.err)"
resume "$state"
rc=$?
got=$(sed -n 's/^resumed \(.*\) from .*/\1/p' out | tr ',' '\n' | grep -c ' (step 0)')
[ $rc = 0 ] && [ "$got" = 300 ] && grep -q "^resumed r001 (step 0), .*, r300 (step 0) from $dir$" out &&
  ! grep -q "not found" out err
check $? "a folder of 300 runs: all 300 come back, none called not found ($got; status $rc)"

# ---------------------------------------------------------------- the race
# A lab of seven runs, ended by SIGHUP with a --resume started at once:
# every run comes back, each time.
cat >runs.lua <<'EOF'
for i = 1, 5 do lab.run{name = "extra" .. i, seed = i} end print("lab of " .. #lab.runs .. " runs")
EOF
round=1
while [ $round -le 4 ]; do
  state=$tmp/race$round
  rm -f lab.in lab.out
  mkfifo lab.in
  XDG_STATE_HOME="$state" TERM=dumb "$tielab" $TINY <lab.in >lab.out 2>&1 &
  lab=$!
  exec 3>lab.in
  cat runs.lua >&3
  wait_grep "lab of 7 runs" lab.out
  started=$?
  kill -HUP $lab
  resume "$state"
  exec 3>&-
  wait $lab
  all=0
  for r in tied untied extra1 extra2 extra3 extra4 extra5; do
    grep -Eq "^resumed (.*, )?$r \(step [0-9]+\)" out || all=1
  done
  [ $started = 0 ] && [ $all = 0 ] && ! grep -q "not found\|older than" out
  r=$?
  check $r "round $round: SIGHUP and --resume at once: all seven runs come back"
  [ $r = 0 ] || sed 's/^/#   lab: /' lab.out | head -5
  round=$((round + 1))
done

tap_done
