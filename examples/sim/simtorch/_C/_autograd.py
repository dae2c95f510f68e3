"""simtorch/_C/_autograd.py — SIMULATION of PyTorch's autograd engine (C++ in torch): graph
nodes made by the forward with the tensors they save (only those a needed gradient uses), and
the engine: nodes run in decreasing sequence number as they become ready, gradients summed in
per-node buffers (in place when the buffer holds the only reference), cast and reduced to each
input's type and shape, saved tensors released after each node, leaf gradients stolen into
.grad or added in place. loss.backward() runs it on the thread pt_autograd_0."""
import ctypes
import heapq
import itertools
import sys

from . import tls, lazy_init, OutOfMemoryError
from ._tensor import TensorBase, alias, accumulate_node

_seq = itertools.count()


class Node:
    """A backward function. next: per input, (node, output_nr) or None; meta: per input,
    (shape, dtype) its gradient must have; saved: what apply() reads; info: op details."""

    __slots__ = ("next", "seq", "meta", "saved", "info", "nout", "__weakref__")

    def apply(self, grads):
        raise NotImplementedError

    def release(self):
        self.saved = None

    def name(self):
        return type(self).__name__


def edge_of(t):
    if not isinstance(t, TensorBase) or not t.requires_grad:
        return None
    if t.grad_fn is not None:
        return (t.grad_fn, t._output_nr)
    return (accumulate_node(t), 0)


def needs_grad(*inputs):
    """Grad mode is on and an input requires a gradient: the op records a node."""
    if not tls.grad:
        return False
    for t in inputs:
        if isinstance(t, TensorBase) and t.requires_grad:
            return True
    return False


def save(t):
    """What a node keeps of t: its memory, not its graph (None stays None)."""
    return alias(t) if isinstance(t, TensorBase) else t


def record(cls, inputs, outputs, saved=None, info=None):
    """Makes node cls over inputs, gives outputs their grad_fn; returns the node."""
    node = object.__new__(cls)
    node.seq = next(_seq)
    node.next = [edge_of(t) for t in inputs]
    node.meta = [(t._shape, t.dtype) if isinstance(t, TensorBase) else None for t in inputs]
    node.saved = saved
    node.info = info
    node.nout = len(outputs)
    for i, o in enumerate(outputs):
        if o is not None:
            o.grad_fn, o._output_nr, o.requires_grad = node, i, True
    return node


def rebase(t, cls, inputs, saved=None, info=None):
    """An in-place op on t: its history becomes node cls over inputs (t's old history first)."""
    return record(cls, inputs, [t], saved, info)


class AccumulateGrad(Node):
    """Adds a gradient into a leaf's .grad: the first one is stolen when nothing else holds it
    (else copied); later ones are added in place (grad mode is off)."""

    __slots__ = ()

    @staticmethod
    def for_variable(t):
        node = object.__new__(AccumulateGrad)
        node.seq = sys.maxsize
        node.next, node.meta, node.saved, node.info, node.nout = [], [], None, t, 1
        return node

    def apply(self, grads):
        from . import _aten
        g = grads[0]
        v = self.info
        if v.grad is None:
            if (g._uses == 0 and not g._external and g._base is None and g.is_contiguous()
                    and g.dtype == v.dtype):
                g.grad_fn = None
                v.grad = g
            else:
                v.grad = _aten.clone(g)
        # else: v.grad += g in place, no memory
        return []

    def release(self):
        pass


# ---- the engine ----------------------------------------------------------------------------
def _place(buffers, node, nr, g):
    from . import _aten
    buf = buffers.get(node)
    if buf is None:
        buf = buffers[node] = [None] * node.nout
    old = buf[nr]
    if old is None:
        buf[nr] = g
        g._uses += 1
    elif old._uses == 1 and not old._external and old._base is None:
        pass  # old += g in place
    else:
        old._uses -= 1
        buf[nr] = _aten.add(old, g)
        buf[nr]._uses += 1


def _validate(g, meta):
    from . import _aten
    shape, dtype = meta
    if g._shape != shape:
        g = _aten.sum_to(g, shape)
    if g.dtype != dtype:
        g = _aten.cast(g, dtype)
    return g


def run(tensors, grads, keep_graph=False):
    """Runs the graph behind tensors backwards from grads (on the calling thread)."""
    roots = []
    for t, g in zip(tensors, grads):
        e = edge_of(t)
        if e is not None:
            roots.append((e, g))
    deps, seen, stack = {}, set(), [e[0] for e, _ in roots]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        for e in n.next:
            if e is not None:
                deps[e[0]] = deps.get(e[0], 0) + 1
                stack.append(e[0])
    buffers, heap, order = {}, [], itertools.count()
    for (node, nr), g in roots:
        _place(buffers, node, nr, g)
    for node in {e[0] for e, _ in roots}:
        if deps.get(node, 0) == 0:
            heapq.heappush(heap, (-node.seq, next(order), node))
    del roots, grads, tensors
    prev = tls.grad
    tls.grad = False
    try:
        while heap:
            node = heapq.heappop(heap)[2]
            gin = buffers.pop(node)
            for g in gin:
                if g is not None:
                    g._uses -= 1
            outs = node.apply(gin)
            gin = None  # the function's inputs die when it returns
            outs = [None if (o is None or e is None) else _validate(o, m)
                    for o, e, m in zip(outs, node.next, node.meta)]
            if not keep_graph:
                node.release()
            for o, e in zip(outs, node.next):
                if o is None or e is None:
                    continue
                _place(buffers, e[0], e[1], o)
                deps[e[0]] -= 1
                if deps[e[0]] == 0:
                    heapq.heappush(heap, (-e[0].seq, next(order), e[0]))
            outs = o = None
    finally:
        tls.grad = prev


# ---- backward() from the main thread runs on pt_autograd_0 ---------------------------------------
_job = {}
_TASK_TYPE = ctypes.CFUNCTYPE(ctypes.c_int)


def _task():
    """The autograd thread's work: one engine run; its error is kept for the caller."""
    tensors, grads, keep = _job.pop("args")
    tls.in_engine = True
    try:
        run(tensors, grads, keep)
        return 0
    except OutOfMemoryError as e:
        _job["error"] = OutOfMemoryError(str(e))
    except BaseException as e:  # noqa: BLE001 — handed to the waiting thread
        _job["error"] = RuntimeError(f"{type(e).__name__}: {e}")
    finally:
        tensors = grads = None
        tls.in_engine = False
    return 1


_task_ptr = _TASK_TYPE(_task)


def run_backward(tensors, grads, keep_graph=False):
    """torch's _engine_run_backward: on the autograd thread, which a caller waits for; a call
    from the autograd thread itself (a reentrant backward, e.g. checkpoint) runs there."""
    if getattr(tls, "in_engine", False):
        run(tensors, grads, keep_graph)
        return
    lib = lazy_init()
    _job["args"] = (list(tensors), list(grads), keep_graph)
    tensors = grads = None
    rc = lib.sim_backward(ctypes.cast(_task_ptr, ctypes.c_void_p))
    err = _job.pop("error", None)
    if rc == -2:
        raise RuntimeError("simtorch: cannot start the autograd thread")
    if err is not None:
        raise err
