#!/bin/sh
# test_signals.sh -- signals always win in a headless script: SIGINT ends
# lab.run while it trains the tokenizer of a large corpus, at once and
# saying so, with status 130.
tap_name=signals; . "${srcdir:-.}/tests/tap.sh"
export XDG_STATE_HOME="$tmp/state" XDG_CACHE_HOME="$tmp/cache"
ms() { date +%s%3N; }

# Start a script in the background ($pid) and wait until it printed
# "ready" (into a fresh file, so that an earlier run's output cannot be
# mistaken).
start() {
  rm -rf "$tmp/out" "$tmp/err" "$XDG_STATE_HOME"
  "$tielab" --headless "$@" >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  i=0
  while [ $i -lt 200 ] && ! grep -q ready "$tmp/out" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
}

# stop SIG: send SIG to the script and wait for its end: 'rc' its status,
# 'took' the milliseconds that took.
stop() {
  t0=$(ms)
  kill -"$1" $pid
  wait $pid
  rc=$?
  took=$(($(ms) - t0))
}

# ---------------------------------------------------------------- the tokenizer
# 8 MB of random words: a tokenizer of 8192 ids takes seconds to learn
# them (the cache is this test's own, and the words new each time).
awk -v seed=$$ 'BEGIN { srand(seed); for (i = 0; i < 100000; i++) { line = ""
  for (w = 0; w < 10; w++) { n = 3 + int(rand() * 10); word = ""
    for (k = 0; k < n; k++) word = word sprintf("%c", 97 + int(rand() * 26)); line = line word " " }
  print line } }' >"$tmp/big.txt"
cat >"$tmp/bpe.lua" <<LUA
print("ready") io.stdout:flush()
lab.run{vocab = 8192, dim = 16, layers = 1, heads = 2, ctx = 8, batch = 2, corpus = "$tmp/big.txt"}
print("went on")
LUA
start "$tmp/bpe.lua"
sleep 1
stop INT
ok $((rc != 130 || took > 3000)) "SIGINT while lab.run trains a tokenizer ends the script within 3 s (status $rc, $took ms)"
grep -q 'tokenizer: interrupted while' "$tmp/err" && ! grep -q "went on" "$tmp/out"
ok $? "it says the tokenizer was interrupted, and the script did not go on ($(tr '\n' ' ' <"$tmp/err"))"

tap_done
