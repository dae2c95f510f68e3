# replay_dump.py — an independent replay of `vramtrace dump`'s events, written from the trace
# format (include/vramtrace/trace_format.h: each API's kind and key space) and the README's
# definitions, sharing no code with the analyzer's replay: a free ends the live allocation with
# its (space, address); allocated = tensors (PyTorch's tracker, or one stream-ordered allocation
# per tensor), reserved = the allocator's segments + stream-ordered allocations, process =
# reserved + contexts + kernel images + other device memory (cuMemAlloc, managed). Peaks only
# rise at an allocation. Tests hold the report and the views to these numbers.
# Usage: replay_dump.py DUMP.jsonl   (prints one JSON object)   or   import replay_dump
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
HEADER = os.path.join(HERE, "..", "..", "include", "vramtrace", "trace_format.h")

# the allocator's segments (reserved) and the stream-ordered allocations (a tensor each)
SEGMENT = {"cudaMalloc", "cudaMallocPitch", "cuMemCreate", "cuMemImportFromShareableHandle"}
STREAM_ORDERED = {"cudaMallocAsync", "cudaMallocFromPoolAsync", "cuMemAllocAsync",
                  "cuMemAllocFromPoolAsync"}


def api_table(header=HEADER):
    """name -> (kind, space), from the VT_APIS X-macro of the trace format."""
    text = open(header, encoding="utf-8").read()
    rows = re.findall(r"X\((\w+), (\d+), (\d), (\w+), (\w+)\)", text)
    return {name: (kind, space) for name, _id, _layer, kind, space in rows}


def level(api, kind, space):
    """which total an allocation adds to: tensor (in a segment), stream (a tensor that is its
    own device memory), segment, other (process only), or None (not device memory)."""
    if kind == "CONTEXT" or (kind == "LOAD" and space in ("MODULE", "LIBRARY")):
        return "other"
    if kind != "ALLOC":
        return None
    if space == "TENSOR":
        return "tensor"
    if api in STREAM_ORDERED:
        return "stream"
    if api in SEGMENT:
        return "segment"
    return "other" if space in ("DEVICE", "MANAGED") else None


def replay(lines, table=None):
    table = table or api_table()
    live = {}  # (space, addr) -> (level, size)
    tot = {"tensor": 0, "stream": 0, "segment": 0, "other": 0}
    peak = {"allocated": (0, 0), "reserved": (0, 0), "process": (0, 0)}
    moment = (0, 0, 0)
    events = 0
    for line in lines:
        if '"type":"alloc"' not in line and '"type":"free"' not in line:
            continue
        o = json.loads(line)
        if o["failed"] or o["api"] not in table:
            continue
        events += 1
        kind, space = table[o["api"]]
        key = (space, o["addr"])
        if o["type"] == "free":
            if key in live:
                lv, size = live.pop(key)
                tot[lv] -= size
            continue
        lv = level(o["api"], kind, space)
        if lv is None or o["addr"] in ("0x0", 0):
            continue
        if key in live:  # an address handed out again without a free seen: replaced
            old, size = live.pop(key)
            tot[old] -= size
        live[key] = (lv, o["size"])
        tot[lv] += o["size"]
        t = o["time_ns"]
        now = {"allocated": tot["tensor"] + tot["stream"], "reserved": tot["stream"] + tot["segment"]}
        now["process"] = now["reserved"] + tot["other"]
        for k, v in now.items():
            if v > peak[k][0]:
                peak[k] = (v, t)
        # the process peak's moment: among those at its level, the first with the most tensor
        # bytes (the moment its breakdown describes; the level is the same at all of them)
        if (now["process"], now["allocated"]) > moment[:2]:
            moment = (now["process"], now["allocated"], t)
    end = tot["stream"] + tot["segment"] + tot["other"]
    return {"events": events, "allocated_bytes": peak["allocated"][0],
            "allocated_ns": peak["allocated"][1], "reserved_bytes": peak["reserved"][0],
            "reserved_ns": peak["reserved"][1], "process_bytes": peak["process"][0],
            "process_first_ns": peak["process"][1], "process_ns": moment[2],
            "process_tensors": moment[1], "process_at_end": end,
            "tensors_at_end": tot["tensor"] + tot["stream"]}


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: replay_dump.py DUMP.jsonl")
    with open(sys.argv[1], encoding="utf-8") as f:
        print(json.dumps(replay(f)))
