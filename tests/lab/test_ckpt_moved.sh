#!/bin/sh
# test_ckpt_moved.sh -- a checkpoint whose corpus has moved away: it loads
# (tokenizer, held-out tokens and token frequencies are inside), evaluates,
# measures its validation loss as the original did (r:evaluate_val),
# samples, aligns and fits its lens, refuses to train naming the corpus;
# pointed to the corpus's new place it trains on exactly as the original;
# a corpus with other bytes is refused by its hash.
tap_name=ckpt_moved; . "${srcdir:-.}/tests/lib/tap.sh"
cd "$tmp" || exit 1
mkdir data moved
i=0
while [ $i -lt 300 ]; do
  echo "line $i: the quick brown fox jumps over the lazy dog, then $((i * 7 % 13)) more."
  i=$((i + 1))
done >data/corpus.txt
sed 's/fox/cat/' data/corpus.txt >other.txt
tiny='vocab = 300, dim = 16, layers = 1, heads = 2, ctx = 8, batch = 2'

run() {   # run NAME LUA: the script's output in NAME.out
  printf '%s\n' "$2" >"$1.lua"
  $CAP "$tielab" --headless "$1.lua" >"$1.out" 2>&1
}

run save "local r = lab.run{name = 'm', corpus = 'data/corpus.txt', $tiny}
r:step(4)
print(string.format('val4 %.17g', r:evaluate_val().loss))
assert(r:save('m.safetensors'))
r:step(2)
print(string.format('after %.17g', r:metrics().loss))
print(string.format('val %.17g', r:metrics().val_loss))"
ok $? "a run on data/corpus.txt saved at step 4: $(tail -n 1 save.out)"
mv data/corpus.txt moved/corpus.txt

run away "local r, msg = lab.load('m.safetensors')
print('load', r ~= nil, msg)
print('step', r:metrics().step)
local e = r:evaluate{{1, 2, 3, 4, 5, 6, 7, 8, 9}}
print('evaluate', e.loss == e.loss and e.loss > 0)
local m = r:metrics()
print('val', m.val_loss == m.val_loss and m.val_loss > 0)
local v = r:evaluate_val()
print(string.format('val4 %.17g', v.loss))
print('valstep', v.step)
local s = r:sample{n = 30, seed = 3}
print('sample', type(s) == 'string' and #s > 0)
local twin = assert(lab.load('m.safetensors', 'twin'))
local al = lab.align(r, twin)
print('align', al.linear_in == al.linear_in)
local fit = r:fit_lens{steps = 3}
print('fit', fit ~= nil and fit.kl ~= nil)
print('norms', #r:row_norms().log_freq > 0)
local okay, err = pcall(r.step, r, 1)
print('stepmsg', okay, err)
print('batch', pcall(r.batch, r, 1))
assert(r:save('m2.safetensors'))"
ok $? "the checkpoint is used with its corpus gone: $(grep -i 'error\|traceback' away.out | head -n 1)"
grep -q '^load	true' away.out
ok $? "lab.load loads it"
grep -q '^step	4' away.out
ok $? "at its step"
[ "$(grep '^val4' away.out)" = "$(grep '^val4' save.out)" ] && grep -q '^valstep	4' away.out
ok $? "r:evaluate_val on the held-out tokens gives the original run's validation loss at step 4: $(grep '^val4' away.out)"
for what in evaluate val sample align fit norms; do
  grep -q "^$what	true" away.out
  ok $? "$what works without the corpus"
done
grep "^stepmsg" away.out | grep -q "false.*corpus '[^']*data/corpus.txt' was not found.*lab.load(path, {corpus = FILE})"
ok $? "r:step refuses, naming the corpus and how to point to it: $(grep '^stepmsg' away.out | cut -c1-160)"
grep -q "^batch	false" away.out
ok $? "r:batch too (training batches come from the corpus)"

run back "local r = assert(lab.load('m.safetensors', {corpus = 'moved/corpus.txt', name = 'back'}))
print('name', r.name)
r:step(2)
print(string.format('after %.17g', r:metrics().loss))"
ok $? "lab.load(path, {corpus = ..., name = ...}) and two steps: $(grep -i 'error' back.out | head -n 1)"
grep -q '^name	back' back.out
ok $? "under the name given"
[ "$(grep '^after' back.out)" = "$(grep '^after' save.out)" ]
ok $? "and it trains on exactly as the original did: $(grep '^after' back.out)"

run resaved "local r = assert(lab.load('m2.safetensors', {corpus = 'moved/corpus.txt'}))
r:step(2)
print(string.format('after %.17g', r:metrics().loss))"
[ "$(grep '^after' resaved.out)" = "$(grep '^after' save.out)" ]
ok $? "a checkpoint saved while the corpus was gone keeps what it needs: $(grep -i 'error\|after' resaved.out | head -n 1)"

run wrong "local r, msg = lab.load('m.safetensors', {corpus = 'other.txt'})
print('wrong', r, msg)
local okay, err = pcall(lab.load, 'm.safetensors', {corpuss = 'x'})
print('key', okay, err)"
grep "^wrong" wrong.out | grep -q "nil.*corpus 'other.txt' is not the text this run was trained on.*SHA-256"
ok $? "a corpus with other bytes is refused by its hash: $(grep '^wrong' wrong.out | cut -c1-160)"
grep -q "^key	false.*unknown key 'corpuss' (corpus, name, batch)" wrong.out
ok $? "a misspelled option is an error naming it"

run synthetic "local s = lab.run{name = 's', $tiny}
assert(s:save('s.safetensors'))
print('synthetic', lab.load('s.safetensors', {corpus = 'other.txt'}))"
grep "^synthetic" synthetic.out | grep -q "nil.*synthetic language: it has no corpus to point to"
ok $? "a run on the synthetic language has no corpus to point to: $(grep '^synthetic' synthetic.out | cut -c1-120)"

cp other.txt data/corpus.txt
run changed "local r = assert(lab.load('m.safetensors'))
print('changed eval', r:metrics().val_loss > 0)
print('changed step', pcall(r.step, r, 1))"
grep -q "^changed eval	true" changed.out &&
  grep "^changed step" changed.out | grep -q "false.*cannot train: its corpus '[^']*corpus.txt' holds other bytes.*SHA-256 differs"
ok $? "other bytes at the original place: it loads on its held-out tokens, and stepping says the corpus changed: $(grep '^changed' changed.out | cut -c1-200 | tr '\n' ' ')"

rm data/corpus.txt && mkdir data/corpus.txt
run folder "local r = assert(lab.load('m.safetensors'))
print('folder step', pcall(r.step, r, 1))"
grep "^folder step" folder.out | grep -q "false.*cannot train: its corpus '[^']*corpus.txt' could not be read (.*)"
ok $? "a folder at the corpus' place: it loads on its held-out tokens, and stepping says why: $(grep '^folder' folder.out | cut -c1-200)"
tap_done
