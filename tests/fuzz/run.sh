#!/bin/sh
# run.sh -- make fuzz: each libFuzzer harness for FUZZ_TIME seconds (30 by
# default), starting from its seed corpus (tests/fuzz/NAME/) with its
# dictionary (tests/fuzz/NAME.dict), under ASan and UBSan with allocations
# capped. New inputs collect in tests/fuzz/work-NAME/ of the build; a crash,
# leak or timeout leaves its input as tests/fuzz/NAME-crash-* (or -leak-,
# -timeout-, -oom-) and fails that harness. Prints TAP: one line a harness,
# with the executions it reached.
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
trap 'rm -rf "$tmp"' EXIT INT TERM
supp=$srcdir/tests/lib/lsan.supp

set -- $progs
echo "1..$#"
n=0 failed=0
for prog in "$@"; do
  n=$((n + 1))
  name=${prog##*/fuzz_}
  work=$out/work-$name
  log=$out/$name.fuzz.log
  mkdir -p "$work"
  TMPDIR=$tmp OPENBLAS_NUM_THREADS=1 \
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
    echo "ok $n - $name: ${runs} executions in ${FUZZ_TIME} s (${secs}/s), no crash"
  else
    failed=$((failed + 1))
    echo "not ok $n - $name: exit status $status (log: $log)"
    grep -E 'ERROR|SUMMARY|Test unit written|^ *#[0-9]+ ' "$log" | head -n 30 | sed 's/^/# /'
  fi
done
[ "$failed" -eq 0 ]
