"""simtorch/cuda — SIMULATION of torch.cuda: the simulated device and the caching allocator's
counters (memory_stats, max_memory_allocated, ...) read from the fake libc10_cuda.so."""
from .. import _C
from .._C import OutOfMemoryError  # noqa: F401


def is_available():
    return True


def device_count():
    return 1


def init():
    _C.lazy_init()


def synchronize():
    return None


def get_device_name(device=None):
    return "simulated (fake CUDA runtime)"


def memory_stats(device=None):
    return _C.memory_stats()


def get_allocator_backend():
    b = _C.memory_stats()["backend"]
    return "cudaMallocAsync" if b == "cudaMallocAsync" else "native"


def max_memory_allocated(device=None):
    return _C.memory_stats()["allocated_bytes.all.peak"]


def max_memory_reserved(device=None):
    return _C.memory_stats()["reserved_bytes.all.peak"]


def memory_allocated(device=None):
    return _C.memory_stats()["allocated_bytes.all.current"]


def memory_reserved(device=None):
    return _C.memory_stats()["reserved_bytes.all.current"]


def empty_cache():
    """The caching allocator's unused cached segments released to the device."""
    _C.empty_cache()


def mem_get_info(device=None):
    return _C.mem_get_info()
