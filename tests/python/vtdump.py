"""vtdump.py — reads what `vramtrace dump` writes, for the tests: the records, and each stack's
frames joined from its stack, code, symbol and module lines (each written once: README "dump")
into one list in a traceback's order, innermost first:
  python: {"kind", "file", "function", "line", "code_id", "offset"}
  native: {"kind", "ip", "module", "symbol", "offset", "symbol_offset"[, "file", "line"]}
Use: recs, stacks = vtdump.load(path); stacks[event["stack_id"]] -> frames (None: unknown)."""
import json


def records(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]  # every line must parse


def frames(st, codes, syms, mods):
    nat = []
    for ip in st["native"]:
        s = syms.get(ip)
        m = mods.get(s["module_id"]) if s else None
        f = {"kind": "native", "ip": ip, "module": m["path"] if m else None,
             "symbol": s.get("symbol", s.get("demangled", s["name"]) or None) if s else None,
             "offset": s["offset"] if s else 0, "symbol_offset": s["symbol_offset"] if s else 0}
        if s and "file" in s:
            f["file"] = s["file"]
            if "line" in s:
                f["line"] = s["line"]
        nat.append(f)
    py = []
    for p in st["python"]:
        c = codes.get(p["code_id"])
        py.append({"kind": "python", "file": c["filename"] if c else None,
                   "function": c["qualname"] if c else None, "line": p.get("line"),
                   "code_id": p["code_id"], "offset": p["offset"]})
    k = st.get("native_before_python", len(nat))
    return nat[:k] + py + nat[k:]


def load(path):
    recs = records(path)
    codes = {r["code_id"]: r for r in recs if r["type"] == "code"}
    syms = {r["ip"]: r for r in recs if r["type"] == "symbol"}
    mods = {r["module_id"]: r for r in recs if r["type"] == "module"}
    stacks = {}
    for r in recs:
        if r["type"] == "stack" and r["stack_id"] not in stacks:
            stacks[r["stack_id"]] = frames(r, codes, syms, mods)
    return recs, stacks
