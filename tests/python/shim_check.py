# -*- coding: utf-8 -*-
# shim_check.py — runs preload/stacks/pyframes.c (linked alone into tests/pyprobe/shim.c's .so) from
# real Python code through ctypes.CDLL (GIL released) and checks every captured frame against
# what the interpreter says: file, qualified name, line (offset mapped with co_lines()), the
# CODE record's first line and raw line table, code-id reuse, the autograd hand-over, threads.
# Usage: python shim_check.py path/to/shim.so   (exit 0 = all good, 1 = a mismatch)
import ctypes
import dis
import gc
import os
import sys
import threading
import types

LIB = ctypes.CDLL(sys.argv[1])
MAX = 128
Buf = ctypes.c_uint64 * MAX
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg, flush=True)


def qualname(code):
    # 3.10 code objects have no qualified name: the tracer records co_name there.
    return getattr(code, "co_qualname", code.co_name)


def expected(depth=1):
    """The caller's Python stack, innermost first: (code, line)."""
    f = sys._getframe(depth)
    out = []
    while f is not None:
        out.append((f.f_code, f.f_lineno))
        f = f.f_back
    return out


def line_of(code, offset):
    for start, end, line in code.co_lines():
        if start <= offset < end:
            return line
    return None


def code_info(cid):
    file = ctypes.create_string_buffer(512)
    qual = ctypes.create_string_buffer(256)
    first = ctypes.c_int()
    table = ctypes.create_string_buffer(8192)
    n = LIB.shim_code(cid, file, qual, ctypes.byref(first), table)
    if n < 0:
        return None, n
    return (file.value.decode(), qual.value.decode(), first.value, table.raw[:n]), n


recycled_addrs = []  # addresses of the short-lived code objects
seen_ids = {}  # code_id -> (file, qualname) it stands for (no reference kept)


def compare(tag, exp, buf, n):
    if n != len(exp):
        fail(f"{tag}: {n} frames captured, {len(exp)} expected "
             f"({[qualname(c) for c, _ in exp]})")
    for i in range(min(n, len(exp))):
        code, line = exp[i]
        cid, off = buf[i] >> 32, buf[i] & 0xffffffff
        info, rc = code_info(cid)
        if info is None:
            fail(f"{tag} frame {i}: code id {cid} has no single CODE record (rc {rc})")
            continue
        file, qual, first, table = info
        want = (code.co_filename, qualname(code), line, code.co_firstlineno, code.co_linetable)
        got = (file, qual, line_of(code, off), first, table)
        if want != got:
            fail(f"{tag} frame {i}: want {want[:4]} got {got[:4]} (tables equal: {want[4] == got[4]})")
        # copies of the strings: a reference kept here would keep a dead code object's name
        # alive, and its address from coming back (renamed() below)
        key = tuple((x + "\0")[:-1] for x in (code.co_filename, qualname(code)))
        prev = seen_ids.setdefault(cid, key)
        if prev != key:
            fail(f"{tag} frame {i}: code id {cid} stands for {prev} and for {qualname(code)}")


def capture(tag):
    """Capture here; compare with the stack as the interpreter sees it (this frame down)."""
    buf = Buf()
    exp = expected(1); n = LIB.shim_capture(buf, MAX)  # noqa: E702 — same line on purpose
    compare(tag, exp, buf, n)
    return buf, n


# ---- shapes of code that call into the "CUDA" library -----------------------------------
def leaf(tag):
    return capture(tag)


def middle(tag):
    return leaf(tag)


def outer(tag):
    return middle(tag)


class Model:
    def forward(self, tag):
        return capture(tag)

    def method(self, tag):
        inner = lambda: capture(tag)  # noqa: E731
        return inner()

    def __call__(self, tag):
        return self.forward(tag)


def gen(tag):
    for i in range(2):
        yield capture(f"{tag}-{i}")


def façade(tag):          # latin-1 name
    return capture(tag)


def 数据(tag):            # UCS-2 name
    return capture(tag)


def 𠀀(tag):              # UCS-4 name
    return capture(tag)


def deep(k, tag):
    if k == 0:
        return capture(tag)
    return deep(k - 1, tag)


def template(tag):
    return capture(tag)


def recycled(i):
    # a fresh code object per iteration, freed afterwards: CPython reuses its address (and
    # often its name's) for the next one, which must still get its own code id.
    if i % 2:
        changes = {"co_name": f"fn_{i}"}
        if hasattr(template.__code__, "co_qualname"):
            changes["co_qualname"] = f"fn_{i}"
    else:
        changes = {"co_firstlineno": 1000 + i}
    co = template.__code__.replace(**changes)
    fn = types.FunctionType(co, globals())
    recycled_addrs.append(id(co))
    r = fn(f"recycled-{i}")
    del fn, co
    return r


renamed_addrs = []  # (code, name) addresses of the renamed code objects


def renamed(i):
    # names of one length, one after the other: from 3.11 on both the code object's and its
    # name's addresses come back, the name's characters alone tell the next one from the dead
    name = f"fn_{i:04d}"
    changes = {"co_name": name}
    if hasattr(template.__code__, "co_qualname"):
        changes["co_qualname"] = name
    co = template.__code__.replace(**changes)
    fn = types.FunctionType(co, globals())
    renamed_addrs.append((id(co), id(name)))
    r = fn(f"renamed-{i}")
    del fn, co, name, changes
    return r


retabled_addrs = []  # (code, line table) addresses of the retabled code objects
RETABLED_FILE = "<retabled>"  # one file name object for all: its address tells nothing


def retabled(i):
    # one function but for the blank lines before its capture: the line tables differ in their
    # middle alone (lengths, first and last words equal); from 3.11 on the code object and its
    # line table come back at the dead ones' addresses, the table's contents alone tell them apart
    src = ("def retabled_fn(tag):\n" + "    a = 1\n" * 4 + "\n" * (3 + i) + "    capture(tag)\n"
           + "    b = 2\n" * 4)
    ns = {"capture": capture}
    exec(compile(src, RETABLED_FILE, "exec"), ns)
    fn = ns["retabled_fn"]
    co = fn.__code__
    retabled_addrs.append((id(co), id(co.co_linetable), len(co.co_linetable)))
    r = fn(f"retabled-{i}")
    ns.clear()  # (the function and its globals: a cycle, freed now)
    del fn, ns, co
    return r


refiled_addrs = []  # (code, file name) addresses of the refiled code objects


def refiled(i):
    # file names of one length, one after the other (generated code: "<eval_with_key>.N"): the
    # code object and its file name come back at the dead ones' addresses, the name's characters
    # alone tell the next one from the dead
    file = f"<refiled-{i:04d}>"
    co = template.__code__.replace(co_filename=file)
    fn = types.FunctionType(co, globals())
    refiled_addrs.append((id(co), id(file)))
    r = fn(f"refiled-{i}")
    del fn, co, file
    return r


finalized = []  # what each Finalized's finalizer captured, compared after the collections


class Finalized:
    """Garbage in a cycle whose finalizer captures (collected: prologue() below)."""

    def __init__(self):
        self.me = self

    def __del__(self):
        # a capture and the interpreter's view alone here: comparing allocates, which would move
        # where the next collections start
        buf = Buf()
        exp = expected(1); n = LIB.shim_capture(buf, MAX)  # noqa: E702
        caller = exp[1] if len(exp) > 1 else (None, 0)  # the innermost complete frame under it
        finalized.append((exp, buf, n, caller == (prologue.__code__, PROLOGUE_CALL_LINE)))


def with_cell(tag):
    x = tag  # a cell: the frame's prologue makes it (3.11: MAKE_CELL, a GC allocation)

    def inner():
        return x
    return inner()


def prologue():
    # a collection started by a cell's allocation in with_cell's prologue (3.11 collects right
    # there; 3.12+ at the next eval-breaker check) runs the finalizer while that frame is not
    # complete: the interpreter leaves it out of the stack (sys._getframe, tracebacks), so must
    # the walk. Where the collections start depends on what the finalizers allocate: a few
    # thresholds, one of them lands in the prologue.
    global PROLOGUE_CALL_LINE
    PROLOGUE_CALL_LINE = next(line_of(prologue.__code__, i.offset)
                              for i in dis.get_instructions(prologue) if i.argval == "with_cell")
    old = gc.get_threshold()
    try:
        for threshold in range(1, 13):
            gc.collect()
            gc.set_threshold(threshold)
            for i in range(30):
                Finalized()
                with_cell(i)
    finally:
        gc.set_threshold(*old)
    for exp, buf, n, _ in finalized:
        compare("finalizer", exp, buf, n)
    hits = sum(1 for f in finalized if f[3])
    print(f"finalizers run from a frame's prologue: {hits} of {len(finalized)}", flush=True)
    if hits == 0 and sys.version_info[:2] == (3, 11):
        fail("no finalizer ran while a frame was in its prologue: that case was not exercised")


SLOTS = 16384  # pycodes.h's VT__CODE_SLOTS


def first_slot(addr):
    """pycodes.h's code_hash: the slot where a lookup of the code object at addr starts."""
    return ((((addr >> 3) * 0x9E3779B97F4A7C15) & ((1 << 64) - 1)) >> 40) & (SLOTS - 1)


def crowded():
    # two live code objects whose lookups start at one slot, each called: the second one
    # (interned past the first one's slot) must get its own id, not the id its first slot holds
    keep, by_slot = [], {}
    for i in range(20000):
        changes = {"co_name": f"crowded_{i}"}
        if hasattr(template.__code__, "co_qualname"):
            changes["co_qualname"] = f"crowded_{i}"
        co = template.__code__.replace(**changes)
        keep.append(co)
        other = by_slot.setdefault(first_slot(id(co)), co)
        if other is not co:
            for c in (other, co):
                types.FunctionType(c, globals())(f"crowded-{c.co_name}")
            return True
    return False


def thread_body(tag, rounds, results):
    try:
        for r in range(rounds):
            outer(f"{tag}-{r}")
            Model()(f"{tag}-m{r}")
            deep(r % 7, f"{tag}-d{r}")
        results.append(tag)
    except Exception as e:  # pragma: no cover - reported as a failure
        fail(f"{tag}: {e!r}")


def main():
    outer("nested")
    m = Model()
    m("call-forward")
    m.method("lambda")
    list(gen("gen-list"))
    for _ in gen("gen-for"):
        pass
    façade("latin1")
    数据("ucs2")
    𠀀("ucs4")
    deep(40, "deep40")
    # deeper than the cap: innermost 128 frames only
    b = Buf()
    def capped(k):
        if k:
            return capped(k - 1)
        exp = expected(1); got = LIB.shim_capture(b, MAX)  # noqa: E702
        compare("capped", exp[:MAX], b, got)
    capped(200)
    for i in range(30):
        recycled(i)
    reused = len(recycled_addrs) - len(set(recycled_addrs))
    print(f"recycled code objects: {reused} of 30 at a reused address", flush=True)
    # 3.10's allocator hands the freed slot to another object of this run (ctypes buffers)
    # before the next code object is made; from 3.11 on the address comes back every time.
    if reused == 0 and sys.version_info >= (3, 11):
        fail("no code object address was reused: the reuse case was not exercised")
    for i in range(30):
        renamed(i)
    reused = len(renamed_addrs) - len(set(renamed_addrs))
    print(f"renamed code objects: {reused} of 30 at their name's reused address too", flush=True)
    if reused == 0 and sys.version_info >= (3, 11):
        fail("no code object came back with its name's address: that case was not exercised")

    for i in range(20):
        retabled(i)
    reused = len(retabled_addrs) - len(set(retabled_addrs))
    print(f"retabled code objects: {reused} of 20 at their line table's reused address too",
          flush=True)
    if reused == 0 and sys.version_info >= (3, 11):
        fail("no code object came back with its line table's address: that case was not exercised")
    for i in range(30):
        refiled(i)
    reused = len(refiled_addrs) - len(set(refiled_addrs))
    print(f"refiled code objects: {reused} of 30 at their file name's reused address too",
          flush=True)
    if reused == 0 and sys.version_info >= (3, 11):
        fail("no code object came back with its file name's address: that case was not exercised")

    prologue()
    if not crowded():
        fail("no two code objects' lookups started at one slot: that case was not exercised")

    # the autograd hand-over: a C thread named pt_autograd_0 gets this stack
    last, n = outer("before-backward")
    ag = Buf()
    got = LIB.shim_autograd_thread(ag, MAX)
    if got != n or list(ag[:got]) != list(last[:n]):
        fail(f"autograd thread got {got} frames, expected the {n} of the last main capture")

    # a second thread, then 4 threads at once
    res = []
    t = threading.Thread(target=thread_body, args=("thread1", 3, res), name="worker")
    t.start(); t.join()  # noqa: E702
    ts = [threading.Thread(target=thread_body, args=(f"stress{k}", 40, res)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if len(res) != 5:
        fail(f"threads finished: {res}")

    # cost of one capture of a 30-deep stack (reported, not asserted)
    LIB.shim_bench.restype = ctypes.c_double
    def bench(k):
        return bench(k - 1) if k > 1 else LIB.shim_bench(20000)
    print(f"capture of a 30-deep Python stack: {bench(30 - len(expected(1))):.0f} ns", flush=True)

    # the code objects' frees are counted: PyCode_Type's tp_dealloc (its type object's sixth word
    # after the reference count: ob_type, ob_size, tp_name, tp_basicsize, tp_itemsize) now in
    # the library under test (without it every lookup reads the code object's fingerprint)
    class DlInfo(ctypes.Structure):
        _fields_ = [("fname", ctypes.c_char_p), ("fbase", ctypes.c_void_p),
                    ("sname", ctypes.c_char_p), ("saddr", ctypes.c_void_p)]
    dealloc = ctypes.c_void_p.from_address(id(types.CodeType) + 6 * ctypes.sizeof(ctypes.c_void_p))
    info = DlInfo()
    libc = ctypes.CDLL(None)
    if not libc.dladdr(ctypes.c_void_p(dealloc.value), ctypes.byref(info)) or \
            not info.fname or os.path.realpath(info.fname.decode()) != os.path.realpath(sys.argv[1]):
        fail(f"PyCode_Type's tp_dealloc not wrapped: it is in {info.fname}")

    v = (ctypes.c_uint32 * 4)()
    count = LIB.shim_pyinfo(v)
    if count != 1 or tuple(v) != (*sys.version_info[:3], 1):
        fail(f"PYINFO written {count} times: {tuple(v)}")
    print(f"python {sys.version.split()[0]}: {len(seen_ids)} code ids, "
          f"{len(failures)} failures", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
