"""simtorch/utils/_contextlib.py — SIMULATION of torch/utils/_contextlib.py: a context manager
used as a decorator (no_grad() on a function) runs the function inside it; the wrapper's frame
is named as torch's (context_decorator.<locals>.decorate_context)."""
import functools


def context_decorator(ctx_factory, func):
    """func wrapped so that each call runs inside a fresh ctx_factory() context."""

    @functools.wraps(func)
    def decorate_context(*args, **kwargs):
        with ctx_factory():
            return func(*args, **kwargs)

    return decorate_context


class _DecoratorContextManager:
    """Base of no_grad / enable_grad: usable with `with` and as a decorator."""

    def __call__(self, func):
        return context_decorator(type(self), func)
