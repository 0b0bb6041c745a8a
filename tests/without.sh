#!/bin/sh
# without.sh -- run a command with the test suite's optional tools hidden,
# so that every test which uses one shows it skips validly without it
# (make check-skips runs the whole suite this way):
#
#   tests/without.sh make check
#
# A command is hidden by leaving it off a PATH made of links to every
# other command on the PATH; a Python module, by a package of its name
# first on PYTHONPATH whose import fails as a missing module's does.
# WITHOUT_COMMANDS and WITHOUT_PYTHON replace the lists below.
hidden_commands=${WITHOUT_COMMANDS-"mandoc man groff nroff asciinema parallel
  mpirun mpiexec mpicc orterun sbatch srun salloc scontrol slurmctld slurmd munged munge
  clang script tmux localedef iconv"}
hidden_python=${WITHOUT_PYTHON-"torch matplotlib pandas numpy"}

[ $# -gt 0 ] || { echo "usage: tests/without.sh COMMAND [ARG...]" >&2; exit 2; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/tielab-without.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT INT TERM HUP
mkdir "$dir/bin" "$dir/python" || exit 1

is_hidden() {
  for h in $hidden_commands; do [ "$1" = "$h" ] && return 0; done
  return 1
}

# The first of each name on the PATH wins, as it would have.
old_ifs=$IFS
IFS=:
for d in $PATH; do
  IFS=$old_ifs
  [ -d "$d" ] || continue
  for f in "$d"/*; do
    name=${f##*/}
    [ -x "$f" ] && [ ! -d "$f" ] || continue
    [ -e "$dir/bin/$name" ] || [ -L "$dir/bin/$name" ] && continue
    is_hidden "$name" || ln -s "$f" "$dir/bin/$name"
  done
done
IFS=$old_ifs

for m in $hidden_python; do
  mkdir "$dir/python/$m" &&
    printf 'raise ModuleNotFoundError("No module named %s (hidden by tests/without.sh)", name=%s)\n' \
      "'$m'" "'$m'" >"$dir/python/$m/__init__.py" || exit 1
done

echo "without.sh: hidden: $(echo $hidden_commands) (commands); $(echo $hidden_python) (Python modules)"
PATH=$dir/bin
PYTHONPATH=$dir/python${PYTHONPATH:+:$PYTHONPATH}
export PATH PYTHONPATH
"$@"
