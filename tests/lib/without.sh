#!/bin/sh
# without.sh -- run a command with some of the test suite's tools hidden,
# so that every test which uses one shows it skips validly without it.
# make check-skips runs the whole suite once for each set:
#
#   tests/lib/without.sh tools make check     mandoc, asciinema, parallel, Open MPI,
#                                         Slurm, clang, ...; torch, matplotlib,
#                                         pandas, numpy, regex
#   tests/lib/without.sh harness make check   tmux, script, pgrep, pkill, python3:
#                                         what drives the lab in a terminal and
#                                         reads its files
#
# Two sets, since a test skipped whole for want of tmux never reaches the
# check that wants asciinema. And which tests have a skip path at all:
#
#   tests/lib/without.sh --skippers TEST...   those of TEST... whose source (a
#                                         C test's .c) skips through a harness
#                                         or sources one that can skip A command is hidden by leaving it off a PATH
# made of links to every other command on the PATH; python3 also by
# pointing TIELAB_PYTHON (the tests' Python, tests/lib/tap.sh) at nothing; a
# Python module by a package of its name first on PYTHONPATH whose import
# fails as a missing module's does.
# --skippers: a skip helper of tests/lib/tap.*, or tmux.sh, slurm.sh,
# peer.sh or comma_locale.h, which skip for their own tools.
if [ "${1:-}" = --skippers ]; then
  shift
  srcdir=${srcdir:-.}
  for t in "$@"; do
    case $t in *.sh | *.lua) src=$srcdir/$t ;; *) src=$srcdir/$t.c ;; esac
    grep -Eq '(^|[^[:alnum:]_.])(skip|skip_all|tap\.skip|tap\.skip_all)[ (]|tmux\.sh|slurm\.sh|peer\.sh|comma_locale\.h' \
      "$src" 2>/dev/null && echo "$t"
  done
  exit 0
fi

case ${1:-} in
  tools)
    hidden_commands="mandoc man groff nroff asciinema parallel mpirun mpiexec mpicc orterun
      sbatch srun salloc scontrol slurmctld slurmd munged munge clang localedef iconv"
    hidden_python="torch matplotlib pandas numpy regex" ;;
  harness)
    hidden_commands="tmux script pgrep pkill python3"
    hidden_python= ;;
  *) echo "usage: tests/lib/without.sh tools|harness COMMAND [ARG...]" >&2; exit 2 ;;
esac
set_name=$1
shift
[ $# -gt 0 ] || { echo "usage: tests/lib/without.sh tools|harness COMMAND [ARG...]" >&2; exit 2; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/tielab-without.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT INT TERM HUP
mkdir "$dir/bin" "$dir/python" || exit 1

is_hidden() {
  for h in $hidden_commands; do [ "$1" = "$h" ] && return 0; done
  return 1
}

# The first of each name on the PATH wins, as it would have. Folders are
# made absolute (a link to a relative name would point nowhere), and the
# PATH is split without globbing.
set -f
old_ifs=$IFS
IFS=:
dirs=$PATH
for d in $dirs; do
  IFS=$old_ifs
  set +f
  d=$(cd "${d:-.}" 2>/dev/null && pwd) || continue
  for f in "$d"/*; do
    name=${f##*/}
    [ -x "$f" ] && [ ! -d "$f" ] || continue
    [ -e "$dir/bin/$name" ] || [ -L "$dir/bin/$name" ] && continue
    is_hidden "$name" || ln -s "$f" "$dir/bin/$name"
  done
done
IFS=$old_ifs
set +f

for m in $hidden_python; do
  mkdir "$dir/python/$m" &&
    printf 'raise ModuleNotFoundError("No module named %s (hidden by tests/lib/without.sh)", name=%s)\n' \
      "'$m'" "'$m'" >"$dir/python/$m/__init__.py" || exit 1
done
if is_hidden python3; then
  TIELAB_PYTHON=$dir/hidden/python3
  export TIELAB_PYTHON
fi

echo "without.sh: $set_name hidden: $(echo $hidden_commands)${hidden_python:+ (commands); $(echo $hidden_python) (Python modules)}"
PATH=$dir/bin
PYTHONPATH=$dir/python${PYTHONPATH:+:$PYTHONPATH}
export PATH PYTHONPATH
"$@"
