#!/bin/sh
# layers_check.sh — the two halves only call down (docs/architecture.md). (a) analyzer/: no file
# includes a header of a higher layer (trace < model/facts < model/recognize < model/formula <
# model/advice < report < views < cmd), checked on the sources and, so that the check itself can
# fail, on a copy with one upward include added; from nm on build/obj/analyzer, no circle of
# calls between its files.
# (b) preload/: from the symbols each object of build/obj/preload defines and uses (nm), no
# circle of calls between its files, no file calling into a hook, and the writer files calling
# only each other and the settings (core/config.c): hooks -> core / stacks / torch -> writer.
# kind: hygiene (the code's shape, not what vramtrace does; counted apart by tests/run.sh)
set -u
OBJ="$BUILD/obj/preload"
[ -d "$OBJ" ] || { echo "no $OBJ (build first)"; exit 77; }
command -v nm >/dev/null || { echo "no nm"; exit 77; }
command -v python3 >/dev/null || { echo "no python3"; exit 77; }

# ---- (a) analyzer includes ------------------------------------------------------------------
python3 - "$ROOT" <<'PY' || exit 1
import os, re, shutil, sys, tempfile
LAYERS = ["trace", "model/facts", "model/recognize", "model/formula", "model/advice", "report",
          "views", "cmd"]
INC = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)

def violations(analyzer):
    """'file: includes X (layer) from layer' for every upward or unknown include."""
    owner = {}  # header base name -> its layer
    bad = []
    for layer in LAYERS:
        for f in sorted(os.listdir(os.path.join(analyzer, layer))):
            if f.endswith(".h"):
                if f in owner:
                    bad.append("%s/%s: header name also in %s/" % (layer, f, owner[f]))
                owner[f] = layer
    for layer in LAYERS:
        d = os.path.join(analyzer, layer)
        for f in sorted(os.listdir(d)):
            if not f.endswith((".c", ".h")):
                continue
            text = open(os.path.join(d, f), encoding="utf-8", errors="replace").read()
            for name in INC.findall(text):
                if name.startswith("vramtrace/"):
                    continue  # include/vramtrace/: the contract, below every layer
                if "/" in name:  # a path: resolve it against the file's folder
                    p = os.path.normpath(os.path.join(d, name))
                    rel = os.path.relpath(os.path.dirname(p), analyzer).replace(os.sep, "/")
                    to = rel if rel in LAYERS else None
                    if to is None:
                        bad.append("%s/%s: includes %s, outside analyzer's layers" % (layer, f, name))
                        continue
                elif name in owner:
                    to = owner[name]
                else:
                    bad.append("%s/%s: includes %s, which no layer has" % (layer, f, name))
                    continue
                if LAYERS.index(to) > LAYERS.index(layer):
                    bad.append("%s/%s: includes %s from the higher layer %s/" % (layer, f, name, to))
    return bad

root = sys.argv[1]
bad = violations(os.path.join(root, "analyzer"))
if bad:
    print("analyzer layers broken (a file may include only its own layer and those below):")
    print("\n".join("  " + b for b in bad))
    sys.exit(1)
# the check must be able to fail: a copy of the tree with model/ including a views/ header
tmp = tempfile.mkdtemp(prefix="vt-layers-")
try:
    shutil.copytree(os.path.join(root, "analyzer"), os.path.join(tmp, "analyzer"))
    victim = os.path.join(tmp, "analyzer", "model", "facts", "phases.c")
    view = sorted(f for f in os.listdir(os.path.join(tmp, "analyzer", "views")) if f.endswith(".h"))[0]
    with open(victim, "a") as fh:
        fh.write('#include "%s"\n' % view)
    seeded = violations(os.path.join(tmp, "analyzer"))
    if not any("model/facts/phases.c: includes %s" % view in b for b in seeded):
        print("self-test: an upward include (model/facts/phases.c -> views/%s) was not caught" % view)
        sys.exit(1)
finally:
    shutil.rmtree(tmp)
print("analyzer: every include looks down (%s)" % " < ".join(LAYERS))
PY

# ---- (b) preload calls ----------------------------------------------------------------------
# the objects of today's sources only (a build directory may hold objects of moved files)
(cd "$ROOT/preload" && find . -name '*.c' -o -name '*.cpp' | sed 's|^\./||; s|\.c$|.o|; s|\.cpp$|.o|' | sort) |
while read -r o; do
    [ -f "$OBJ/$o" ] && echo "$OBJ/$o"
done | python3 -c '
import subprocess, sys
objs = [l.strip() for l in sys.stdin if l.strip()]
root = sys.argv[1] + "/"
defs, uses = {}, {}
for o in objs:
    name = o[len(root):]
    for line in subprocess.run(["nm", o], capture_output=True, text=True).stdout.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "TDBRV" and p[2].startswith("vt"):
            defs[p[2]] = name
        elif len(p) == 2 and p[0] == "U" and p[1].startswith("vt"):
            uses.setdefault(name, set()).add(p[1])
graph = {o: {defs[u] for u in us if u in defs and defs[u] != o} for o, us in uses.items()}
def check(graph):
    bad = []
    for o, outs in sorted(graph.items()):
        if not o.startswith("hooks/"):
            bad += ["%s calls the hook file %s" % (o, t) for t in sorted(outs) if t.startswith("hooks/")]
        if o.startswith("writer"):
            bad += ["%s (the writer) calls %s" % (o, t) for t in sorted(outs)
                    if not t.startswith("writer") and t != "core/config.o"]
    def cycles(start):
        stack = [(start, [start])]
        while stack:
            n, path = stack.pop()
            for m in sorted(graph.get(n, ())):
                if m == start:
                    yield path
                elif m not in path:
                    stack.append((m, path + [m]))
    seen = set()
    for o in sorted(graph):
        for c in cycles(o):
            key = frozenset(c)
            if key in seen:
                continue
            seen.add(key)
            bad.append("circle of calls: " + " -> ".join(c + [c[0]]))
    return bad
bad = check(graph)
# the check must be able to fail: one call back along an existing edge makes a circle
a = next((o for o in sorted(graph) if graph[o]), None)
if a is not None and not bad:
    b = sorted(graph[a])[0]
    back = {o: set(v) for o, v in graph.items()}
    back.setdefault(b, set()).add(a)
    if not any(l.startswith("circle of calls") for l in check(back)):
        bad.append("self-test: a call back %s -> %s was not seen as a circle" % (b, a))
edges = sum(len(v) for v in graph.values())
print("\n".join(bad) if bad else "preload: %d objects, %d call edges between files, no circle" % (len(objs), edges))
sys.exit(1 if bad else 0)
' "$OBJ" || exit 1

# ---- (c) analyzer calls -----------------------------------------------------------------------
# the objects of today's sources only; no circle of calls between files (model/recognize's
# config.c and cmdline.c called each other until the model was split into layers)
AOBJ="$BUILD/obj/analyzer"
[ -d "$AOBJ" ] || { echo "no $AOBJ (build first)"; exit 77; }
(cd "$ROOT/analyzer" && find . -name '*.c' | sed 's|^\./||; s|\.c$|.o|' | sort) |
while read -r o; do
    [ -f "$AOBJ/$o" ] && echo "$AOBJ/$o"
done | python3 -c '
import subprocess, sys
objs = [l.strip() for l in sys.stdin if l.strip()]
root = sys.argv[1] + "/"
defs, uses = {}, {}
for o in objs:
    name = o[len(root):]
    for line in subprocess.run(["nm", o], capture_output=True, text=True).stdout.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "TDBRV":
            defs[p[2]] = name
        elif len(p) == 2 and p[0] == "U":
            uses.setdefault(name, set()).add(p[1])
graph = {o: {defs[u] for u in us if u in defs and defs[u] != o} for o, us in uses.items()}
def circles(graph):
    bad, seen = [], set()
    for start in sorted(graph):
        stack = [(start, [start])]
        while stack:
            n, path = stack.pop()
            for m in sorted(graph.get(n, ())):
                if m == start and frozenset(path) not in seen:
                    seen.add(frozenset(path))
                    bad.append("circle of calls: " + " -> ".join(path + [start]))
                elif m != start and m not in path:
                    stack.append((m, path + [m]))
    return bad
bad = circles(graph)
a = next((o for o in sorted(graph) if graph[o]), None)
if a is not None and not bad:
    b = sorted(graph[a])[0]
    back = {o: set(v) for o, v in graph.items()}
    back.setdefault(b, set()).add(a)
    if not circles(back):
        bad.append("self-test: a call back %s -> %s was not seen as a circle" % (b, a))
if len(objs) < 10:
    bad.append("only %d analyzer objects found under %s" % (len(objs), root))
edges = sum(len(v) for v in graph.values())
print("\n".join(bad) if bad else "analyzer: %d objects, %d call edges between files, no circle" % (len(objs), edges))
sys.exit(1 if bad else 0)
' "$AOBJ"
