#!/usr/bin/env python3
# chunked_seeds.py — seeds for fuzz_chunked (tests/fuzz/corpus/chunked/): a plain trace with an
# FZ_PARAMS record (the layout's parameters, fuzz_chunked.c's fz_params) after its header and a
# STEP record (a few stacks) every --every events, so the layout has SUMMARY chunks to make.
# usage: chunked_seeds.py TRACE OUT --params RAW_CAP,MODES,ZMASK,DROPMASK,PIECE,ZLEVEL,FLAGS
#        [--corrupt C1,C2,C3]
import argparse
import struct

ap = argparse.ArgumentParser()
ap.add_argument("trace")
ap.add_argument("out")
ap.add_argument("--params", default="4096,0x55555555,0xaaaaaaaa,0,64,0,1")
ap.add_argument("--every", type=int, default=40)
ap.add_argument("--corrupt", default="0,0,0", help="three fields to change (fz_params.corrupt)")
a = ap.parse_args()
d = open(a.trace, "rb").read()
hsize = struct.unpack_from("<I", d, 12)[0]
p = [int(x, 0) for x in a.params.split(",")]
params = struct.pack("<IIIIHBBIII", *p, *[int(x, 0) for x in a.corrupt.split(",")])
out = [d[:32], struct.pack("<HHI", 0x7FF0, 0, 8 + len(params)) + params]
at, events, step, tt, stacks = hsize, 0, 0, 0, []
while at + 8 <= len(d):
    t, fl, sz = struct.unpack_from("<HHI", d, at)
    if t == 0 or sz < 8 or at + sz > len(d):
        break
    r = d[at:at + sz]
    if t in (5, 6):
        events += 1
        tt = struct.unpack_from("<Q", r, 8)[0]
        if t == 5 and sz >= 32:
            stacks.append(struct.unpack_from("<I", r, 32)[0])
        if events % a.every == 0:
            step += 1
            st = [(s, 4096 * (i + 1)) for i, s in enumerate(sorted(set(stacks))[:3])]
            body = struct.pack("<QQIIQQQQQII", tt, events, step, 2 | (step & 1), 1 << 20, 2 << 20,
                               3 << 20, 4 << 20, 0, len(st), 0)
            body += b"".join(struct.pack("<IIQ", s, 0, b) for s, b in st)
            out.append(struct.pack("<HHI", 19, 0, 8 + len(body)) + body)
    out.append(r)
    at += sz
open(a.out, "wb").write(b"".join(out))
