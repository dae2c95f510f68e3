#!/usr/bin/env python3
# slice.py — small seed traces for the fuzz corpus (tests/fuzz/corpus/trace/): from a trace, its
# metadata records (process, config, files, devices, threads, code, stacks, symbols, modules)
# up to a budget, then the events of one window of the run, then a trailer; every record whole.
# usage: slice.py TRACE OUT [--from FRACTION | --oom] [--bytes N]
import argparse
import struct

EVENTS = {5, 6, 11, 12}  # ALLOC, FREE, MEMINFO, OOM
TRAILER = 14

ap = argparse.ArgumentParser()
ap.add_argument("trace")
ap.add_argument("out")
ap.add_argument("--from", dest="frm", type=float, default=0.0)
ap.add_argument("--bytes", type=int, default=24576)
ap.add_argument("--oom", action="store_true", help="the window ends just after the first OOM")
a = ap.parse_args()
d = open(a.trace, "rb").read()
hsize = struct.unpack_from("<I", d, 12)[0]
recs, at = [], hsize
while at + 8 <= len(d):
    t, fl, sz = struct.unpack_from("<HHI", d, at)
    if t == 0 or sz < 8 or at + sz > len(d):
        break
    recs.append((t, d[at:at + sz]))
    at += sz
meta = [r for t, r in recs if t not in EVENTS and t != TRAILER]
events = [r for t, r in recs if t in EVENTS]
out, size = [], hsize
for r in meta:
    if size + len(r) > a.bytes // 2:
        break
    out.append(r)
    size += len(r)
first = int(len(events) * a.frm)
if a.oom:  # the events before the first OOM that fit, and a few after it
    k = next(i for i, r in enumerate(events) if struct.unpack_from("<H", r)[0] == 12)
    first, room = k, a.bytes - size - 8 * 48
    while first > 0 and room >= len(events[first - 1]):
        first -= 1
        room -= len(events[first])
for r in events[first:]:
    if size + len(r) > a.bytes:
        break
    out.append(r)
    size += len(r)
trailer = struct.pack("<HHI", TRAILER, 0, 48) + bytes(40)
open(a.out, "wb").write(d[:hsize] + b"".join(out) + trailer)
