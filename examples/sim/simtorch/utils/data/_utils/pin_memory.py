"""simtorch/utils/data/_utils/pin_memory.py — SIMULATION of the DataLoader's pinning: every
tensor of a batch copied into pinned host memory (the caching host allocator's blocks)."""
from ...._C._tensor import TensorBase


def pin_memory(data, device=None):
    if isinstance(data, TensorBase):
        return data.pin_memory()
    if isinstance(data, dict):
        return type(data)({k: pin_memory(v, device) for k, v in data.items()})
    if isinstance(data, (list, tuple)):
        return type(data)(pin_memory(v, device) for v in data)
    return data
