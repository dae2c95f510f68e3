#!/usr/bin/env python3
"""bench_pystack.py — make bench workload: N cudaMalloc+cudaFree pairs through ctypes (which
releases the GIL like PyTorch) from DEPTH nested Python frames; prints ns per event."""
import ctypes
import sys
import time

rt = ctypes.CDLL("libcudart.so.13")
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
rt.cudaFree.argtypes = [ctypes.c_void_p]


def loop(n):
    p = ctypes.c_void_p()
    malloc, free, ref = rt.cudaMalloc, rt.cudaFree, ctypes.byref(p)
    t0 = time.perf_counter_ns()
    for i in range(n):
        malloc(ref, 512 + (i & 63) * 512)
        free(p)
    return time.perf_counter_ns() - t0


def nest(depth, n):
    if depth <= 1:
        return loop(n)
    return nest(depth - 1, n)


if __name__ == "__main__":
    n, depth = int(sys.argv[1]), int(sys.argv[2])
    nest(depth, 1000)  # warm-up: runtime init, trace file, code objects interned
    print(f"{nest(depth, n) / (2 * n):.1f}")
