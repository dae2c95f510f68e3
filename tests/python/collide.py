#!/usr/bin/env python3
"""collide.py — a hostile trace: SRC's ALLOC / FREE addresses replaced, each distinct one by an
address whose hash under an unseeded analyzer (livemap_mix: hashseed.h's fold with seed 0, on
the device space) shares its low 40 bits with every other's: all would want one slot of the live
set's table.
Pairs stay pairs (one address for one address). usage: collide.py SRC OUT"""
import struct
import sys

M = (1 << 64) - 1
SPACE_DEVICE = 1
REC_ALLOC, REC_FREE = 5, 6
K = 0x9E3779B97F4A7C15  # hashseed_fold's multiplier


def unfold(h):
    """hashseed_fold undone under seed 0: its bytes reversed back, times the multiplier's inverse"""
    return (int.from_bytes(h.to_bytes(8, "little"), "big") * pow(K, -1, 1 << 64)) & M


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
                    crafted[a] = unfold((len(crafted) + 1) << 40) ^ (SPACE_DEVICE << 58)
                struct.pack_into("<Q", data, off + 16, crafted[a])
        off += size
    open(out, "wb").write(data)
    print(len(crafted))


if __name__ == "__main__":
    main()
