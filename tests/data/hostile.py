#!/usr/bin/env python3
"""hostile.py — makes the hostile traces of tests/data/ (hostile_*.vt) from a valid trace by
rewriting its records (format: include/vramtrace/trace_format.h). Used once to make the
committed files, and by tests/integration/report_hostile.sh for inputs that depend on the
test's directory (a FIFO named by argv).
usage: hostile.py BASE OUT argv [--cwd DIR] ARG...   the PROCESS record's argv (and cwd)
       hostile.py BASE OUT noprocess                 no PROCESS record
       hostile.py BASE OUT bigalloc [SIZE]           every cudaMalloc of ~2^63 bytes (or SIZE)
       hostile.py BASE OUT stackid ID                a STACK record and an event use ID
       hostile.py BASE OUT stepid ID                 a STEP record after the first event names stack ID
       hostile.py BASE OUT card                      the emulated card's name (CONFIG) holds a
                                                     terminal escape, markup, invalid UTF-8
       hostile.py BASE OUT codes                     every Python code object's file name and
                                                     qualname (CODE) begin with terminal escapes"""
import os
import struct
import sys

REC_PROCESS, REC_CONFIG, REC_ALLOC, REC_STACK, REC_CODE, REC_STEP = 1, 2, 5, 7, 8, 19


def records(data):
    off = struct.unpack_from("<I", data, 12)[0]
    out = []
    while off + 8 <= len(data):
        typ, flags, size = struct.unpack_from("<HHI", data, off)
        if typ == 0 or size < 8 or off + size > len(data):
            break
        out.append([typ, flags, bytearray(data[off + 8:off + size])])
        off += size
    return data[:struct.unpack_from("<I", data, 12)[0]], out


def pack(header, recs):
    out = bytearray(header)
    for typ, flags, payload in recs:
        payload = bytes(payload) + b"\0" * (-len(payload) % 8)
        out += struct.pack("<HHI", typ, flags, 8 + len(payload)) + payload
    return bytes(out)


def strings(buf, off, n):
    out = []
    for _ in range(n):
        ln = struct.unpack_from("<I", buf, off)[0]
        out.append(bytes(buf[off + 4:off + 4 + ln]))
        off += 4 + ln
    return out


def set_argv(recs, argv, cwd):
    for r in recs:
        if r[0] == REC_PROCESS:
            pid, ppid, argc, nenv, start = struct.unpack_from("<IIIIQ", r[2], 0)
            s = strings(r[2], 24, 3 + argc + nenv)
            exe, old_cwd, host, env = s[0], s[1], s[2], s[3 + argc:]
            new = [exe, cwd.encode() if cwd is not None else old_cwd, host]
            new += [os.fsencode(a) for a in argv] + env  # bytes as given (not UTF-8 alone)
            payload = struct.pack("<IIIIQ", pid, ppid, len(argv), nenv, start)
            for x in new:
                payload += struct.pack("<I", len(x)) + x
            r[2] = bytearray(payload)


def main():
    base, out, kind, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    header, recs = records(open(base, "rb").read())
    if kind == "argv":
        cwd = None
        if args[:1] == ["--cwd"]:
            cwd, args = args[1], args[2:]
        set_argv(recs, args, cwd)
    elif kind == "noprocess":
        recs = [r for r in recs if r[0] != REC_PROCESS]
    elif kind == "bigalloc":
        n = 0
        for r in recs:
            if r[0] == REC_ALLOC and (r[1] & 0xff) == 1 and not r[1] & 0x1000:
                size = int(args[0], 0) if args else (1 << 63) - 4096 * (n + 1)
                struct.pack_into("<Q", r[2], 16, size)  # cudaMalloc
                n += 1
        assert n >= 2, "base trace needs two successful cudaMalloc"
    elif kind == "stackid":
        sid = int(args[0], 0)
        st = next(r for r in recs if r[0] == REC_STACK)
        old = struct.unpack_from("<I", st[2], 0)[0]
        struct.pack_into("<I", st[2], 0, sid)
        for r in recs:
            if r[0] == REC_ALLOC and struct.unpack_from("<I", r[2], 24)[0] == old:
                struct.pack_into("<I", r[2], 24, sid)
    elif kind == "stepid":  # (1.3's per-step summary: tt, events, step, flags, 5 sizes, 1 stack)
        i = next(i for i, r in enumerate(recs) if r[0] == REC_ALLOC) + 1
        step = struct.pack("<QQIIQQQQQII", 1000, 1, 1, 2, 0, 0, 0, 0, 0, 1, 0)
        recs.insert(i, [REC_STEP, 0, bytearray(step + struct.pack("<IIQ", int(args[0], 0), 0, 4096))])
    elif kind == "card":
        name = b"rtx\x1b[5m<b>\xff\xc2\x9b"
        for r in recs:
            if r[0] == REC_CONFIG:
                r[2] = r[2][:24] + struct.pack("<I", len(name)) + name
    elif kind == "codes":  # (CODE: id, first line, then filename, qualname, line table)
        esc = b"\x1b]0;t\x07\x1b[5m"
        n = 0
        for r in recs:
            if r[0] == REC_CODE:
                fn, qn, lt = strings(r[2], 8, 3)
                r[2] = r[2][:8] + b"".join(struct.pack("<I", len(x)) + x for x in (esc + fn, esc + qn, lt))
                n += 1
        assert n, "base trace has no CODE record"
    else:
        sys.exit("hostile.py: unknown kind " + kind)
    open(out, "wb").write(pack(header, recs))


main()
