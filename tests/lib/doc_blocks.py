"""Run the Python blocks of a Markdown document, in order, as its reader would.

    doc_blocks.py DOC.md OUTDIR

Each ```python block is run in the current folder as one script made of the
earlier blocks it builds on and itself: a block whose first line is
"# needs: torch" (names separated by spaces) needs those beside the standard
library, and builds on every earlier block whose needs are among its own
(their output left out of its own).
A need is met when the module imports, or for "nanogpt" when NANOGPT names
nanoGPT's folder (its model.py is then imported from there). Block N's
output goes to OUTDIR/N.out and its errors to OUTDIR/N.err; one line a block
on stdout says "N ran STATUS NEEDS", or "N unmet NEED" when it could not run.
Only the standard library: it runs wherever python3 does.
"""
import importlib.util
import os
import re
import subprocess
import sys


def blocks(text):
    """[(needs, code)] of every python block, in order."""
    found = []
    for code in re.findall(r"^```python\n(.*?)^```", text, re.S | re.M):
        first = code.split("\n", 1)[0]
        need = first[len("# needs:"):].split() if first.startswith("# needs:") else []
        found.append((frozenset(need), code))
    return found


def unmet(need):
    """The first need this machine cannot meet, or None."""
    for name in sorted(need):
        if name == "nanogpt":
            folder = os.environ.get("NANOGPT", "")
            if not folder or not os.path.isfile(os.path.join(folder, "model.py")):
                return name
        elif not imports(name):
            return name
    return None


def imports(name):
    """Whether the module imports: found is not enough (a module that is
    there but broken, or hidden by tests/lib/without.sh, raises on import)."""
    try:
        importlib.import_module(name)
    except Exception:
        return False
    return True


def main():
    doc, out = sys.argv[1], sys.argv[2]
    with open(doc, encoding="utf-8") as f:
        found = blocks(f.read())
    env = dict(os.environ)
    if env.get("NANOGPT"):
        env["PYTHONPATH"] = env["NANOGPT"] + os.pathsep + env.get("PYTHONPATH", "")
    for n, (need, code) in enumerate(found, 1):
        missing = unmet(need)
        if missing:
            print(n, "unmet", missing)
            continue
        # The blocks built on say nothing: N.out is block N's own output.
        before = "\n".join(c for m, c in found[:n - 1] if m <= need)
        script = "import io as _io, sys as _sys\n_sys.stdout = _io.StringIO()\n" + before + \
            "\n_sys.stdout = _sys.__stdout__\n" + code
        with open(os.path.join(out, "%d.out" % n), "w") as o, open(os.path.join(out, "%d.err" % n), "w") as e:
            rc = subprocess.call([sys.executable, "-c", script], stdout=o, stderr=e, env=env)
        print(n, "ran", rc, " ".join(sorted(need)) or "-")


if __name__ == "__main__":
    main()
