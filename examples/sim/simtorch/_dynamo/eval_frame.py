"""simtorch/_dynamo/eval_frame.py — SIMULATION of torch._dynamo.disable(fn): as in PyTorch, the
function is called through a wrapper `_fn` defined in this file, so an eager run's stacks hold a
frame of torch/_dynamo/eval_frame.py without anything being compiled (vramtrace must not take
it for torch.compile)."""
import functools


class DisableContext:
    def __call__(self, fn):
        @functools.wraps(fn)
        def _fn(*args, **kwargs):
            return fn(*args, **kwargs)

        return _fn


def disable(fn=None, recursive=True):
    return DisableContext()(fn)
