"""simtorch/autograd/function.py — SIMULATION of torch.autograd.Function: apply() runs forward()
with grad mode off and gives the outputs one graph node whose backward calls the class's
backward() (on the autograd thread); ctx.save_for_backward keeps tensors until then."""
from .. import _C
from .._C._autograd import Node, record, needs_grad, save
from .._C._tensor import TensorBase


class FunctionCtx:
    """ctx: what forward() keeps for backward()."""

    def save_for_backward(self, *tensors):
        self.to_save = [save(t) for t in tensors]
        for kept, t in zip(self.to_save, tensors):  # unpacked as they were: requires_grad kept
            if kept is not None:
                kept.requires_grad = t.requires_grad

    @property
    def saved_tensors(self):
        return tuple(self.to_save)


class BackwardCFunction(Node):
    """The node of a custom Function (info: (the Function class, ctx))."""

    __slots__ = ()

    def apply(self, grads):
        cls, ctx = self.info
        res = cls.backward(ctx, *grads)
        res = res if isinstance(res, tuple) else (res,)
        return list(res) + [None] * (len(self.next) - len(res))

    def release(self):
        if self.info is not None:
            self.info[1].to_save = []
        self.info = None


class Function:
    """Subclass with static forward(ctx, *args) and backward(ctx, *grads)."""

    @classmethod
    def apply(cls, *args):
        ctx = FunctionCtx()
        ctx.to_save = []
        ctx.needs_input_grad = tuple(isinstance(a, TensorBase) and a.requires_grad for a in args)
        prev = _C.set_grad_enabled(False)
        try:
            outputs = cls.forward(ctx, *args)
        finally:
            _C.set_grad_enabled(prev)
        single = not isinstance(outputs, tuple)
        outs = [outputs] if single else list(outputs)
        if needs_grad(*args):
            record(BackwardCFunction, list(args), [o if isinstance(o, TensorBase) else None
                                                   for o in outs], None, (cls, ctx))
        return outs[0] if single else tuple(outs)
