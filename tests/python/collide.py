#!/usr/bin/env python3
"""collide.py — a hostile trace: SRC's ALLOC / FREE addresses replaced, each distinct one by an
address whose hash under an unseeded analyzer (hashseed.h's mix with seed 0, on the device
space) shares its low 40 bits with every other's: all would want one slot of a hash table.
Pairs stay pairs (one address for one address). usage: collide.py SRC OUT"""
import struct
import sys

M = (1 << 64) - 1
C1, C2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
SPACE_DEVICE = 1
REC_ALLOC, REC_FREE = 5, 6


def unshift(h, s):
    x = h
    for _ in range(64 // s + 1):
        x = h ^ (x >> s)
    return x & M


def unmix(h):
    h = unshift(h, 31)
    h = (h * pow(C2, -1, 1 << 64)) & M
    h = unshift(h, 27)
    h = (h * pow(C1, -1, 1 << 64)) & M
    return unshift(h, 30)


def main():
    src, out = sys.argv[1], sys.argv[2]
    data = bytearray(open(src, "rb").read())
    off = struct.unpack_from("<I", data, 12)[0]
    crafted = {}
    while off + 8 <= len(data):
        typ, _flags, size = struct.unpack_from("<HHI", data, off)
        if typ == 0 or size < 8 or off + size > len(data):
            break
        if typ in (REC_ALLOC, REC_FREE) and size >= 24:
            a = struct.unpack_from("<Q", data, off + 16)[0]
            if a:
                if a not in crafted:
                    crafted[a] = unmix((len(crafted) + 1) << 40) ^ (SPACE_DEVICE << 58)
                struct.pack_into("<Q", data, off + 16, crafted[a])
        off += size
    open(out, "wb").write(data)
    print(len(crafted))


if __name__ == "__main__":
    main()
