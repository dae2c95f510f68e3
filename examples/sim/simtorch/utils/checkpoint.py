"""simtorch/utils/checkpoint.py — SIMULATION of torch.utils.checkpoint (the reentrant variant,
the one Hugging Face's gradient_checkpointing_enable() uses by default): the wrapped function's
forward runs with grad mode off, so nothing inside it is saved except its inputs; during the
backward, on the autograd thread, it runs again with grad mode on (and the forward's autocast
state) and that recomputed graph is run backwards at once (a reentrant backward)."""
from .. import _C, _disable_dynamo
from ..amp.autocast_mode import autocast
from ..autograd.function import Function
from .._C._tensor import TensorBase, alias


def detach_variable(inputs):
    out = []
    for inp in inputs:
        if not isinstance(inp, TensorBase):
            out.append(inp)
            continue
        x = alias(inp)
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        top = _C.tls.autocast[-1] if _C.tls.autocast else (False, None)
        ctx.device_autocast_kwargs = {"enabled": top[0], "dtype": top[1]}
        ctx.inputs = [None if isinstance(a, TensorBase) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, TensorBase)]
        ctx.save_for_backward(*[a for a in args if isinstance(a, TensorBase)])
        outputs = run_function(*args)
        return outputs

    @staticmethod
    def backward(ctx, *args):
        from ..autograd import backward as autograd_backward
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        detached_inputs = detach_variable(tuple(inputs))
        prev = _C.set_grad_enabled(True)
        try:
            with autocast("cuda", **ctx.device_autocast_kwargs):
                outputs = ctx.run_function(*detached_inputs)
        finally:
            _C.set_grad_enabled(prev)
        if isinstance(outputs, TensorBase):
            outputs = (outputs,)
        outputs_with_grad, args_with_grad = [], []
        for out, g in zip(outputs, args):
            if isinstance(out, TensorBase) and out.requires_grad and g is not None:
                outputs_with_grad.append(out)
                args_with_grad.append(g)
        del outputs
        autograd_backward(outputs_with_grad, args_with_grad)
        del outputs_with_grad, args_with_grad
        grads = tuple(inp.grad if isinstance(inp, TensorBase) else None for inp in detached_inputs)
        return (None, None) + grads


@_disable_dynamo
def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    """torch.utils.checkpoint.checkpoint (use_reentrant=True is the variant simulated); as in
    PyTorch, decorated with torch._disable_dynamo, so it runs under dynamo's eval_frame.py."""
    return CheckpointFunction.apply(function, preserve_rng_state, *args)
