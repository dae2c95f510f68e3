#!/usr/bin/env python3
"""bench_pystack.py — make bench workload: N cudaMalloc+cudaFree pairs through ctypes (which
releases the GIL like PyTorch) from DEPTH nested Python frames; prints ns per event. The frames
are one function recursing (its code object DEPTH times), or with `distinct` DEPTH functions of
their own (no code object twice: the tracer's walk looks each one up, the worst case; a model's
stacks repeat nn.Module's call wrappers, 8-31 % of their frames in the committed traces)."""
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


def distinct_levels(depth):
    """level_1 .. level_DEPTH, each calling the next (the last one the loop): DEPTH functions,
    each its own code object."""
    g = {"loop": loop}
    for k in range(1, depth + 1):
        callee = f"level_{k + 1}(n)" if k < depth else "loop(n)"
        exec(f"def level_{k}(n):\n    return {callee}\n", g)
    return lambda depth_, n: g["level_1"](n)


if __name__ == "__main__":
    n, depth = int(sys.argv[1]), int(sys.argv[2])
    top = distinct_levels(depth) if len(sys.argv) > 3 and sys.argv[3] == "distinct" else nest
    top(depth, 1000)  # warm-up: runtime init, trace file, code objects interned
    print(f"{top(depth, n) / (2 * n):.1f}")
