"""simtorch/autograd — SIMULATION of torch.autograd: backward() makes the missing output
gradients (_make_grads: ones_like on this thread, as torch's) and runs the engine; Function
for custom operations (checkpoint); grad mode."""
from .. import _C
from .._C import _aten
from .function import Function  # noqa: F401
from .grad_mode import no_grad, enable_grad, set_grad_enabled  # noqa: F401
from .graph import _engine_run_backward


def _make_grads(outputs, grads):
    """The gradient each output starts from: the one given, else ones (a scalar output)."""
    new = []
    for out, g in zip(outputs, grads):
        if g is None:
            g = _aten.like(out, "ones_like")
        else:
            g._external = True  # the caller's: the engine never adds into it in place
        new.append(g)
    return new


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """torch.autograd.backward: gradients of tensors (a tensor or a sequence) into the .grad of
    the leaves that need them; the graph's saved tensors are freed as it runs."""
    tensors = [tensors] if isinstance(tensors, _C._tensor.TensorBase) else list(tensors)
    if grad_tensors is None:
        grad_tensors = [None] * len(tensors)
    elif isinstance(grad_tensors, _C._tensor.TensorBase):
        grad_tensors = [grad_tensors]
    grads = _make_grads(tensors, list(grad_tensors))
    _engine_run_backward(tensors, grads, bool(retain_graph))
