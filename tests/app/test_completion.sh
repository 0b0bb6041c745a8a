#!/bin/bash
# test_completion.sh -- the bash completion (completions/tielab) as bash
# calls it: COMP_WORDS and COMP_CWORD set, the function run, COMPREPLY read.
: "${top_builddir:=.}" "${top_srcdir:=.}"
tielab=$(cd "$top_builddir" && pwd)/tielab
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tielab-comp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
. "$top_srcdir/completions/tielab"

ok() {   # ok DESCRIPTION CONDITION...
  local desc=$1
  shift
  n=$((n + 1))
  if "$@"; then echo "ok $n - $desc"; else failed=$((failed + 1)); echo "not ok $n - $desc"; echo "# got: ${COMPREPLY[*]}"; fi
}

complete_line() {   # complete_line WORD... : the last word is the one completed
  COMP_WORDS=("$tielab" "$@")
  COMP_CWORD=$#
  COMPREPLY=()
  _tielab
}

offers() { local w; for w in "${COMPREPLY[@]}"; do [[ $w == "$1" ]] && return 0; done; return 1; }
lacks() { ! offers "$1"; }

ok "complete -p names the function" bash -c ". '$top_srcdir/completions/tielab'; complete -p tielab | grep -q -- '-F _tielab'"
complete_line --in
ok "--in offers --in-scale, --init-seed and --instruments" eval 'offers --in-scale && offers --init-seed && offers --instruments'
complete_line --na
ok "--na offers --name" offers --name
complete_line --bench --na
ok "after --bench, --name is not offered (--bench refuses it)" lacks --name
complete_line --bench --le
ok "after --bench, --lens-every is not offered" lacks --lens-every
complete_line --bench --instruments --le
ok "after --bench --instruments, --lens-every is" offers --lens-every
complete_line --headless --compare paper --t
ok "after --compare, --tie and --tie-merge are not offered, --threads is" \
  eval 'lacks --tie && lacks --tie-merge && offers --threads'
complete_line --no-d
ok "boolean settings have their --no- form" offers --no-decay-all
complete_line -
ok "-h and -V" eval 'offers -h && offers -V'
complete_line --schedule ""
ok "--schedule offers its values" eval 'offers constant && offers cosine && offers linear && [ ${#COMPREPLY[@]} = 3 ]'
complete_line --tie u
ok "--tie u offers untied" eval 'offers untied && [ ${#COMPREPLY[@]} = 1 ]'
complete_line --theme = ""
ok "--theme= offers the themes" eval 'offers dark && offers light && offers mono'
complete_line --compare ""
ok "--compare offers paper" offers paper
mkdir -p "$tmp/work" "$tmp/data/tielab"
: >"$tmp/work/mine.lua"
: >"$tmp/work/notes.txt"
: >"$tmp/data/tielab/shared.lua"
cd "$tmp/work" || exit 1
export XDG_DATA_HOME="$tmp/data"
complete_line m
ok "a script in the working directory" offers mine.lua
complete_line n
ok "not a file that is not a script" lacks notes.txt
complete_line sh
ok "a script by name from \$XDG_DATA_HOME/tielab" offers shared.lua
complete_line --corpus no
ok "--corpus completes files" offers notes.txt
complete_line --headless mine.lua --st
ok "after the script, its own arguments: no tielab options" lacks --steps

echo "1..$n"
[ "$failed" = 0 ]
