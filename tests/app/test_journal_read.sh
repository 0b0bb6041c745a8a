#!/bin/sh
# test_journal_read.sh -- a journal is read strictly: a value of the wrong
# type or out of range is refused with a message that names the line and
# the field, never cut short, skipped or read as 0 (a NUL byte and what
# follows it, a run list that is an object, a step that is text). A good
# journal of the same shape replays, so each refusal is the field's.
tap_name=jread; . "${srcdir:-.}/tests/lib/tap.sh"
cd "$tmp" || exit 1

HEAD='{"journal":1,"tielab":"test","argv":["tielab"],"cwd":"/","runs":[{"name":"r","step":0,"options":{"name":"r","vocab":"256","dim":"16","layers":"1","heads":"2","ctx":"8","batch":"2"}}]}'
LINE="{\"kind\":\"line\",\"step\":0,\"runs\":[[\"r\",0]],\"sel\":\"r\",\"lua\":\"print('line ran')\"}"

# replay_of TEXT: TEXT (printf's format: \n, \0) as a journal, replayed; out
# and status in 'out' and 'rc'.
replay_of() {
  printf "$1" >j.jsonl
  "$tielab" --replay j.jsonl >out 2>&1
  rc=$?
}

# refused TEXT MESSAGE WHAT: the journal is refused, saying MESSAGE.
refused() {
  replay_of "$1"
  grep -qF -- "$2" out && [ "$rc" -eq 1 ] && ! grep -q "line ran" out
  ok $? "$3 ($(grep tielab: out | head -n 1))"
}

replay_of "$HEAD\n$LINE\n"
grep -q "^line ran$" out && grep -q "no final record" out
ok $? "a well-formed journal of this shape is read and its entry runs (status $rc)"

refused "$HEAD\0$LINE\n" "j.jsonl:1: a NUL byte (a journal is text)" \
  "a NUL byte is refused, not the end of the line"
refused "$HEAD\n$LINE\0{\"x\":1}\n" "j.jsonl:2: a NUL byte" "and so is one inside an entry"
refused "$(echo "$HEAD" | sed 's/"runs":\[.*\]}$/"runs":{"name":"r"}}/')\n" \
  "j.jsonl:1: the header's runs are not a list" "a header whose runs are an object"
refused "$(echo "$HEAD" | sed 's/"step":0/"step":"x"/')\n" \
  "j.jsonl:1: run 'r': 'step' is not a whole number of at least 0" "a header run whose step is text"
refused "$(echo "$HEAD" | sed 's/"step":0/"step":-3/')\n" "'step' is not a whole number of at least 0" \
  "a header run whose step is negative"
refused "$(echo "$HEAD" | sed 's/"argv":\["tielab"\]/"argv":"tielab"/')\n" \
  "j.jsonl:1: the header's argv is not a list of texts" "a command line that is no list"
long=$(printf '%070d' 0)
refused "$(echo "$HEAD" | sed "s/\"name\":\"r\"/\"name\":\"$long\"/")\n" "a run's name is longer than 63 bytes" \
  "a run name too long to keep is refused, not cut"
refused "$HEAD\n$(echo "$LINE" | sed 's/"step":0/"step":"0"/')\n" "j.jsonl:2: 'step' is not a whole number" \
  "an entry whose step is text"
refused "$HEAD\n$(echo "$LINE" | sed 's/"runs":\[\["r",0\]\]/"runs":{"r":0}/')\n" \
  "j.jsonl:2: the runs' steps are not a list" "an entry whose runs are an object"
refused "$HEAD\n$(echo "$LINE" | sed 's/\["r",0\]/["r",0,5]/')\n" "a run's step is not [name, step]" \
  "a run's step with more than a name and a step"
refused "$HEAD\n{\"kind\":\"binding\",\"step\":0,\"runs\":[],\"code\":\"x\"}\n" \
  "j.jsonl:2: a binding entry without its key code" "a binding whose key code is text"
refused "$HEAD\n{\"kind\":\"script\",\"step\":0,\"runs\":[],\"path\":\"s.lua\",\"args\":[],\"size\":1,\"fnv1a64\":\"xyz\"}\n" \
  "fnv1a64 is not 16 hex digits" "a script entry whose hash is not hex"
refused "$HEAD\n{\"kind\":\"script\",\"step\":0,\"runs\":[],\"path\":\"s.lua\",\"args\":{},\"size\":1,\"fnv1a64\":\"0123456789abcdef\"}\n" \
  "whose args are not a list of texts" "a script entry whose args are an object"
refused "$HEAD\n{\"end\":true,\"step\":0,\"runs\":{}}\n" "j.jsonl:2: the final record's runs are not a list" \
  "a final record whose runs are an object"

"$tielab" --replay "" >out 2>&1
rc=$?
[ "$rc" -eq 2 ] && grep -qx "tielab: --replay takes a journal's file name, got an empty one" out
ok $? "--replay '' is a usage error that says so (status $rc: $(head -n 1 out))"
tap_done
