#!/bin/sh
# test_install.sh -- 'make install' into a scratch root (DESTDIR) puts the
# binary, tielab-plot, the scripts and their modules, the man page, the README, LICENSE
# and docs/ where they belong; the installed binary, run from another
# folder, finds a script by its bare name along the search path (the
# working directory, then $XDG_DATA_HOME/tielab or ~/.local/share/tielab,
# then the installed data directory), --compare paper runs the installed
# paper.lua, it says where it looked when none has it, and 'make
# uninstall' takes everything away again.
tap_name=install; . "${srcdir:-.}/tests/lib/tap.sh"
root="$tmp/root"
build=$(cd "${top_builddir:-.}" && pwd)
${MAKE:-make} -C "$build" install DESTDIR="$root" >"$tmp/install.out" 2>&1
ok $? "make install DESTDIR=... ($(tail -n 3 "$tmp/install.out" | tr '\n' ' '))"

# The installed tree, whatever the prefix: find the binary and go from there.
bin=$(find "$root" -path '*/bin/tielab' -type f | head -n 1)
[ -n "$bin" ] && [ -x "$bin" ]
ok $? "the binary is installed in bin/ (${bin#"$root"})"
prefix=${bin%/bin/tielab}
for f in share/tielab/paper.lua share/tielab/sweep.lua share/tielab/tielab/stats.lua share/tielab/tielab/findings.lua \
         share/tielab/tielab/script.lua share/tielab/tielab/sweep.lua share/tielab/tielab/settings.lua \
         share/man/man1/tielab.1 \
         share/doc/tielab/README.md share/doc/tielab/LICENSE share/doc/tielab/docs/lua-api.md \
         share/doc/tielab/docs/autosave.md share/doc/tielab/docs/scale.md \
         share/doc/tielab/assets/lab.png; do
  test -s "$prefix/$f"
  ok $? "installed: PREFIX/$f"
done

# The figures' program, installed beside the binary: it runs from there and
# names itself in what it says (a CSV it does not know is refused before
# matplotlib is needed).
test -x "$prefix/bin/tielab-plot"
ok $? "installed: PREFIX/bin/tielab-plot"
if [ -x "$py" ]; then
  printf 'a,b\n1,2\n' >"$tmp/odd.csv"
  "$prefix/bin/tielab-plot" "$tmp/odd.csv" --out "$tmp/figs" >"$tmp/plot.out" 2>&1
  st=$?
  [ "$st" -eq 1 ] && grep -q "^tielab-plot: $tmp/odd.csv: unknown CSV header 'a,b'; expected the columns of" "$tmp/plot.out"
  ok $? "the installed tielab-plot runs and refuses a CSV it does not know (status $st: $(head -c 120 "$tmp/plot.out"))"
else
  skip "the installed tielab-plot: no $py to run it"
fi

home="$tmp/home" elsewhere="$tmp/elsewhere"
mkdir -p "$home" "$elsewhere"
cd "$elsewhere" || exit 1
run() { env -u XDG_DATA_HOME HOME="$home" "$@"; }

# paper.lua from the data directory: its unknown-argument check comes after
# it has required tielab.script and tielab.stats beside it. (Lua shortens
# the file's name in the message; the next test shows which folder serves.)
run "$bin" --headless paper.lua bogus=1 >"$tmp/paper.out" 2>&1
st=$?
[ "$st" -eq 2 ] && grep -q "^tielab: unknown argument 'bogus' (known: .*seeds" "$tmp/paper.out"
ok $? "from another folder, 'paper.lua' is the installed one, and runs (status $st: $(head -c 120 "$tmp/paper.out"))"

# --compare paper runs the installed paper.lua, tiny by its run options:
# its table, and its files in the working directory.
run "$bin" --headless --compare paper --vocab 256 --dim 8 --layers 1 --heads 1 --ctx 4 --batch 1 --steps 2 \
  --lens-every 0 --threads 1 >"$tmp/compare.out" 2>"$tmp/compare.err"
st=$?
[ "$st" -eq 0 ] && grep -qx 'tielab paper comparison: 2 steps, seeds 1,2,3, V=256 d=8 L=1 H=1 T=4 B=1' "$tmp/compare.out" &&
  grep -q '^  shared_init_biases_in ' "$tmp/compare.out" && [ -s paper_summary.csv ]
ok $? "--compare paper runs the installed paper.lua and prints its findings (status $st: $(tail -n 1 "$tmp/compare.err"))"
rm -f paper_steps.csv paper_lens.csv paper_summary.csv

mkdir -p "$home/.local/share/tielab" "$tmp/xdg/tielab"
echo 'print("home " .. arg[0]); print(select(2, require "tielab.stats"))' >"$home/.local/share/tielab/paper.lua"
run "$bin" --headless paper.lua >"$tmp/home.out" 2>&1
grep -qx "home $home/.local/share/tielab/paper.lua" "$tmp/home.out" &&
  grep -qx "$prefix/share/tielab/tielab/stats.lua" "$tmp/home.out"
ok $? "~/.local/share/tielab comes before the data directory, and its script requires the installed modules ($(tr '\n' ' ' <"$tmp/home.out"))"

echo 'print("xdg " .. arg[0])' >"$tmp/xdg/tielab/paper.lua"
run XDG_DATA_HOME="$tmp/xdg" "$bin" --headless paper.lua >"$tmp/xdg.out" 2>&1
grep -qx "xdg $tmp/xdg/tielab/paper.lua" "$tmp/xdg.out"
ok $? "\$XDG_DATA_HOME/tielab replaces ~/.local/share/tielab ($(cat "$tmp/xdg.out"))"

# A script found by name loads its siblings by their bare names, as it
# requires its modules; one in the working directory still comes first.
echo 'return "sibling " .. (... or "by dofile")' >"$tmp/xdg/tielab/helper.lua"
echo 'print(dofile("helper.lua")) print(loadfile("helper.lua")("by loadfile"))' >"$tmp/xdg/tielab/sib.lua"
run XDG_DATA_HOME="$tmp/xdg" "$bin" --headless sib.lua >"$tmp/sib.out" 2>&1
run XDG_DATA_HOME="$tmp/xdg" "$bin" --headless --sandbox sib.lua >>"$tmp/sib.out" 2>&1
[ "$(grep -cx 'sibling by dofile' "$tmp/sib.out")" -eq 2 ] && [ "$(grep -cx 'sibling by loadfile' "$tmp/sib.out")" -eq 2 ]
ok $? "dofile and loadfile find a bare name beside the running script, sandboxed too ($(tr '\n' ' ' <"$tmp/sib.out"))"
echo 'return "cwd"' >helper.lua
run XDG_DATA_HOME="$tmp/xdg" "$bin" --headless sib.lua >"$tmp/sib.out" 2>&1
grep -qx 'cwd' "$tmp/sib.out"
ok $? "the working directory's file of that name comes first ($(tr '\n' ' ' <"$tmp/sib.out"))"
rm helper.lua

echo 'print("cwd " .. arg[0])' >paper.lua
run XDG_DATA_HOME="$tmp/xdg" "$bin" --headless paper.lua >"$tmp/cwd.out" 2>&1
grep -qx "cwd paper.lua" "$tmp/cwd.out"
ok $? "the working directory comes first, and arg[0] stays as given ($(cat "$tmp/cwd.out"))"

run XDG_DATA_HOME="$tmp/xdg" "$bin" --headless nosuch.lua >"$tmp/none.out" 2>&1
st=$?
[ "$st" -eq 2 ] &&
  grep -qF "cannot find script 'nosuch.lua' (looked in ., $tmp/xdg/tielab, $prefix/share/tielab)" "$tmp/none.out"
ok $? "a name found nowhere: exit 2 and the folders searched (status $st: $(cat "$tmp/none.out"))"

# The installed sweep.lua's task lines name the installed binary and script,
# absolute, from any folder.
run "$bin" --headless sweep.lua seeds=1 scales=1,2 out=sw tasks >"$tmp/tasks.out" 2>&1
st=$?
[ "$st" -eq 0 ] && [ "$(wc -l <"$tmp/tasks.out")" -eq 2 ] &&
  [ "$(grep -c "^$(readlink -f "$bin") --headless $prefix/share/tielab/sweep.lua .* out=$(pwd -P)/sw task=[01]\$" "$tmp/tasks.out")" -eq 2 ]
ok $? "the installed sweep.lua prints its tasks with the installed binary and script (status $st: $(head -c 160 "$tmp/tasks.out"))"
rm -r sw

rm paper.lua
run "$bin" --headless ./paper.lua >"$tmp/path.out" 2>&1
st=$?
[ "$st" -ne 0 ] && grep -q 'paper.lua' "$tmp/path.out" && ! grep -q '^home' "$tmp/path.out"
ok $? "a name with a '/' is a path, never searched for (status $st)"

# The man page as man shows it, where a formatter is installed.
formatter=
if have mandoc; then formatter=mandoc; elif have man groff; then formatter=man; fi
if [ -z "$formatter" ]; then
  skip "the installed man page: no mandoc, nor man with groff (Debian package mandoc)"
else
  page=$prefix/share/man/man1/tielab.1
  if [ "$formatter" = mandoc ]; then mandoc -Tutf8 "$page"; else MANWIDTH=80 man -l "$page"; fi \
    >"$tmp/man.raw" 2>"$tmp/man.err"
  st=$?
  bs=$(printf '\b')
  sed "s/.$bs//g" "$tmp/man.raw" >"$tmp/man.out"   # bold and underline by overstriking
  [ "$st" -eq 0 ] && grep -q 'EXIT STATUS' "$tmp/man.out" && grep -q 'XDG_DATA_HOME' "$tmp/man.out" &&
    grep -q "${prefix#"$root"}/share/tielab" "$tmp/man.out"
  ok $? "the installed man page renders and names the folders it was installed to ($(head -c 100 "$tmp/man.err"))"
fi

cd "$tmp" || exit 1
${MAKE:-make} -C "$build" uninstall DESTDIR="$root" >"$tmp/uninstall.out" 2>&1
ok $? "make uninstall"
left=$(find "$root" -type f | sed "s|^$root||" | head -n 5)
[ -z "$left" ]
ok $? "nothing is left after make uninstall ($left)"
tap_done
