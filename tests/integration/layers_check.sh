#!/bin/sh
# preload_layers.sh — the preload is a one-way flow: from the symbols each object of
# build/obj/preload defines and uses (nm), no circle of calls between its files, and no core
# or stacks file calling into a hook. The one known circle, writer.c <-> core/procinfo.c
# (the PROCESS record written while the file opens), waits for writer.c's rewrite.
set -u
OBJ="$BUILD/obj/preload"
[ -d "$OBJ" ] || { echo "no $OBJ (build first)"; exit 77; }
command -v nm >/dev/null || { echo "no nm"; exit 77; }
# the objects of today's sources only (a build directory may hold objects of moved files)
(cd "$ROOT/preload" && find . -name '*.c' | sed 's|^\./||; s|\.c$|.o|' | sort) | while read -r o; do
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
known = {frozenset(("writer.o", "core/procinfo.o"))}
bad = []
for o, outs in graph.items():
    if not o.startswith("hooks/"):
        bad += ["%s calls the hook file %s" % (o, t) for t in outs if t.startswith("hooks/")]
def cycles(start):
    stack = [(start, [start])]
    while stack:
        n, path = stack.pop()
        for m in graph.get(n, ()):
            if m == start:
                yield path
            elif m not in path:
                stack.append((m, path + [m]))
seen = set()
for o in graph:
    for c in cycles(o):
        key = frozenset(c)
        if key in seen or key in known:
            continue
        seen.add(key)
        bad.append("circle of calls: " + " -> ".join(c + [c[0]]))
print("\n".join(bad) if bad else "%d preload objects, no circle of calls" % len(objs))
sys.exit(1 if bad else 0)
' "$OBJ"
