#!/bin/sh
# test_export.sh -- r:export's CSV files as tools read them: the long and
# the wide form and the events sidecar by Python's csv module (and by
# pandas.read_csv with no arguments, where pandas is installed), the meta
# sidecar by Python's json; the values against the run's own history.
tap_name=export; . "${srcdir:-.}/tests/lib/tap.sh"
[ -x "$py" ] || skip_all "no $py to read the files with"

# A run with series recorded at different steps (lens_every) and a setting
# changed on the way (an event), then every form written. Awkward names,
# NaN and infinities are test_history's.
cat >"$tmp/export.lua" <<'LUA'
local r = lab.run{name = "ex", vocab = 256, dim = 16, layers = 1, heads = 2, ctx = 8, batch = 2, lens_every = 3}
r:step(4)
r:set{lr = 0.002}
r:step(3)
assert(r:export("long.csv"))
assert(r:export("wide.csv", {wide = true}))
local okay, msg = pcall(r.export, r, "x.csv", {wdie = true})
print("badkey", okay, msg)
print("jsonl", r:export("w.jsonl", {wide = true}))
-- The history as the run holds it, for the reader to compare.
local f = assert(io.open("truth.txt", "w"))
for _, name in ipairs(r:history()) do
  local h = r:history(name)
  -- Each bucket holds one step here, so its mean is its value.
  for i = 1, h.n do f:write(string.format("%s\t%d\t%.17g\n", name, h.steps[i], h.values[i])) end
end
f:close()
LUA
(cd "$tmp" && "$tielab" --headless export.lua) >"$tmp/out" 2>&1
ok $? "a script exports the long and the wide form"
grep -q "^badkey	false	.*unknown key 'wdie' (wide)" "$tmp/out"
ok $? "a misspelled option is an error naming it"
grep -q "^jsonl	nil	.*wide form is a CSV file" "$tmp/out"
ok $? "the wide form into .jsonl is refused, saying why"
for f in long.csv long.events.csv long.meta.json wide.csv wide.events.csv wide.meta.json; do
  [ -s "$tmp/$f" ]
  ok $? "$f written"
done

# Python reads every file back and compares it with the run's history.
cat >"$tmp/read.py" <<'PY'
import csv, json, math, sys

def same(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == b

truth = {}
for line in open("truth.txt"):
    name, step, last = line.rstrip("\n").split("\t")
    truth.setdefault(name, []).append((int(step), float(last)))

def check(what, cond, detail=""):
    print(("ok " if cond else "not ok ") + what + (": " + detail if detail else ""))

rows = list(csv.reader(open("long.csv", newline="")))
check("long: one header row", rows[0] == "series,step_first,step_last,first,last,min,mean,max,count".split(","),
      ",".join(rows[0]))
body = rows[1:]
check("long: no comment or event rows", all(len(r) == 9 and not r[0].startswith("#") for r in body))
got = {}
for r in body:
    got.setdefault(r[0], []).append((int(r[2]), float(r[4])))
check("long: every bucket of every series, values exact",
      set(got) == set(truth) and all(len(got[k]) == len(truth[k]) and
                                     all(a[0] == b[0] and same(a[1], b[1]) for a, b in zip(got[k], truth[k]))
                                     for k in truth), "%d series" % len(truth))

rows = list(csv.reader(open("wide.csv", newline="")))
head = rows[0]
check("wide: step, then one column per series", head[0] == "step" and sorted(head[1:]) == sorted(truth),
      "%d columns" % len(head))
steps = sorted({s for v in truth.values() for s, _ in v})
check("wide: one row per recorded step, in order", [int(r[0]) for r in rows[1:]] == steps,
      "%d rows" % (len(rows) - 1))
bad = 0
for r in rows[1:]:
    step = int(r[0])
    for name, cell in zip(head[1:], r[1:]):
        want = [v for s, v in truth[name] if s == step]
        if (cell == "") != (not want) or (want and not same(float(cell), want[-1])):
            bad += 1
check("wide: each cell the value at its step, empty where none was recorded", bad == 0, "%d wrong" % bad)
check("wide: some cells are empty (the lens series are every 3 steps)", any(c == "" for r in rows[1:] for c in r))

ev = list(csv.reader(open("long.events.csv", newline="")))
check("events: step,text header", ev[0] == ["step", "text"])
check("events: the lr change at step 4", any(e[0] == "4" and "lr" in e[1] for e in ev[1:]), repr(ev[1:]))

meta = json.load(open("long.meta.json"))
check("meta: format, run and form", meta.get("format") == "tielab-history" and meta.get("run") == "ex" and
      meta.get("form") == "long", repr({k: meta.get(k) for k in ("format", "run", "form")}))
check("meta: names its files", meta.get("files") == {"data": "long.csv", "events": "long.events.csv"})
s = meta.get("settings", {})
check("meta: settings typed", s.get("dim") == 16 and s.get("lr") == 0.002 and s.get("tie") == "tied" and
      isinstance(s.get("lens_every"), int), repr({k: s.get(k) for k in ("dim", "lr", "tie", "lens_every")}))
check("meta: the series listed", sorted(meta.get("series", [])) == sorted(truth))
check("meta of the wide form says so", json.load(open("wide.meta.json")).get("form") == "wide")

try:
    import pandas
except ImportError:
    print("skip 3 pandas is not installed (Debian package python3-pandas)")
    sys.exit(0)
d = pandas.read_csv("long.csv")
check("pandas: the long form as is", list(d.columns)[:3] == ["series", "step_first", "step_last"] and
      len(d) == len(body) and str(d["mean"].dtype) == "float64", str(d.dtypes.to_dict()))
w = pandas.read_csv("wide.csv")
check("pandas: the wide form as is", len(w) == len(steps) and str(w["loss"].dtype) == "float64" and
      w.isna().values.any(), "%d rows" % len(w))
e = pandas.read_csv("long.events.csv")
check("pandas: the events as is", list(e.columns) == ["step", "text"])
PY
(cd "$tmp" && "$py" read.py) >"$tmp/py.out" 2>&1
ok $? "python reads them: $(grep -v '^ok\|^skip' "$tmp/py.out" | head -3)"
while IFS= read -r line; do
  case $line in
    "ok "*) ok 0 "${line#ok }" ;;
    "not ok "*) ok 1 "${line#not ok }" ;;
    "skip "*) rest=${line#skip }; skip "pandas.read_csv: ${rest#* }" "${rest%% *}" ;;
  esac
done <"$tmp/py.out"
tap_done
