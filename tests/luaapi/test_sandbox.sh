#!/bin/sh
# test_sandbox.sh -- 'tielab --headless --sandbox': no way out to the
# system (os.execute, io.popen, C modules, loadlib, bytecode, debug.sethook,
# files outside the working directory), while ordinary scripts still work.
tielab="$(cd "${top_builddir:-.}" && pwd)/tielab"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tielab-sbx.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/work"
cp "${srcdir:-.}/tests/lib/tap.lua" "$tmp/work/"
export XDG_CACHE_HOME="${XDG_CACHE_HOME:-$tmp/cache}"
# A checkpoint that names a corpus outside the working directory, made
# without the sandbox.
i=0
while [ $i -lt 200 ]; do echo "the quick brown fox jumps over the lazy dog $i times"; i=$((i + 1)); done >"$tmp/outside.txt"
cat >"$tmp/mk.lua" <<LUA
local r = lab.run{vocab = 256, dim = 32, layers = 1, heads = 2, ctx = 16, batch = 2, corpus = "$tmp/outside.txt"}
assert(r:save("$tmp/work/elsewhere.safetensors"))
LUA
"$tielab" --headless "$tmp/mk.lua" >&2 || echo "Bail out! cannot make a checkpoint with an outside corpus"
cat >"$tmp/work/sbx.lua" <<'LUA'
package.path = "./?.lua;" .. package.path
local tap = require "tap"
tap.is(os.execute, nil, "no os.execute")
tap.is(io.popen, nil, "no io.popen")
tap.is(os.tmpname, nil, "no os.tmpname")
tap.is(package.loadlib, nil, "no package.loadlib")
tap.is(package.cpath, "", "no C module path")
tap.is(debug.sethook, nil, "no debug.sethook")
tap.is(debug.getupvalue, nil, "no debug.getupvalue")
tap.raises("outside the working directory", "no reading /etc", io.open, "/etc/passwd")
tap.raises("outside the working directory", "no writing above the working directory", io.open, "../escape.txt", "w")
tap.raises("outside the working directory", "no loadfile outside", loadfile, "/etc/passwd")
tap.raises("outside the working directory", "no dofile outside", dofile, "/etc/passwd")
tap.raises("outside the working directory", "no os.remove outside", os.remove, "/tmp/x")
tap.raises("outside the working directory", "no checkpoints outside", function()
  lab.run{vocab = 256, dim = 32, layers = 2, heads = 2, ctx = 32, batch = 4}:save("/tmp/x.safetensors")
end)
tap.raises("outside the working directory", "no corpus outside", lab.run,
           {vocab = 256, dim = 32, layers = 1, heads = 2, ctx = 16, batch = 2, corpus = "/etc/passwd"})
tap.raises("outside the working directory", "no checkpoint naming a corpus outside", lab.load,
           "elsewhere.safetensors", "elsewhere")
tap.is(#lab.runs, 1, "and the refused checkpoint left no run")
tap.raises("outside the working directory", "no loading from outside", lab.load, "/etc/passwd")
tap.raises("outside the working directory", "no export outside", function()
  lab.runs[1]:export("/tmp/x.csv")
end)
local f, err = load(string.dump(function() return 1 end))
tap.ok(f == nil and err:find("binary", 1, true), "no binary chunks: " .. tostring(err))
tap.ok(not pcall(require, "lfs"), "no C modules through require")
local w = assert(io.open("inside.txt", "w"))
w:write("fine") w:close()
tap.is(io.open("inside.txt"):read("a"), "fine", "files in the working directory work")
tap.ok(os.remove("inside.txt"), "and can be removed")
tap.is(load("return 1 + 1")(), 2, "text chunks load")
local d = lab.run{vocab = 256, dim = 32, layers = 1, heads = 2, ctx = 16, batch = 2, name = "data"}
tap.is(d:detokenize(d:tokenize("ok")), "ok", "a run's tokenizer works, touching no file")
tap.ok(d:set_param("E_in", d:param("E_in")) == d and #d:hidden() == 2, "and so do its parameters and hidden states")
tap.done()
LUA
cd "$tmp/work" || exit 1
"$tielab" --headless --sandbox sbx.lua >"$tmp/sbx.out"
status=$?
sed '/^1\.\.[0-9]*$/d' "$tmp/sbx.out"
n=$(grep -c '^\(not \)\{0,1\}ok ' "$tmp/sbx.out")

# The loader asks the sandbox about a checkpoint's corpus before it touches
# it: nothing is tokenized or cached, and a missing corpus gives the same
# refusal as a present one, so a script learns nothing about outside files.
check() {
  n=$((n + 1))
  if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; status=1; fi
}
cat >"$tmp/work/sbx_load.lua" <<'LUA'
local ok, err = pcall(lab.load, "elsewhere.safetensors")
print(ok and "LOADED" or err)
LUA
XDG_CACHE_HOME="$tmp/sbxcache" "$tielab" --headless --sandbox sbx_load.lua >"$tmp/present.out" 2>&1
grep -q "corpus '$tmp/outside.txt' of 'elsewhere.safetensors' is outside the working directory (sandbox)" \
  "$tmp/present.out"
check $? "lab.load refuses an outside corpus: $(head -c 200 "$tmp/present.out")"
test -z "$(find "$tmp/sbxcache" -type f 2>/dev/null)"
check $? "and never read it: no tokenizer was trained or cached"
mv "$tmp/outside.txt" "$tmp/outside.gone"
XDG_CACHE_HOME="$tmp/sbxcache" "$tielab" --headless --sandbox sbx_load.lua >"$tmp/absent.out" 2>&1
cmp -s "$tmp/present.out" "$tmp/absent.out"
check $? "a missing outside corpus gives the same refusal as a present one"
echo "1..$n"
exit $status
