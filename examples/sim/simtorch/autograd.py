"""simtorch/autograd.py — SIMULATION of PyTorch's autograd: forward ops record nodes (inputs,
saved tensors, how their backward allocates); backward() turns the graph into a plan of
allocations and frees that libsimtorch runs on its thread "pt_autograd_0" while the caller
waits in a ctypes call, as loss.backward() waits for PyTorch's autograd engine."""
import ctypes
import sys

from . import _state, Tensor, OutOfMemoryError, CUBLAS_WORKSPACE

OP_ALLOC, OP_FREE_SLOT, OP_FREE_PTR = 0, 1, 2
_autograd_workspace = []  # the autograd thread's own cuBLAS workspace (a kept slot)


class Node:
    """One recorded op. inputs: (tensor uid, nbytes, Parameter or None); saved: tensors kept
    for backward; grad_fn(plan, g, node) -> list of (uid, slot, param) input gradients."""

    __slots__ = ("out_uid", "inputs", "saved", "grad_fn", "info")

    def __init__(self, out, inputs, saved, grad_fn, info=None):
        self.out_uid = out.uid
        self.inputs = [(t.uid, t.nbytes, t if getattr(t, "name", None) is not None else None)
                       for t in inputs]
        self.saved = list(saved)
        for t in self.saved:
            t.saved += 1
        self.grad_fn = grad_fn
        self.info = info


def record(out, inputs, saved, grad_fn, info=None):
    """Adds a node when grad mode is on and an input needs a gradient; returns out."""
    inputs = [t for t in inputs if t.requires_grad]
    if _state["grad"] and inputs:
        out.requires_grad = True
        _state["tape"].append(Node(out, inputs, saved, grad_fn, info))
    return out


class Plan:
    """The ops the autograd thread runs: ALLOC into a slot, FREE a slot, FREE an address."""

    def __init__(self):
        self.ops = []
        self.nslots = 0
        self.refs = {}

    def alloc(self, nbytes):
        s = self.nslots
        self.nslots += 1
        self.ops += (OP_ALLOC, max(int(nbytes), 1), s)
        self.refs[s] = 1
        return s

    def incref(self, s):
        self.refs[s] += 1
        return s

    def decref(self, s):
        self.refs[s] -= 1
        if self.refs[s] == 0:
            del self.refs[s]
            self.ops += (OP_FREE_SLOT, s, 0)

    def temp(self, nbytes):
        """A scratch buffer allocated and freed within the op."""
        self.decref(self.alloc(nbytes))

    def release(self, node, i=-1):
        """Drops node's hold on its i-th saved tensor; frees it here (on the autograd thread)
        when no other node and no Python variable still holds it."""
        t = node.saved.pop(i)
        t.saved -= 1
        # references left: this frame's t and getrefcount's argument
        if t.saved == 0 and t.ptr and sys.getrefcount(t) <= 2:
            self.ops += (OP_FREE_PTR, t.ptr, 0)
            t.ptr = 0


def backward(loss, scale_nbytes=4):
    """loss.backward(): runs the recorded graph backwards on the autograd thread. Gradients of
    parameters end in p.grad (created at the first micro-step, accumulated after). Raises
    OutOfMemoryError when an allocation of the backward fails."""
    from . import _lib
    tape, _state["tape"] = _state["tape"], []
    plan = Plan()
    if not _autograd_workspace:
        _autograd_workspace.append(plan.alloc(CUBLAS_WORKSPACE))
    grads = {loss.uid: plan.alloc(loss.nbytes)}  # ones_like(loss)
    new_grads = {}  # param -> slot created by this backward
    for node in reversed(tape):
        g = grads.pop(node.out_uid, None)
        if g is None:
            continue
        outs = node.grad_fn(plan, g, node)
        while node.saved:
            plan.release(node)
        for uid, slot, param in outs:
            if param is not None:
                if param.grad is None and param not in new_grads:
                    new_grads[param] = slot  # AccumulateGrad steals the first gradient
                else:
                    plan.decref(slot)  # added in place into the existing .grad
            elif uid in grads:  # two uses of one tensor: the engine sums the gradients
                total = plan.alloc(dict((u, n) for u, n, _ in node.inputs).get(uid, 4))
                plan.decref(grads[uid])
                plan.decref(slot)
                grads[uid] = total
            else:
                grads[uid] = slot
    for s in list(grads.values()):  # gradients nobody consumed (inputs without grad)
        plan.decref(s)
    ops = (ctypes.c_int64 * len(plan.ops))(*plan.ops)
    slots = (ctypes.c_uint64 * max(plan.nslots, 1))()
    del tape
    rc = _lib.sim_backward(ops, len(plan.ops) // 3, slots)
    if rc != 0:
        raise OutOfMemoryError(_lib.sim_error().decode(errors="replace"))
    for param, s in new_grads.items():
        param.grad = Tensor.adopt(slots[s], param.shape, param.dtype)
    kept = set(new_grads.values()) | set(_autograd_workspace)
    for s in plan.refs:  # anything still referenced must be a kept slot
        if s not in kept and slots[s]:
            _lib.sim_free(slots[s])
