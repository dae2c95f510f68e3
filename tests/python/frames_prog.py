# -*- coding: utf-8 -*-
# frames_prog.py — a Python program for tests/integration/py_frames.sh, run under the preload:
# it calls the fake runtime's cudaMalloc/cudaFree through ctypes.CDLL (GIL released, as in
# PyTorch) from nested functions, a method, a class's forward, a lambda, a generator, names in
# latin-1/UCS-2/UCS-4, a deep recursion, a second thread and 4 concurrent threads, plus a C
# thread named pt_autograd_0 while the main thread waits in a ctypes call (after another thread's
# allocation: the autograd thread borrows the main thread's stack). Every allocation
# has a unique size; what the interpreter itself says about the stack at that moment (file,
# qualified name, line, innermost first) is written to a JSON file for check_frames.py.
# Usage: python frames_prog.py EXPECTED.json [AUTOGRAD_LIB.so]
import ctypes
import itertools
import json
import os
import sys
import threading

rt = ctypes.CDLL(os.path.join(os.environ["FAKE"], "libcudart.so.13"))
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
rt.cudaFree.argtypes = [ctypes.c_void_p]

records = []  # {"size", "thread", "frames": [[file, function, line], ...]}
lock = threading.Lock()
sizes = itertools.count(1)


def function_name(code):
    # what the tracer can know: the qualified name from 3.11 on, the plain name on 3.10
    return getattr(code, "co_qualname", code.co_name)


def stack_here():
    """The caller's Python stack as the interpreter sees it, innermost first."""
    f = sys._getframe(1)
    out = []
    while f is not None:
        out.append([f.f_code.co_filename, function_name(f.f_code), f.f_lineno])
        f = f.f_back
    return out


def new_size():
    with lock:
        return (1 << 20) + next(sizes) * 4096


def alloc(tag):
    """One cudaMalloc + cudaFree of a unique size; records the expected stack."""
    size = new_size()
    p = ctypes.c_void_p()
    exp = stack_here(); rc = rt.cudaMalloc(ctypes.byref(p), size)  # noqa: E702 same line
    if rc != 0:
        raise RuntimeError(f"cudaMalloc({size}) = {rc}")
    with lock:
        records.append({"size": size, "tag": tag, "thread": threading.current_thread().name,
                        "frames": exp})
    rt.cudaFree(p)
    return size


def leaf(tag):
    return alloc(tag)


def middle(tag):
    return leaf(tag)


def outer(tag):
    return middle(tag)


class Block:
    def forward(self, tag):
        return alloc(tag)

    def method(self, tag):
        act = lambda t: alloc(t)  # noqa: E731
        return act(tag)

    def __call__(self, tag):
        return self.forward(tag)


def batches(tag):
    for i in range(3):
        yield alloc(f"{tag}{i}")


def façade(tag):
    return alloc(tag)


def 数据(tag):
    return alloc(tag)


def 𠀀(tag):
    return alloc(tag)


def deep(k, tag):
    if k == 0:
        return alloc(tag)
    return deep(k - 1, tag)


def varied(tag, r):
    # frames change from one allocation to the next
    which = r % 4
    if which == 0:
        return outer(tag)
    if which == 1:
        return Block()(tag)
    if which == 2:
        return deep(r % 9, tag)
    return sum(1 for _ in batches(tag))


def stress(tag, rounds, barrier, errors):
    try:
        barrier.wait()
        for r in range(rounds):
            varied(f"{tag}-{r}", r)
    except Exception as e:
        errors.append(f"{tag}: {e!r}")


def before_backward():
    return alloc("before-backward")


def main():
    out = sys.argv[1]
    outer("nested")
    b = Block()
    b("forward")
    b.method("lambda")
    list(batches("gen-list"))
    for _ in batches("gen-for"):
        pass
    façade("latin1")
    数据("ucs2")
    𠀀("ucs4")
    deep(30, "deep30")

    autograd = None
    if len(sys.argv) > 2:
        lib = ctypes.CDLL(sys.argv[2])
        lib.vt_test_autograd.argtypes = [ctypes.c_size_t, ctypes.c_int]
        last = before_backward()
        base = new_size()
        for _ in range(3):
            new_size()  # reserve base .. base + 3 * 4096 for the C thread
        # a thread that allocates after the main thread's last allocation (a prefetcher's next
        # batch): the autograd thread still borrows the main thread's stack
        t = threading.Thread(target=alloc, args=("prefetch",), name="prefetcher")
        t.start(); t.join()  # noqa: E702
        rc = lib.vt_test_autograd(base, 3)  # main thread waits here, GIL released
        if rc != 0:
            raise RuntimeError(f"vt_test_autograd = {rc}")
        autograd = {"sizes": [base + i * 4096 for i in range(3)], "borrowed_from": last}

    errors = []
    t = threading.Thread(target=stress, args=("second", 8, threading.Barrier(1), errors),
                         name="second")
    t.start(); t.join()  # noqa: E702
    barrier = threading.Barrier(4)
    ts = [threading.Thread(target=stress, args=(f"stress{k}", 60, barrier, errors))
          for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        raise RuntimeError("; ".join(errors))
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"python": list(sys.version_info[:3]), "allocs": records,
                   "autograd": autograd}, f, ensure_ascii=False)
    print(f"{len(records)} allocations from Python", flush=True)


if __name__ == "__main__":
    main()
