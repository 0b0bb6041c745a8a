#!/bin/sh
# test_val_ui.sh -- a validation loss from an earlier step says so on the
# screen: at 80x24 in a private tmux server (tests/lib/tmux.sh), a run with
# eval_every=50 stepped 20 times shows its step-1 value in the present view
# marked "stale @1"; r:evaluate_val() from the REPL measures at step 20 and
# the mark gives way to "step 20", the big digits reading the new value;
# while the lab runs the run freely r:evaluate_val is refused. Prints TAP.

: "${top_builddir:=.}" "${top_srcdir:=.}" "${srcdir:=$top_srcdir}"
tmux_name=val; . "$top_srcdir/tests/lib/tmux.sh"
DIGITS=$srcdir/tests/ui/bigdigits.lua

# row N: line N (1-based) of the screen.
row() { screen | sed -n "$1p"; }
# val_label: the validation figure's label on row 3.
val_label() { row 3 | grep -ao 'stale @[0-9]*\| step [0-9]* ' | head -n 1; }
# digits ROW: the numbers in big digits on rows ROW..ROW+2.
digits() {
  screen >"$WORK/screen.txt"
  $TIELAB --headless "$DIGITS" "$WORK/screen.txt" "$1"
}
# lua_out CHUNK: the text CHUNK returns, written to a file by the lab (the
# present view covers the REPL's output).
lua_out() {
  rm -f "$WORK/out"
  key :
  type_line "local f = io.open('$WORK/out.tmp', 'w') f:write(tostring($1)) f:close() os.rename('$WORK/out.tmp', '$WORK/out')"
  leave_repl
  wait_file "$WORK/out" 100
  cat "$WORK/out" 2>/dev/null
}

cat >"$WORK/val.lua" <<'LUA'
r = lab.run{name = "a", vocab = 256, dim = 32, layers = 2, heads = 2, ctx = 32, batch = 4, eval_every = 50}
r:step(20)
print(string.format("stepped %d, val_step %d, val %.2f", r:metrics().step, r:metrics().val_step, r:metrics().val_loss))
LUA

session 80 24
start "$WORK/val.lua"
wait_for '^stepped 20, val_step 1, val [0-9.]+' 600
check $? "20 steps with eval_every=50: the metrics' validation loss is step 1's"
stale=$(screen | sed -n 's/^stepped 20, val_step 1, val \([0-9.]*\).*/\1/p' | tail -n 1)

key p
wait_row 2 'val loss' 50 && wait_row 3 'stale @1 ' 50
check $? "the present view marks the validation loss as step 1's: '$(val_label)'"
[ "$(digits 2 | cut -d' ' -f2)" = "$stale" ]
check $? "beside it the stale value in big digits ($stale)"
row 3 | grep -q 'step 20 *$'
check $? "while the run is at step 20 (the right-hand side)"
[ "$(screen | wc -l)" -eq 24 ] && row 1 | grep -q 'PAUSED step 20' && row 5 | grep -q '^╭ loss ━ a ┅ val ─.*╮$'
check $? "the layout holds at 80x24: status line, figures, the chart from row 5"

got=$(lua_out '(function() local v = r:evaluate_val() return string.format("%d %.2f", v.step, v.loss) end)()')
[ "${got%% *}" = 20 ]
check $? "r:evaluate_val() from the REPL measures at step 20 ($got)"
fresh=${got#* }
wait_row 3 ' step 20 .*step 20 *$' 50
check $? "the mark gives way to the step measured: '$(val_label)'"
[ "$(digits 2 | cut -d' ' -f2)" = "$fresh" ] && [ "$fresh" != "$stale" ]
check $? "and the big digits read the new value ($fresh, was $stale)"

key Space
wait_for 'RUNNING' 50
lua_out 'select(2, pcall(r.evaluate_val, r))' | grep -q "^r:evaluate_val: run 'a' is training elsewhere (the lab is running)"
check $? "refused while the lab runs the run freely"
key Space
wait_for 'PAUSED' 50
s=$(settled_step)
vs=$(($s / 50 * 50))
if [ "$vs" -eq "$s" ]; then want=" step $s "; else want="stale @$vs "; fi
[ "$vs" -eq 0 ] && want="stale @20 "
wait_row 3 "$want" 50
check $? "paused at step $s: the label says '$want' (the periodic evaluation, every 50 steps)"

quit_unsaved
check $? "q quits with status 0"
finish
