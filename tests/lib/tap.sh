# tap.sh -- the Test Anything Protocol for tielab's shell tests, sourced
# after setting 'tap_name':
#
#   tap_name=stop; . "${srcdir:-.}/tests/lib/tap.sh"
#   have mandoc || skip_all "mandoc is not installed"   # before any check
#   ok $? "what was checked"      # 0 passes, anything else fails
#   if have asciinema; then ...; ok $? "..."; else skip "asciinema is not installed"; fi
#   tap_done
#
# A test whose tool is missing skips through skip or skip_all, never by
# printing a "# SKIP" line of its own: the plan then counts every line,
# and .ci/run proves each such path by running the suite with the
# optional tools hidden (tests/lib/without.sh). What the build itself makes
# and ships is never optional: its absence is a failure (bail_out).
#
# It sets 'tielab' (the built binary, absolute) and 'tmp' (a fresh
# directory, removed at exit), 'CAP', the memory cap to run it under, and
# 'py', the Python tests read files with: Debian's (its packages, such as
# matplotlib and pandas, are what bootstrap installs), or $TIELAB_PYTHON.
tielab="$(cd "${top_builddir:-.}" && pwd)/tielab"
py=${TIELAB_PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tielab-${tap_name:-test}.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# A cap on a test's address space, where the machine has prlimit; none
# under AddressSanitizer, whose shadow memory alone is terabytes of it.
CAP="prlimit --as=4000000000 --"
command -v prlimit >/dev/null 2>&1 || CAP=
[ -n "${ASAN_OPTIONS:-}" ] && CAP=
n=0
failed=0
# ok STATUS WHAT: a '#' in WHAT is escaped, so that no text a check quotes
# (a command's output) reads as a directive such as "# TODO".
ok() {
  n=$((n + 1))
  case $2 in *'#'*) tap_what=$(printf '%s' "$2" | sed 's/#/\\#/g') ;; *) tap_what=$2 ;; esac
  if [ "$1" -eq 0 ]; then echo "ok $n - $tap_what"; else echo "not ok $n - $tap_what"; failed=$((failed + 1)); fi
}
# have COMMAND...: whether every COMMAND is on the PATH.
have() {
  for tap_c in "$@"; do command -v "$tap_c" >/dev/null 2>&1 || return 1; done
}
# skip WHY [COUNT]: COUNT checks (1 unless said) skipped, saying why.
skip() {
  tap_i=0
  while [ $tap_i -lt "${2:-1}" ]; do
    n=$((n + 1))
    echo "ok $n # SKIP $1"
    tap_i=$((tap_i + 1))
  done
}
# skip_all WHY: the whole test skipped: the plan of none, and the end.
# Only before the first check: after one, the plan could no longer say
# how many there were, so it fails instead of lying.
skip_all() {
  if [ "$n" -gt 0 ]; then
    ok 1 "skip_all after $n checks: $1"
    tap_done
  fi
  echo "1..0 # SKIP $1"
  exit 0
}
# bail_out WHY: the test cannot go on (what the build makes is missing, a
# step every later check needs failed): an error, never a skip.
bail_out() {
  echo "Bail out! $1"
  exit 1
}
# tap_relay FILE: the checks of another TAP stream (a Lua test's output)
# as checks of this test, renumbered into its plan; its skips stay skips,
# its comments pass, its plan goes.
tap_relay() {
  while IFS= read -r tap_line; do
    tap_what=$(printf '%s\n' "$tap_line" | sed -E 's/^(not )?ok( [0-9]+)?( - )?//')
    case $tap_line in
      "ok "*"# SKIP"*) skip "${tap_line#*# SKIP }" ;;
      "ok "*) ok 0 "$tap_what" ;;
      "not ok "*) ok 1 "$tap_what" ;;
      "#"*) echo "$tap_line" ;;
    esac
  done <"$1"
}
# A small English-like corpus of $2 lines in the file $1.
tap_corpus() {
  tap_i=0
  while [ $tap_i -lt "$2" ]; do
    echo "line $tap_i: the quick brown fox jumps over the lazy dog, then $((tap_i * 7 % 13)) more."
    tap_i=$((tap_i + 1))
  done >"$1"
}
tap_done() {
  echo "1..$n"
  [ "$failed" -eq 0 ]
  exit $?
}
