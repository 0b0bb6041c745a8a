#!/bin/sh
# test_peer.sh -- tielab's loss, gradients and first AdamW step against the
# PyTorch reference model (torch_gpt.py, float64), for a tied model, an untied
# one, and a tied one with the input-side gradient scaled by 3. Each case also
# goes through tielab's writer: the reference computes on the file tielab
# re-saved, tielab on the reference's own file. Skipped when the reference or
# a python3 with torch is missing (set TIELAB_PEER to point at torch_gpt.py).

tap_name=peer; . "${srcdir:-.}/tests/lib/tap.sh"
. "${srcdir:-.}/tests/lib/peer.sh"

# peer_case LABEL TIE S_IN: reference model of tie mode TIE, one step with S_IN.
peer_case() {
  label=$1 tie=$2 s_in=$3
  m=$tmp/$tie.safetensors t=$tmp/$tie.bin
  [ -f "$m" ] || peer_save "$label" "$tie" "$m" "$t" || return
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
  peer_compare "$label" --model "$m" --tokens "$t" --grads "$tmp/g.safetensors" \
    --step "$tmp/w1.safetensors" --s-in "$s_in"
  rm -f "$tmp/g.safetensors" "$tmp/w1.safetensors" "$tmp/resaved.safetensors"
}

peer_case tied tied 1
peer_case untied untied 1
peer_case "tied, s_in 3" tied 3
tap_done
