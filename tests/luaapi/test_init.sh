#!/bin/sh
# test_init.sh -- the init file: $XDG_CONFIG_HOME/tielab/init.lua (else
# ~/.config/tielab/init.lua) runs before a headless script and in the lab,
# --no-init skips it, --sandbox never runs it, and an error in it stops
# tielab with status 2 and a message that names the file.
tap_name=init; . "${srcdir:-.}/tests/lib/tap.sh"
export XDG_STATE_HOME="$tmp/state"
mkdir -p "$tmp/config/tielab" "$tmp/home/.config/tielab" "$tmp/work"
cat >"$tmp/config/tielab/init.lua" <<'LUA'
INIT_RAN = (INIT_RAN or 0) + 1
lab.log("init: %s", arg[0])
LUA
echo 'print("init ran " .. tostring(INIT_RAN))' >"$tmp/work/s.lua"
cd "$tmp/work" || exit 1

XDG_CONFIG_HOME="$tmp/config" "$tielab" --headless s.lua >out 2>err
ok $? "a script runs with an init file"
grep -qx 'init ran 1' out && grep -q "init: $tmp/config/tielab/init.lua" err
ok $? "the init file ran once, before the script (\$XDG_CONFIG_HOME/tielab/init.lua)"

XDG_CONFIG_HOME="$tmp/config" "$tielab" --headless --no-init s.lua >out 2>err
grep -qx 'init ran nil' out && [ ! -s err ]
ok $? "--no-init skips it"

XDG_CONFIG_HOME="$tmp/config" "$tielab" --headless --sandbox s.lua >out 2>err
grep -qx 'init ran nil' out && [ ! -s err ]
ok $? "--sandbox never runs it"

cp "$tmp/config/tielab/init.lua" "$tmp/home/.config/tielab/init.lua"
env -u XDG_CONFIG_HOME HOME="$tmp/home" "$tielab" --headless s.lua >out 2>err
grep -qx 'init ran 1' out
ok $? "without XDG_CONFIG_HOME: ~/.config/tielab/init.lua"
XDG_CONFIG_HOME=relative HOME="$tmp/home" "$tielab" --headless s.lua >out 2>err
grep -qx 'init ran 1' out
ok $? "a relative XDG_CONFIG_HOME is ignored, as the XDG rules say"
XDG_CONFIG_HOME="$tmp/none" HOME="$tmp/none" "$tielab" --headless s.lua >out 2>err
grep -qx 'init ran nil' out && [ ! -s err ]
ok $? "no init file: nothing said"

printf 'local x = 1\nerror("broken setup")\n' >"$tmp/config/tielab/init.lua"
XDG_CONFIG_HOME="$tmp/config" "$tielab" --headless s.lua >out 2>err
rc=$?
ok $((rc != 2)) "an error in the init file: status 2 (got $rc)"
[ ! -s out ] && grep -q "^tielab: init file $tmp/config/tielab/init.lua: .*init.lua:2: broken setup (--no-init skips it)$" err
ok $? "the script does not run; the message names the file and the line"
XDG_CONFIG_HOME="$tmp/config" "$tielab" --headless --no-init s.lua >out 2>err
ok $? "--no-init gets past a broken init file"

# The lab (its line mode, stdin not a terminal) runs it too.
echo 'INIT_RAN = 7' >"$tmp/config/tielab/init.lua"
echo 'print("lab sees " .. tostring(INIT_RAN))' |
  XDG_CONFIG_HOME="$tmp/config" TERM=dumb "$tielab" --vocab 256 --dim 32 --layers 2 --heads 2 --ctx 32 --batch 4 >out 2>err
grep -q 'lab sees 7' out
ok $? "the lab runs it before its REPL"
printf 'error("broken")\n' >"$tmp/config/tielab/init.lua"
echo 'print("lab ran")' | XDG_CONFIG_HOME="$tmp/config" TERM=dumb "$tielab" >out 2>err
rc=$?
ok $((rc != 2)) "the lab with a broken init file: status 2 (got $rc)"
grep -q "^tielab: init file $tmp/config/tielab/init.lua: " err && ! grep -q 'lab ran' out
ok $? "the lab says which file and does not start"
tap_done
