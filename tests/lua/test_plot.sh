#!/bin/sh
# test_plot.sh -- scripts/plot on the CSV files the shipped scripts and
# r:export write for a tiny model: every figure at a column's and at the
# text's width as a 300 dpi PNG of that width that is a real, non-blank
# picture and as a PDF; what a reader needs of each (text size, series told
# apart, legend clear of the data); a clear error for each kind of bad
# input; the t quantile it computes itself.
tap_name=plot; . "${srcdir:-.}/tests/lib/tap.sh"
top="$(cd "${srcdir:-.}" && pwd)"
plot="$top/scripts/plot"
{ [ -x "$py" ] && "$py" -c 'import matplotlib' 2>/dev/null; } ||
  skip_all "$py has no matplotlib (Debian package python3-matplotlib)"
tiny="vocab=256 dim=32 layers=2 heads=2 ctx=32 batch=4"
MPLCONFIGDIR="$tmp/mpl"   # matplotlib's font cache, kept out of $HOME
export MPLCONFIGDIR

# Real CSV files from the scripts.
(cd "$tmp" && "$tielab" --headless "$top/lua/sweep.lua" steps=10 seeds=1,2 scales=1,5 out=sw $tiny dim=16,32) \
  >"$tmp/log" 2>&1
ok $? "sweep.lua writes sw/sweep.csv (two model sizes)"
(cd "$tmp" && "$tielab" --headless "$top/lua/balance.lua" steps=12 seeds=1,2 out=balance $tiny) >>"$tmp/log" 2>&1
ok $? "balance.lua writes balance_steps.csv and balance_summary.csv"
(cd "$tmp" && "$tielab" --headless "$top/lua/paper.lua" steps=20 seeds=1,2 scales=5 out=paper $tiny) \
  >>"$tmp/log" 2>&1
ok $? "paper.lua runs with seeds=1,2"

want="seed,arm,step,loss,lr,warmup,grad_ratio,grad_ratio_act,grad_ratio_l1,grad_ratio_act_l1"
[ "$(head -n 1 "$tmp/paper_steps.csv" 2>/dev/null)" = "$want" ]
ok $? "paper_steps.csv has the columns scripts/plot reads"
paper="$tmp/paper_steps.csv $tmp/paper_lens.csv $tmp/paper_summary.csv"

# r:export's files: a tied and an untied run (its alignment partner) of two
# seeds each, in the long form and the wide form.
cat >"$tmp/export.lua" <<'LUA'
local runs = {}
for _, seed in ipairs{1, 2} do
  for _, tie in ipairs{"tied", "untied"} do
    runs[#runs + 1] = lab.run{name = string.format("%s_s%d", tie, seed), tie = tie, seed = seed, vocab = 256,
                              dim = 32, layers = 2, heads = 2, ctx = 32, batch = 4, align_every = 4}
  end
end
lab.step(12)
for _, r in ipairs(runs) do
  assert(r:export(r.name .. ".csv"))
  assert(r:export(r.name .. "-wide.csv", {wide = true}))
end
LUA
(cd "$tmp" && mkdir -p exp && cd exp && "$tielab" --headless "$tmp/export.lua") >>"$tmp/log" 2>&1
[ "$(head -n 1 "$tmp/exp/tied_s1.csv" 2>/dev/null)" = "series,step_first,step_last,first,last,min,mean,max,count" ]
ok $? "r:export writes the long and the wide form of four runs"
exports="$tmp/exp/tied_s1.csv $tmp/exp/untied_s1.csv $tmp/exp/tied_s2-wide.csv $tmp/exp/untied_s2-wide.csv"

# Every figure at both widths from every kind of CSV at once.
for width in single double; do
  # shellcheck disable=SC2086
  "$plot" $paper $exports "$tmp/exp/tied_s1.events.csv" "$tmp/sw/sweep.csv" "$tmp/balance_steps.csv" \
    "$tmp/balance_summary.csv" --width $width --out "$tmp/figs-$width" >"$tmp/plot.out" 2>"$tmp/plot.err"
  ok $? "scripts/plot --width $width reads every kind of CSV, r:export's too, and ends with status 0"
  sed 's/^/# /' "$tmp/plot.err"
done

# A PNG: its magic bytes, its width in pixels from the IHDR chunk against
# the width asked for at the dots per inch its pHYs chunk records (300), and
# more than a handful of distinct colours (a blank or one-colour image has few).
png_check() {   # png_check FILE INCHES
  "$py" - "$1" "$2" <<'EOF'
import struct, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.image
path, inches = sys.argv[1], float(sys.argv[2])
data = open(path, "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
assert data[12:16] == b"IHDR", "no IHDR first"
width, height = struct.unpack(">II", data[16:24])
at = data.find(b"pHYs")
assert at > 0, "no pHYs chunk: no resolution recorded"
per_metre_x, per_metre_y, unit = struct.unpack(">IIB", data[at + 4:at + 13])
dpi = per_metre_x * 0.0254
assert unit == 1 and per_metre_x == per_metre_y and abs(dpi - 300) < 0.5, f"{dpi:.1f} dpi, not 300"
assert abs(width - inches * dpi) <= 1, f"{width} px wide at {dpi:.0f} dpi is {width / dpi:.2f} in, not {inches} in"
assert height >= 0.5 * dpi, f"{height} px is too short to hold a panel"
pixels = matplotlib.image.imread(path)
colours = {tuple(p) for p in pixels.reshape(-1, pixels.shape[2])}
assert len(colours) > 20, f"only {len(colours)} colours: blank"
print(f"{width}x{height} px, {dpi:.0f} dpi")
EOF
}
for width in single:3.3 double:6.9; do
  for fig in ratio alignment lens scaling balance balance_summary history; do
    size=$(png_check "$tmp/figs-${width%:*}/$fig.png" "${width#*:}" 2>"$tmp/png.err")
    ok $? "figure $fig at ${width%:*} width: a 300 dpi PNG ${width#*:} in wide that is not blank ($size)"
    sed 's/^/# /' "$tmp/png.err" | tail -2
    [ "$(head -c 5 "$tmp/figs-${width%:*}/$fig.pdf" 2>/dev/null)" = "%PDF-" ] &&
      [ "$(wc -c <"$tmp/figs-${width%:*}/$fig.pdf")" -gt 2000 ]
    ok $? "figure $fig at ${width%:*} width: a PDF"
  done
done

# What a reader of each figure needs, checked on the figures themselves: no
# text under 8 pt, no two labelled series of one figure alike in line style
# and marker (in greyscale, whatever their colours), the legend inside the figure and clear of every panel,
# and each tied_xK a shade of the tied arm's hue, darker as K grows.
# shellcheck disable=SC2086
"$py" - "$plot" $paper $exports "$tmp/sw/sweep.csv" "$tmp/balance_steps.csv" "$tmp/balance_summary.csv" \
  <<'EOF' >"$tmp/look.out" 2>&1
import colorsys, importlib.machinery, importlib.util, sys
loader = importlib.machinery.SourceFileLoader("plot", sys.argv[1])
spec = importlib.util.spec_from_loader("plot", loader)
plot = importlib.util.module_from_spec(spec)
loader.exec_module(plot)
plt = plot.load_matplotlib()
import matplotlib.colors
import matplotlib.text
data = plot.read_inputs(sys.argv[2:])
bad = []
for width in ("single", "double"):
    page = plot.Page(width)
    page.assign([r["arm"] for rows in data.values() for r in rows if "arm" in r])
    for name, make in plot.FIGURES:
        fig = make(plt, page, data)
        if fig is None:
            bad.append(f"{name}: no figure")
            continue
        fig.canvas.draw()
        r = fig.canvas.get_renderer()
        for t in fig.findobj(matplotlib.text.Text):
            if t.get_text().strip() and t.get_visible() and t.get_fontsize() < 8:
                bad.append(f"{name} {width}: '{t.get_text()}' at {t.get_fontsize()} pt")
        seen = {}
        for ax in fig.axes:
            for line in ax.get_lines():
                label = line.get_label()
                if label.startswith("_"):
                    continue
                # as greyscale shows it: the dash pattern (no public getter) and the marker
                look = (line.get_linestyle(), str(getattr(line, "_unscaled_dash_pattern", "")), line.get_marker())
                if seen.get(look, label) != label:
                    bad.append(f"{name} {width}: '{label}' and '{seen[look]}' look alike {look}")
                seen[look] = label
        panels = [ax for ax in fig.axes if ax.axison]
        for leg in [ax.get_legend() for ax in fig.axes if ax.get_legend()]:
            box = leg.get_window_extent(r)
            if box.x0 < -1 or box.y0 < -1 or box.x1 > fig.bbox.x1 + 1 or box.y1 > fig.bbox.y1 + 1:
                bad.append(f"{name} {width}: the legend leaves the figure")
            for ax in panels:
                if box.overlaps(ax.get_window_extent(r)):
                    bad.append(f"{name} {width}: the legend covers a panel")
        plt.close(fig)
    scaled = sorted((float(m.group(1)), a) for a in page.styles
                    for m in [plot.SCALED_ARM.match(a)] if m and m.group(1))
    hue = colorsys.rgb_to_hls(*matplotlib.colors.to_rgb(page.style("tied")["color"]))[0]
    shades = [colorsys.rgb_to_hls(*matplotlib.colors.to_rgb(page.style(a)["color"])) for _, a in scaled]
    if not scaled or any(abs(h - hue) > 0.05 for h, _, _ in shades) or \
            any(a[1] <= b[1] for a, b in zip(shades, shades[1:])):
        bad.append(f"tied_xK shades: {scaled} {shades} (tied hue {hue:.3f})")
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF
ok $? "each figure at both widths: text of 8 pt or more, series told apart, legend clear of the panels, tied_xK graded"
sed 's/^/# /' "$tmp/look.out" | tail -5

# --format: one kind of file only.
"$plot" "$tmp/paper_summary.csv" --format png --width single --out "$tmp/pngonly" >/dev/null 2>&1 &&
  [ -f "$tmp/pngonly/alignment.png" ] && [ ! -e "$tmp/pngonly/alignment.pdf" ]
ok $? "--format png writes the PNG only"

# The sweep's CSV as sweep.lua wrote it before it had sizes: still read.
cut -d, -f1,2,9-12 "$tmp/sw/sweep.csv" >"$tmp/old_sweep.csv"
"$plot" "$tmp/old_sweep.csv" --out "$tmp/oldfigs" >"$tmp/old.out" 2>"$tmp/old.err" &&
  png_check "$tmp/oldfigs/scaling.png" 6.9 >/dev/null
ok $? "a sweep CSV without the size columns is read too ($(head -n 1 "$tmp/old.err"))"

# The sweep's run settings given as lists: one axis (warmup), then two (lr
# and warmup) over two model sizes, each a column of sweep.csv after batch.
(cd "$tmp" && "$tielab" --headless "$top/lua/sweep.lua" steps=10 seeds=1,2 scales=1,5 out=ax1 $tiny warmup=1,2) \
  >>"$tmp/log" 2>&1
[ "$(head -n 1 "$tmp/ax1/sweep.csv" 2>/dev/null)" = \
  "seed,in_scale,vocab,dim,layers,heads,ctx,batch,warmup,val_ppl,ratio_10pct,linear_in,linear_out" ]
ok $? "sweep.lua warmup=1,2 writes the axis as a column after batch"
(cd "$tmp" && "$tielab" --headless "$top/lua/sweep.lua" steps=10 seeds=1,2 scales=1,5 out=ax2 $tiny dim=16,32 \
  warmup=1,2 lr=1e-3,3e-3) >>"$tmp/log" 2>&1
[ "$(head -n 1 "$tmp/ax2/sweep.csv" 2>/dev/null)" = \
  "seed,in_scale,vocab,dim,layers,heads,ctx,batch,lr,warmup,val_ppl,ratio_10pct,linear_in,linear_out" ]
ok $? "sweep.lua lr=1e-3,3e-3 warmup=1,2 writes both axes as columns after batch"
for sw in ax1 ax2; do
  for width in single:3.3 double:6.9; do
    "$plot" "$tmp/$sw/sweep.csv" --width ${width%:*} --out "$tmp/figs-$sw-${width%:*}" >/dev/null 2>"$tmp/ax.err" &&
      size=$(png_check "$tmp/figs-$sw-${width%:*}/scaling.png" "${width#*:}" 2>>"$tmp/ax.err")
    ok $? "a sweep with setting axes ($sw) at ${width%:*} width: the scaling figure ($size)"
    sed 's/^/# /' "$tmp/ax.err" | tail -2
  done
done

# The series of the scaling figure, read back from it: one per model size and
# value of each axis, named by what differs ("d=32 lr=0.003 warmup=2"), each
# point the mean over the seeds of that group's tasks alone (recomputed here
# from the CSV); one colour family per model size, every series its own
# colour and marker; the legend names them all; no text under 8 pt.
"$py" - "$plot" "$tmp/ax1/sweep.csv" "$tmp/ax2/sweep.csv" <<'EOF' >"$tmp/axes.out" 2>&1
import colorsys, csv, importlib.machinery, importlib.util, statistics, sys
loader = importlib.machinery.SourceFileLoader("plot", sys.argv[1])
spec = importlib.util.spec_from_loader("plot", loader)
plot = importlib.util.module_from_spec(spec)
loader.exec_module(plot)
plt = plot.load_matplotlib()
import matplotlib.colors
import matplotlib.text
short = {"vocab": "V", "dim": "d", "layers": "L", "heads": "H", "ctx": "T", "batch": "B"}
bad = []
for path in sys.argv[2:]:
    rows = list(csv.DictReader(open(path)))
    header = list(rows[0])
    keys = header[header.index("vocab"):header.index("val_ppl")]   # the sizes, then the axes
    varying = [k for k in keys if len({r[k] for r in rows}) > 1]

    def label(r):
        return " ".join(f"{short.get(k, k)}={float(r[k]):g}" for k in varying)
    labels = sorted({label(r) for r in rows})
    scales = sorted({float(r["in_scale"]) for r in rows})
    want = {(lab, column): [statistics.fmean(float(r[column]) for r in rows
                                             if label(r) == lab and float(r["in_scale"]) == k) for k in scales]
            for lab in labels for column in ("linear_in", "linear_out", "val_ppl")}
    print(f"{path.split('/')[-2]}: {len(labels)} series: {', '.join(labels)}")
    for width in ("single", "double"):
        fig = plot.fig_scaling(plt, plot.Page(width), plot.read_inputs([path]))
        fig.canvas.draw()
        got, looks = {}, {}
        for panel, ax in enumerate(fig.axes[:2]):
            for c in ax.containers:
                line = c.lines[0]
                column = "val_ppl" if panel == 1 else f"linear_{line.get_gid()}"
                got[(c.get_label(), column)] = list(line.get_ydata())
                looks.setdefault(c.get_label(), (matplotlib.colors.to_hex(line.get_color()), line.get_marker()))
        if sorted(got) != sorted(want):
            bad.append(f"{path} {width}: series {sorted(got)}, want {sorted(want)}")
        for k, ys in want.items():
            if k in got and any(abs(a - b) > 1e-9 * abs(b) for a, b in zip(got[k], ys)):
                bad.append(f"{path} {width}: {k} drawn {got[k]}, the group's mean is {ys}")
        if len({c for c, _ in looks.values()}) != len(looks) or len({m for _, m in looks.values()}) != len(looks):
            bad.append(f"{path} {width}: series alike in colour or marker: {looks}")
        for size in {lab.split(" ")[0] for lab in looks if lab.startswith("d=")}:
            hues = [colorsys.rgb_to_hls(*matplotlib.colors.to_rgb(c))[0] for lab, (c, _) in looks.items()
                    if lab.split(" ")[0] == size]
            if max(hues) - min(hues) > 0.05:
                bad.append(f"{path} {width}: the series of {size} are not one colour family ({hues})")
        legend = [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]
        if not set(looks) <= set(legend):
            bad.append(f"{path} {width}: the legend {legend} lacks {sorted(set(looks) - set(legend))}")
        for t in fig.findobj(matplotlib.text.Text):
            if t.get_text().strip() and t.get_visible() and t.get_fontsize() < 8:
                bad.append(f"{path} {width}: '{t.get_text()}' at {t.get_fontsize()} pt")
        plt.close(fig)
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF
ok $? "the scaling figure of a sweep with setting axes: a series per model size and axis value, each its group's mean"
sed 's/^/# /' "$tmp/axes.out" | tail -6

# What plot takes as a sweep's axis is what lab.settings() calls a numeric
# run setting (but the model's size and in_scale, columns of their own).
cat >"$tmp/numeric.lua" <<'LUA'
local names = {}
local own = {vocab = 1, dim = 1, layers = 1, heads = 1, ctx = 1, batch = 1, in_scale = 1}
for _, s in ipairs(lab.settings()) do
  if (s.type == "integer" or s.type == "number") and not own[s.name] then names[#names + 1] = s.name end
end
print(table.concat(names, " "))
LUA
numeric=$("$tielab" --headless "$tmp/numeric.lua" 2>>"$tmp/log")
axes=$("$py" - "$plot" <<'EOF'
import importlib.machinery, importlib.util, sys
loader = importlib.machinery.SourceFileLoader("plot", sys.argv[1])
plot = importlib.util.module_from_spec(importlib.util.spec_from_loader("plot", loader))
loader.exec_module(plot)
print(" ".join(plot.SETTING_AXES))
EOF
)
[ -n "$numeric" ] && [ "$numeric" = "$axes" ]
ok $? "plot's sweep axes are lab.settings()'s numeric run settings ($axes)"

# Bad input: one clear line on stderr and status 1.
bad() {   # bad DESCRIPTION PATTERN FILE...
  desc=$1 pattern=$2
  shift 2
  "$plot" "$@" --out "$tmp/badfigs" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ $rc -eq 1 ] && grep -q -- "$pattern" "$tmp/err"
  ok $? "$desc (status $rc: $(head -n 1 "$tmp/err"))"
}
printf 'a,b,c\n1,2,3\n' >"$tmp/unknown.csv"
bad "an unknown header is named" "unknown CSV header 'a,b,c'" "$tmp/unknown.csv"
grep -q "paper steps (seed,arm,step,loss,lr,warmup," "$tmp/err" &&
  grep -q "export (long) (series,step_first,step_last,first,last,min,mean,max,count)" "$tmp/err" &&
  grep -q "export (wide) (step,loss," "$tmp/err"
ok $? "an unknown header: the columns of every kind it reads are named"
bad "a missing file is named" "nothing.csv: no such file" "$tmp/nothing.csv"
: >"$tmp/empty.csv"
bad "an empty file is named" "empty.csv: empty file" "$tmp/empty.csv"
head -n 1 "$tmp/sw/sweep.csv" >"$tmp/header_only.csv"
bad "a header with no rows" "header_only.csv: header only" "$tmp/header_only.csv"
{ head -n 1 "$tmp/sw/sweep.csv"; echo "1,5,256,32,2,2,32,4,abc,2,0.3,0.5"; } >"$tmp/word.csv"
bad "a word where a number belongs names file, line and column" "word.csv:2: column 'val_ppl'" "$tmp/word.csv"
sed '1s/,batch,/,batch,foo,/; 2,$s/^\(\([^,]*,\)\{8\}\)/\11,/' "$tmp/ax1/sweep.csv" >"$tmp/foo.csv"
bad "a sweep's column that is no run setting is named" \
  "unknown CSV header 'seed,in_scale,vocab,dim,layers,heads,ctx,batch,foo,warmup,val_ppl" "$tmp/foo.csv"
grep -q "'foo' is not a run setting" "$tmp/err" && grep -q "sweep with setting axes (seed,in_scale,.* warmup" "$tmp/err" &&
  grep -q "paper steps (seed,arm,step," "$tmp/err"
ok $? "a sweep's column that is no run setting: it is named, and the columns of every kind"
{ head -n 1 "$tmp/sw/sweep.csv"; echo "1,5,40"; } >"$tmp/short.csv"
bad "a short row" "short.csv:2: 3 cells" "$tmp/short.csv"
mkdir -p "$tmp/nompl/matplotlib"
echo 'raise ImportError("not installed")' >"$tmp/nompl/matplotlib/__init__.py"
PYTHONPATH="$tmp/nompl" "$plot" "$tmp/sw/sweep.csv" --out "$tmp/badfigs" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "Debian package python3-matplotlib" "$tmp/err"
ok $? "no matplotlib: says which Debian package ($(head -n 1 "$tmp/err"))"

# The t quantile scripts/plot computes, against the printed tables.
"$py" - "$plot" <<'EOF' 2>"$tmp/t.err"
import importlib.machinery, importlib.util, sys
loader = importlib.machinery.SourceFileLoader("plot", sys.argv[1])
spec = importlib.util.spec_from_loader("plot", loader)
plot = importlib.util.module_from_spec(spec)
loader.exec_module(plot)
table = {(0.975, 1): 12.7062, (0.975, 2): 4.30265, (0.975, 9): 2.26216, (0.975, 30): 2.04227,
         (0.995, 4): 4.60409, (0.9, 10): 1.37218, (0.5, 3): 0.0}
for (p, df), want in table.items():
    got = plot.t_quantile(p, df)
    assert abs(got - want) < 1e-4, f"t({p}, {df}) = {got}, want {want}"
mean, lo, hi = plot.t_interval([1.0, 2.0, 3.0])
assert abs(mean - 2) < 1e-12 and abs(hi - 2 - 4.30265 / 3 ** 0.5) < 1e-4 and abs(mean - lo - (hi - mean)) < 1e-12
EOF
ok $? "the t quantile and interval match the tables"
sed 's/^/# /' "$tmp/t.err" | tail -2
tap_done
