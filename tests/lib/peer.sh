# peer.sh -- the PyTorch reference model and what the tests against it
# share, sourced after tap.sh. The reference (torch_gpt.py) is not part of
# the project: TIELAB_PEER names it, else it is looked for beside the tree,
# and this is the one place that default is written (Makefile.am's builds
# in folders of their own ask it here too). Sourcing sets 'peer' to it, as
# an absolute path, and then, by 'peer_wants': 'path' stops there (a test
# that skips only its comparisons without it); 'torch' skips the whole test
# when the reference or a python3 with torch is missing; unset, does that
# too, sets 'check' (tests/core/peer_grad, an error when not built) and
# defines the helpers below.
peer=${TIELAB_PEER:-"$(cd "${top_srcdir:-.}" && pwd)/../shared/peer/torch_gpt.py"}
[ "${peer_wants:-}" = path ] && return 0
[ -f "$peer" ] || skip_all "no PyTorch reference at $peer (TIELAB_PEER names it)"
{ [ -x "$py" ] && "$py" -c "import torch" >/dev/null 2>&1; } || skip_all "$py cannot import torch"
[ "${peer_wants:-}" = torch ] && return 0
check="${top_builddir:-.}/tests/core/peer_grad"
[ -x "$check" ] || bail_out "$check was not built"

# The reference's random models: small enough for a test, with every part.
peer_shape="--vocab 64 --d 32 --layers 2 --heads 4 --ctx 16 --batch 3 --seed 11"

# result STATUS TEXT: one TAP line; a failure quotes the last line of $tmp/err.
result() {
  if [ "$1" -eq 0 ]; then ok 0 "$2"; else ok 1 "$2: $(tail -n 1 "$tmp/err" 2>/dev/null)"; fi
}

# peer_save LABEL TIE MODEL TOKENS: a random model of tie mode TIE and a
# batch, written by the reference; fails when it wrote no model.
peer_save() {
  "$py" "$peer" save $peer_shape --tie "$2" --model "$3" --tokens "$4" >/dev/null 2>"$tmp/err"
  result $? "$1: the reference writes a random $2 model"
  [ -f "$3" ]
}

# peer_compare LABEL OPTION...: peer_grad's checks of one case, with these
# options, as checks of this test.
peer_compare() {
  peer_label=$1
  shift
  "$check" --label "$peer_label: " "$@" >"$tmp/out" 2>"$tmp/err"
  peer_rc=$?
  tap_relay "$tmp/out"
  [ $peer_rc -le 1 ] || result $peer_rc "$peer_label: peer_grad stopped with status $peer_rc"
}
