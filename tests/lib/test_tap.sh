#!/bin/sh
# test_tap.sh -- the harnesses' skip paths as automake reads them. Each of
# tap.sh, tap.lua and tap.h, made to skip a check, skip a whole test, skip
# after a check and bail out, is run through automake's own TAP driver,
# whose results must be SKIP where a tool is missing and ERROR or FAIL
# where something else is wrong, with no error in the plan. And no test
# prints a "# SKIP" line or a plan of none of its own: every skip goes
# through a harness, so the plan counts it and make check-skips proves it.
tap_name=tap; . "${srcdir:-.}/tests/lib/tap.sh"
top=$(cd "${top_srcdir:-.}" && pwd)
driver=$top/build-aux/tap-driver.sh
selftest=$(cd "${top_builddir:-.}" && pwd)/tests/lib/tap_selftest
[ -f "$driver" ] || bail_out "no $driver (autoreconf -i puts it there)"
[ -x "$selftest" ] || bail_out "$selftest was not built"
cd "$tmp" || exit 1

# drive NAME COMMAND...: COMMAND's TAP through the driver; the results it
# wrote (PASS, SKIP, FAIL, ERROR), sorted and counted, in $NAME.results.
drive() {
  name=$1
  shift
  AM_TAP_AWK=${AWK:-awk} /bin/sh "$driver" --test-name "$name" --log-file "$name.log" \
    --trs-file "$name.trs" --color-tests no --enable-hard-errors yes --expect-failure no -- "$@" \
    >"$name.out" 2>&1
  sed -n 's/^:test-result: \([A-Z]*\).*/\1/p' "$name.trs" | sort | uniq -c | awk '{ printf "%s%s:%s", s, $2, $1; s = " " }' \
    >"$name.results"
}
# expect NAME RESULTS WHAT: the driver's results for NAME are RESULTS.
expect() {
  got=$(cat "$1.results")
  [ "$got" = "$2" ]
  ok $? "$3 (driver: $got; want $2)"
  [ "$got" = "$2" ] || sed 's/^/# /' "$1.out" "$1.log" | head -n 12
}
# expect_failure NAME WHAT: no skip, and a FAIL or an ERROR.
expect_failure() {
  ! grep -q SKIP "$1.results" && grep -Eq 'FAIL|ERROR' "$1.results"
  ok $? "$2 ($(cat "$1.results"))"
}
# sh_case NAME LINES / lua_case NAME LINES: a test of LINES, after its
# harness is loaded, through the driver.
sh_case() {
  printf 'tap_name=t; . "%s/tests/lib/tap.sh"\n%s\n' "$top" "$2" >"$1.sh"
  drive "$1" sh "$1.sh"
}
cp "$top/tests/lib/tap.lua" .
lua_case() {
  printf 'package.path = "./?.lua;" .. package.path\nlocal tap = require "tap"\n%s\n' "$2" >"$1.lua"
  drive "$1" "$tielab" --headless "$1.lua"
}

# ---- tap.sh
sh_case sh_skip 'ok 0 "a check that holds"; skip "a tool is missing" 2; ok 0 "another"; tap_done'
expect sh_skip "PASS:2 SKIP:2" "tap.sh: skip WHY 2 skips two checks between passes"
sh_case sh_all 'have no-such-command-anywhere || skip_all "it is not installed"; ok 1 "never reached"; tap_done'
expect sh_all "SKIP:1" "tap.sh: skip_all skips the whole test"
sh_case sh_late 'ok 0 "a check that holds"; skip_all "too late"'
expect_failure sh_late "tap.sh: skip_all after a check fails, never skips"
sh_case sh_bail 'ok 0 "a check that holds"; bail_out "what the build makes is missing"'
expect_failure sh_bail "tap.sh: bail_out is an error"
printf 'ok 1 - one\nok 2 # SKIP no tool\n# a comment\nnot ok 3 - two\n1..3\n' >relayed.tap
sh_case sh_relay 'ok 0 "before"; tap_relay relayed.tap; tap_done'
expect sh_relay "ERROR:1 FAIL:1 PASS:2 SKIP:1" "tap.sh: tap_relay takes another stream's passes, skips and failures into the plan (a failure fails the test)"

# ---- tap.lua, run as the Lua tests are
lua_case lua_skip 'tap.ok(true, "a check that holds"); tap.skip("a tool is missing", 2); tap.done()'
expect lua_skip "PASS:1 SKIP:2" "tap.lua: tap.skip(why, 2) skips two checks"
lua_case lua_all 'tap.skip_all("a tool is missing"); tap.ok(false, "never reached"); tap.done()'
expect lua_all "SKIP:1" "tap.lua: tap.skip_all skips the whole test"
lua_case lua_late 'tap.ok(true, "a check that holds"); tap.skip_all("too late")'
expect_failure lua_late "tap.lua: skip_all after a check fails, never skips"
lua_case lua_bail 'tap.bail_out("what every later check needs failed")'
expect_failure lua_bail "tap.lua: bail_out is an error"

# ---- tap.h
drive c_skip "$selftest" ok skip skip done
expect c_skip "PASS:1 SKIP:2" "tap.h: skip() skips one check each"
drive c_all "$selftest" skip_all
expect c_all "SKIP:1" "tap.h: skip_all() skips the whole test"
drive c_late "$selftest" ok skip_all
expect_failure c_late "tap.h: skip_all() after a check fails, never skips"
drive c_bail "$selftest" ok bail_out
expect_failure c_bail "tap.h: bail_out() is an error"

# ---- no test skips on its own
# An "ok" with a skip directive after it (TAP reads one in any case), or a
# plan of none.
own=$(cd "$top/tests" && grep -n -i -E '\bok\b.*#[[:space:]]*skip([^[:alnum:]_]|$)|1\.\.0' -- \
  */*.sh */*.lua */*.c */*.h 2>/dev/null |
  grep -v -E '^lib/(tap\.sh|tap\.lua|tap\.h|test_tap\.sh):')
[ -z "$own" ]
ok $? "no test prints a skip line or a plan of none of its own, each goes through a harness: $(echo "$own" | head -n 3 | tr '\n' ' ')"
tap_done
