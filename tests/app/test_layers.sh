#!/bin/sh
# test_layers.sh -- the layers of docs/architecture.md hold in the sources:
# no file includes a header of a layer above its own, and every tielab
# header is named from src/ ("base/err.h", never "../base/err.h" nor "err.h").
#
# The order, lowest first (a file may include its own layer and those below):
#  -1 base     src/base/     OS and text utilities: UTF-8, folders, signals, files
#   0 core     src/core/     tensors, model, optimizer, tokenizer, data, files
#   1 dist     src/dist/     the ranks of an mpirun job: core's Reducer over MPI
#   2 lab      src/lab/      runs and their instruments, autosave, journal
#   3 luaapi   src/luaapi/   the Lua binding, a client of lab.h
#   4 trainer  src/trainer/  the training thread; it implements luaapi/host.h
#   5 ui       src/ui/       the screen, a client of lab, luaapi and trainer
#   6 app      src/app/      the program's modes (cli, headless, bench, ...)
#   7 main     src/main.c    the process edge
# "config.h" alone is the header configure writes, below every layer.
# A layer's inside (lab/run.h, ui/uistate.h, luaapi/linternal.h,
# core/model_impl.h, core/bpe_impl.h, dist/dist_impl.h,
# trainer/trainer_impl.h, ui/graph_impl.h) is for that layer's own files;
# outside it, only tests that open the layer up include it.
# The checker runs first on small trees with a known fault, so that a
# checker that cannot fail fails this test.
tap_name=layers; . "${srcdir:-.}/tests/lib/tap.sh"

# Rank of a path under src/ ("lab/lab.h", "main.c"); empty: not a layer.
rank() {
  case $1 in
    base/*) echo -1 ;; core/*) echo 0 ;; dist/*) echo 1 ;; lab/*) echo 2 ;; luaapi/*) echo 3 ;; trainer/*) echo 4 ;;
    ui/*) echo 5 ;; app/*) echo 6 ;; main.c) echo 7 ;; *) echo "" ;;
  esac
}

# The layer whose files alone may include $1, or empty: any may.
inside_of() {
  case $1 in
    lab/run.h | ui/uistate.h | luaapi/linternal.h | core/model_impl.h | core/bpe_impl.h | dist/dist_impl.h | \
    trainer/trainer_impl.h | ui/graph_impl.h) echo "${1%%/*}" ;;
    *) echo "" ;;
  esac
}

# Print every fault of the tree under $1 (a src/ folder), one a line:
# FILE: includes HEADER (what is wrong). Exit 0 only when there is none.
check_tree() {
  root=$1 faults=0
  for f in $(cd "$root" && find . -name '*.c' -o -name '*.h' | sed 's|^\./||' | sort); do
    own=$(rank "$f")
    [ -n "$own" ] || { echo "$f: not in a layer's folder"; faults=$((faults + 1)); continue; }
    for h in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$root/$f"); do
      [ "$h" = config.h ] && continue
      to=$(rank "$h")
      if [ -z "$to" ] || [ ! -f "$root/$h" ]; then
        echo "$f: includes \"$h\" (not a header named from src/)"; faults=$((faults + 1))
      elif [ "$to" -gt "$own" ]; then
        echo "$f: includes \"$h\" (a layer above its own)"; faults=$((faults + 1))
      elif [ -n "$(inside_of "$h")" ] && [ "$(inside_of "$h")" != "${f%%/*}" ]; then
        echo "$f: includes \"$h\" (the inside of another layer)"; faults=$((faults + 1))
      fi
    done
  done
  [ "$faults" -eq 0 ]
}

# A clean little tree passes, and each kind of fault is caught.
fixture() {
  rm -rf "$tmp/src" && mkdir -p "$tmp/src/base" "$tmp/src/core" "$tmp/src/lab" "$tmp/src/ui"
  printf '#include "base/err.h"\n' >"$tmp/src/base/err.c"
  : >"$tmp/src/base/err.h"
  printf '#include "base/err.h"\n' >"$tmp/src/core/model.h"
  printf '#include "config.h"\n#include "base/err.h"\n#include "core/model.h"\n' >"$tmp/src/lab/lab.h"
  printf '#include "lab/lab.h"\n#include "base/err.h"\n' >"$tmp/src/ui/ui.c"
}
fixture
check_tree "$tmp/src" >"$tmp/clean.out"
ok $? "the checker passes a tree that keeps the layers ($(tr '\n' ' ' <"$tmp/clean.out"))"

fixture
printf '#include "ui/ui.h"\n' >>"$tmp/src/lab/lab.h" && : >"$tmp/src/ui/ui.h"
check_tree "$tmp/src" >"$tmp/up.out"
[ $? -ne 0 ] && grep -q 'lab/lab.h: includes "ui/ui.h" (a layer above its own)' "$tmp/up.out"
ok $? "it fails when lab includes a ui header ($(tr '\n' ' ' <"$tmp/up.out"))"

fixture
printf '#include "core/model.h"\n' >>"$tmp/src/base/err.c"
check_tree "$tmp/src" >"$tmp/base.out"
[ $? -ne 0 ] && grep -q 'base/err.c: includes "core/model.h" (a layer above its own)' "$tmp/base.out"
ok $? "it fails when base includes a core header ($(tr '\n' ' ' <"$tmp/base.out"))"

fixture
printf '#include "../base/err.h"\n' >>"$tmp/src/lab/lab.h"
check_tree "$tmp/src" >"$tmp/rel.out"
[ $? -ne 0 ] && grep -q '"../base/err.h" (not a header named from src/)' "$tmp/rel.out"
ok $? "it fails on an include relative to the file ($(tr '\n' ' ' <"$tmp/rel.out"))"

fixture
printf '#include "err.h"\n' >>"$tmp/src/base/err.c"
check_tree "$tmp/src" >"$tmp/bare.out"
[ $? -ne 0 ] && grep -q '"err.h" (not a header named from src/)' "$tmp/bare.out"
ok $? "it fails on a header named from its own folder ($(tr '\n' ' ' <"$tmp/bare.out"))"

fixture
: >"$tmp/src/lab/run.h"
printf '#include "lab/run.h"\n' >>"$tmp/src/ui/ui.c"
check_tree "$tmp/src" >"$tmp/inside.out"
[ $? -ne 0 ] && grep -q 'ui/ui.c: includes "lab/run.h" (the inside of another layer)' "$tmp/inside.out"
ok $? "it fails when ui includes the inside of lab ($(tr '\n' ' ' <"$tmp/inside.out"))"

# The tree itself.
check_tree "${srcdir:-.}/src" >"$tmp/tree.out"
ok $? "every file of src/ includes only its layer and those below ($(tr '\n' ' ' <"$tmp/tree.out"))"

# Tests name tielab's headers from src/ as well.
grep -n '#[[:space:]]*include[[:space:]]*"\.\./' "${srcdir:-.}"/tests/*/*.c "${srcdir:-.}"/tests/*/*.h \
  >"$tmp/tests.out"
[ $? -eq 1 ]
ok $? "no test includes a header by a relative path ($(tr '\n' ' ' <"$tmp/tests.out"))"

tap_done
