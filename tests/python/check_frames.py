# check_frames.py — compares what frames_prog.py knew about each allocation's Python stack
# with what `vramtrace dump` shows for it (its stack line joined with its code lines by
# vtdump.py): the same Python frames (file, function, line), innermost first, nothing missing
# and nothing extra; autograd-thread events marked backward and carrying the stack of the main
# thread's last allocation. Any python3 runs it.
# Usage: check_frames.py EXPECTED.json DUMP.jsonl   (exit 0 = all match, 1 = mismatches)
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vtdump  # noqa: E402


def main():
    exp = json.load(open(sys.argv[1], encoding="utf-8"))
    events = {}
    recs, stacks = vtdump.load(sys.argv[2])
    for rec in recs:
        if rec.get("type") == "alloc" and rec.get("api") == "cudaMalloc":
            events.setdefault(int(rec["size"]), []).append(rec)
    bad = []

    def python_frames(ev):
        return [[f.get("file"), f.get("function"), f.get("line")]
                for f in (stacks.get(ev.get("stack_id")) or []) if f.get("kind") == "python"]

    def one(size, what):
        evs = events.get(size, [])
        if len(evs) != 1:
            bad.append(f"{what}: {len(evs)} cudaMalloc events of size {size} in the trace")
            return None
        return evs[0]

    by_size = {}
    for a in exp["allocs"]:
        by_size[a["size"]] = a
        ev = one(a["size"], f"{a['tag']} ({a['thread']})")
        if ev is None:
            continue
        got = python_frames(ev)
        if got != a["frames"]:
            bad.append(f"{a['tag']} ({a['thread']}): frames differ\n  want {a['frames']}\n  got  {got}")
        if ev.get("backward"):
            bad.append(f"{a['tag']}: marked backward on a Python thread")
    ag = exp.get("autograd")
    if ag:
        want = by_size[ag["borrowed_from"]]["frames"]
        for size in ag["sizes"]:
            ev = one(size, "autograd thread")
            if ev is None:
                continue
            if not ev.get("backward"):
                bad.append(f"autograd event {size}: not marked backward")
            got = python_frames(ev)
            if got != want:
                bad.append(f"autograd event {size}: want the main thread's last stack\n  want {want}\n  got  {got}")
    for b in bad[:20]:
        print("MISMATCH", b)
    n = len(exp["allocs"]) + (len(ag["sizes"]) if ag else 0)
    print(f"python {'.'.join(map(str, exp['python']))}: {n} allocations checked, {len(bad)} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
