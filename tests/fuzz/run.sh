#!/bin/sh
# run.sh -- make fuzz: each libFuzzer harness for FUZZ_TIME seconds (30 by
# default), starting from its seed corpus (tests/fuzz/NAME/) with its
# dictionary (tests/fuzz/NAME.dict), under ASan and UBSan with allocations
# capped. New inputs collect in tests/fuzz/work-NAME/ of the build; a crash,
# leak or timeout leaves its input as tests/fuzz/NAME-crash-* (or -leak-,
# -timeout-, -oom-) and fails that harness. Prints TAP: one line a harness,
# with the executions it reached. Harnesses run side by side, one a core.
: "${srcdir:=.}" "${top_builddir:=.}" "${FUZZ_TIME:=30}"
progs=${FUZZ_PROGS:-"tests/fuzz/fuzz_safetensors tests/fuzz/fuzz_ckpt tests/fuzz/fuzz_bpe_cache tests/fuzz/fuzz_corpus
  tests/fuzz/fuzz_sweep_task tests/fuzz/fuzz_journal tests/fuzz/fuzz_hftok"}
# Absolute paths: a harness works inside its own temporary folder.
top_builddir=$(cd "$top_builddir" && pwd) srcdir=$(cd "$srcdir" && pwd)
out=$top_builddir/tests/fuzz
mkdir -p "$out" || exit 1
# A private folder for what the harnesses write (they also stay inside it);
# memory-backed when there is one, so that syncs cost nothing.
base=${TMPDIR:-/tmp}
[ -d /dev/shm ] && [ -w /dev/shm ] && base=/dev/shm
tmp=$(mktemp -d "$base/tielab-fuzz.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'rm -rf "$tmp"; exit 130' INT TERM
supp=$srcdir/tests/lib/lsan.supp

# One harness: its TAP line (without the number) into $tmp/NAME.result.
fuzz_one() {
  prog=$1 name=${1##*/fuzz_}
  work=$out/work-$name
  log=$out/$name.fuzz.log
  mkdir -p "$work" "$tmp/$name"
  TMPDIR=$tmp/$name OPENBLAS_NUM_THREADS=1 \
  ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:allocator_may_return_null=1 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  LSAN_OPTIONS=suppressions=$supp:print_suppressions=0 \
    "$top_builddir/$prog" -max_total_time="$FUZZ_TIME" -timeout=60 \
      -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 \
      -dict="$srcdir/tests/fuzz/$name.dict" -artifact_prefix="$out/$name-" \
      "$work" "$srcdir/tests/fuzz/$name" >"$log" 2>&1
  status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  secs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  if [ "$status" -eq 0 ] && [ -n "$runs" ]; then
    echo "ok - $name: ${runs} executions in ${FUZZ_TIME} s (${secs}/s), no crash" >"$tmp/$name.result"
  else
    { echo "not ok - $name: exit status $status (log: $log)"
      grep -E 'ERROR|SUMMARY|Test unit written|^ *#[0-9]+ ' "$log" | head -n 30 | sed 's/^/# /'
    } >"$tmp/$name.result"
  fi
}

# Each harness is one thread, so as many run at once as there are cores
# (FUZZ_JOBS to say otherwise): each still gets its FUZZ_TIME seconds.
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1
set -- $progs
echo "1..$#"
running=0
for prog in "$@"; do
  fuzz_one "$prog" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait; running=0; fi
done
wait
n=0 failed=0
for prog in "$@"; do
  n=$((n + 1))
  name=${prog##*/fuzz_}
  if [ -f "$tmp/$name.result" ]; then
    sed "1s/^\(not \)*ok -/\1ok $n -/" "$tmp/$name.result"
    head -n 1 "$tmp/$name.result" | grep -q '^ok' || failed=$((failed + 1))
  else
    echo "not ok $n - $name: gave no result"
    failed=$((failed + 1))
  fi
done
[ "$failed" -eq 0 ]
