#!/bin/sh
# test_require.sh -- require finds the modules shipped beside a script
# (paper.lua's "tielab.stats" is lua/tielab/stats.lua), before any of
# package.path, from whatever folder the lab was started in; and the
# sandbox keeps its rules: the script's folder may be read, nothing
# outside the working directory is looked at or loaded through require,
# not even through a link beside the script.
tap_name=require; . "${srcdir:-.}/tests/lib/tap.sh"
mkdir -p "$tmp/scripts/tielab" "$tmp/work/tielab" "$tmp/outside"
cp "${srcdir:-.}/lua/tielab/stats.lua" "$tmp/scripts/tielab/stats.lua"
echo 'return "decoy in the working directory"' >"$tmp/work/tielab/stats.lua"
echo 'return "outside"' >"$tmp/outside/evil.lua"
ln -s "$tmp/outside/evil.lua" "$tmp/scripts/tielab/linked.lua"
cat >"$tmp/scripts/probe.lua" <<'EOF'
local stats, file = require "tielab.stats"
print(type(stats) == "table" and string.format("t %.6f", stats.t_quantile(0.975, 10)) or tostring(stats))
print("from " .. file:gsub("^.*/scripts/", "scripts/"))
EOF
cat >"$tmp/scripts/escape.lua" <<EOF
package.path = "$tmp/outside/?.lua;" .. package.path
print(pcall(require, "evil"))
print(pcall(require, "tielab.linked"))
EOF

cd "$tmp/work" || exit 1
"$tielab" --headless ../scripts/probe.lua >"$tmp/plain.out" 2>&1
grep -qx 't 2.228139' "$tmp/plain.out" && grep -qx 'from scripts/tielab/stats.lua' "$tmp/plain.out"
ok $? "a script requires the module beside it, not one on package.path ($(tr '\n' ' ' <"$tmp/plain.out"))"

"$tielab" --headless --sandbox ../scripts/probe.lua >"$tmp/sbx.out" 2>&1
grep -qx 't 2.228139' "$tmp/sbx.out" && grep -qx 'from scripts/tielab/stats.lua' "$tmp/sbx.out"
ok $? "so does a sandboxed one: its own folder may be read ($(tr '\n' ' ' <"$tmp/sbx.out"))"

"$tielab" --headless --sandbox ../scripts/escape.lua >"$tmp/esc.out" 2>&1
grep -q "^false	module 'evil' not found" "$tmp/esc.out" &&
  grep -q "'$tmp/outside/evil.lua' not looked at: it is outside the working directory (sandbox)" "$tmp/esc.out"
ok $? "the sandbox does not even look for a module outside the working directory on package.path"
grep -q "^false	module 'tielab.linked' not found" "$tmp/esc.out" &&
  grep -q "'$tmp/scripts/tielab/linked.lua' not looked at: it is outside the working directory (sandbox)" "$tmp/esc.out"
ok $? "nor through a link beside the script that leads outside"
! grep -q 'outside$' "$tmp/esc.out"
ok $? "neither outside file was run"

"$tielab" --headless ../scripts/escape.lua >"$tmp/trusted.out" 2>&1
grep -qx 'true	outside	'"$tmp/outside/evil.lua" "$tmp/trusted.out"
ok $? "without the sandbox, package.path is the script's to extend"

cat >repl.lua <<'EOF'
print(pcall(require, "tielab.stats"))
EOF
"$tielab" --headless --sandbox repl.lua >"$tmp/cwd.out" 2>&1
grep -qx "true	decoy in the working directory	$(pwd -P)/tielab/stats.lua" "$tmp/cwd.out"
ok $? "a script in the working directory finds its own folder's module there"
tap_done
