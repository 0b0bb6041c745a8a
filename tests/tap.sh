# tap.sh -- the Test Anything Protocol for tielab's shell tests, sourced
# after setting 'tap_name':
#
#   tap_name=stop; . "${srcdir:-.}/tests/tap.sh"
#   ok $? "what was checked"      # 0 passes, anything else fails
#   tap_done
#
# It sets 'tielab' (the built binary, absolute) and 'tmp' (a fresh
# directory, removed at exit), and 'CAP', the memory cap to run it under.
tielab="$(cd "${top_builddir:-.}" && pwd)/tielab"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tielab-${tap_name:-test}.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# A cap on a test's address space, where the machine has prlimit; none
# under AddressSanitizer, whose shadow memory alone is terabytes of it.
CAP="prlimit --as=4000000000 --"
command -v prlimit >/dev/null 2>&1 || CAP=
[ -n "${ASAN_OPTIONS:-}" ] && CAP=
n=0
failed=0
ok() {
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi
}
# A small English-like corpus of $2 lines in the file $1.
tap_corpus() {
  i=0
  while [ $i -lt "$2" ]; do
    echo "line $i: the quick brown fox jumps over the lazy dog, then $((i * 7 % 13)) more."
    i=$((i + 1))
  done >"$1"
}
tap_done() {
  echo "1..$n"
  exit $failed
}
