#!/bin/sh
# test_peer_hooks.sh -- the gradients a training step's hooks add, against
# PyTorch autograd (float64): tests/lib/peer_terms.py takes the reference
# model's step (torch_gpt.py) and adds a loss
# term of the residual stream h at position P to the cross-entropy; tielab's
# step adds its gradient by hand in on_hidden, at P = 0 (the embeddings'
# output), 1 (after the first block) and 2 (before ln_f) of a 2-layer model:
# tied, C*0.5*sum(h^2)/(B*T); untied, C*sum(h*R)/(B*T) with the reference's
# random R, and the regulariser LAMBDA*0.5*||E_in - E_out||^2, whose gradient
# on_grad adds. Every gradient, the terms' values and the weights after one
# AdamW step must agree, and E_in's gradient must differ from the one without
# the terms. Skipped when the reference or a python3 with torch is missing
# (set TIELAB_PEER to point at torch_gpt.py).

tap_name=peerhooks; . "${srcdir:-.}/tests/lib/tap.sh"
. "${srcdir:-.}/tests/lib/peer.sh"
terms="${srcdir:-.}/tests/lib/peer_terms.py"

# hooks_case TIE P: the reference model of tie mode TIE, one step with the
# terms of that mode at residual position P.
hooks_case() {
  tie=$1 pos=$2 label="$1, P=$2"
  m=$tmp/$tie.safetensors t=$tmp/$tie.bin plain=$tmp/$tie.plain.safetensors
  if [ ! -f "$m" ]; then
    peer_save "$label" "$tie" "$m" "$t" || return
    "$py" "$peer" grad --model "$m" --tokens "$t" --dtype float64 --dump-grads "$plain" \
      >/dev/null 2>"$tmp/err"
    result $? "$label: the reference's gradients without the terms"
  fi
  # The terms as peer_grad takes them ('ours') and as the reference does,
  # which also writes R, from its seed, where peer_grad reads it.
  case $tie in
    tied) ours="--aux-coef 4" theirs=$ours ;;
    untied)
      ours="--aux-coef 0.2 --aux-matrix $tmp/r.safetensors --reg-align 0.05"
      theirs="--aux-kind lin --aux-seed 7 $ours" ;;
  esac
  "$py" "$terms" "$peer" --model "$m" --tokens "$t" --aux-hidden "$pos" $theirs \
    --dump-grads "$tmp/g.safetensors" --step-out "$tmp/w1.safetensors" >/dev/null 2>"$tmp/err"
  rc=$?
  result $rc "$label: the reference takes a step with the terms"
  [ $rc -eq 0 ] || return
  peer_compare "$label" --model "$m" --tokens "$t" --grads "$tmp/g.safetensors" \
    --step "$tmp/w1.safetensors" --plain "$plain" --aux-hidden "$pos" $ours
  rm -f "$tmp/g.safetensors" "$tmp/w1.safetensors"
}

for tie in tied untied; do
  for pos in 0 1 2; do hooks_case $tie $pos; done
done
tap_done
