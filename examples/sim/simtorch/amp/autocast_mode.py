"""simtorch/amp/autocast_mode.py — SIMULATION of torch.autocast: inside an enabled region,
matrix products, convolutions and attention run in 16 bits on 16-bit copies of their inputs
(a weight's copy is made once per region: the cache), some operations in fp32; leaving the
outermost region (enabled or not) clears the cache, freeing copies no graph keeps. Per thread."""
from .. import _C


class autocast:
    def __init__(self, device_type="cuda", dtype=None, enabled=True, cache_enabled=None):
        self.device_type = device_type
        self.fast_dtype = dtype or _C.bfloat16
        self._enabled = bool(enabled) and device_type == "cuda"

    def __enter__(self):
        _C.tls.autocast.append((self._enabled, self.fast_dtype))
        _C.tls.nesting += 1
        return self

    def __exit__(self, *exc):
        _C.tls.autocast.pop()
        _C.tls.nesting -= 1
        if _C.tls.nesting == 0:
            # the region's copies of weights (trainable and frozen): the most of any region
            _C.tls.copy_bytes_max = max(getattr(_C.tls, "copy_bytes_max", 0),
                                        getattr(_C.tls, "copy_bytes", 0))
            _C.tls.copy_bytes = 0
            _C.tls.cache.clear()
        return False

    def __call__(self, func):
        from ..utils._contextlib import context_decorator
        return context_decorator(lambda: autocast(self.device_type, self.fast_dtype,
                                                  self._enabled), func)
