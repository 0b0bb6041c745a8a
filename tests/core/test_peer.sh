#!/bin/sh
# test_peer.sh -- tielab's loss, gradients and first AdamW step against the
# PyTorch reference model (torch_gpt.py, float64), for a tied model, an untied
# one, and a tied one with the input-side gradient scaled by 3. Each case also
# goes through tielab's writer: the reference computes on the file tielab
# re-saved, tielab on the reference's own file. Skipped when the reference or
# a python3 with torch is missing (set TIELAB_PEER to point at torch_gpt.py).

tap_name=peer; . "${srcdir:-.}/tests/lib/tap.sh"
peer=${TIELAB_PEER:-"${top_srcdir:-.}/../shared/peer/torch_gpt.py"}
check="${top_builddir:-.}/tests/core/peer_grad"
[ -f "$peer" ] || skip_all "no PyTorch reference at $peer (TIELAB_PEER names it)"
{ [ -x "$py" ] && "$py" -c "import torch" >/dev/null 2>&1; } || skip_all "$py cannot import torch"
[ -x "$check" ] || bail_out "$check was not built"

result() {   # result STATUS TEXT: one TAP line; a failure quotes the last line of $tmp/err
  if [ "$1" -eq 0 ]; then ok 0 "$2"; else ok 1 "$2: $(tail -n 1 "$tmp/err" 2>/dev/null)"; fi
}

shape="--vocab 64 --d 32 --layers 2 --heads 4 --ctx 16 --batch 3 --seed 11"

# peer_case LABEL TIE S_IN: reference model of tie mode TIE, one step with S_IN.
peer_case() {
  label=$1 tie=$2 s_in=$3
  m=$tmp/$tie.safetensors t=$tmp/$tie.bin
  if [ ! -f "$m" ]; then
    "$py" "$peer" save $shape --tie "$tie" --model "$m" --tokens "$t" >/dev/null 2>"$tmp/err"
    result $? "$label: the reference writes a random $tie model"
    [ -f "$m" ] || return
  fi
  "$check" --resave "$m" "$tmp/resaved.safetensors" 2>"$tmp/err"
  rc=$?
  result $rc "$label: tielab loads the reference's file and writes it back"
  [ $rc -eq 0 ] || return
  "$py" "$peer" grad --model "$tmp/resaved.safetensors" --tokens "$t" --dtype float64 \
    --s-in "$s_in" --dump-grads "$tmp/g.safetensors" --step-out "$tmp/w1.safetensors" \
    >/dev/null 2>"$tmp/err"
  rc=$?
  result $rc "$label: the reference reads tielab's file and takes a step"
  [ $rc -eq 0 ] || return
  "$check" --tap-start $n --label "$label: " --model "$m" --tokens "$t" \
    --grads "$tmp/g.safetensors" --step "$tmp/w1.safetensors" --s-in "$s_in" >"$tmp/out" 2>&1
  rc=$?
  cat "$tmp/out"
  n=$((n + $(grep -c -E '^(not )?ok ' "$tmp/out")))
  failed=$((failed + $(grep -c -E '^not ok ' "$tmp/out")))
  [ $rc -le 1 ] || result $rc "$label: peer_grad stopped with status $rc"
  rm -f "$tmp/g.safetensors" "$tmp/w1.safetensors" "$tmp/resaved.safetensors"
}

peer_case tied tied 1
peer_case untied untied 1
peer_case "tied, s_in 3" tied 3
tap_done
