"""simtorch/_C — SIMULATION of the native side of PyTorch (what is C++ in torch): device memory
from the fake libc10_cuda.so through libsimtorch.so (one native frame per ATen operation),
dtypes, storages freed when their last tensor dies, grad mode and autocast state per thread.
Function names here avoid the words the analyzer matches in frames (to, forward, __init__, ...):
in real PyTorch these operations are builtins and leave no Python frame."""
import ctypes
import os
import sys
import threading

SIMULATION = "SIMULATION (simtorch on the fake CUDA runtime; no GPU, no PyTorch)"
CUBLAS_WORKSPACE = 32 << 20    # the cuBLAS handle's workspace on compute capability 9.0
CUBLASLT_WORKSPACE = 1 << 20   # cuBLASLt's (addmm with a bias epilogue)


class OutOfMemoryError(RuntimeError):
    """torch.OutOfMemoryError: the caching allocator could not get memory."""


class dtype:
    """A tensor element type: its name as torch prints it and its size in bytes."""

    __slots__ = ("name", "itemsize", "is_floating_point")

    def __repr__(self):
        return "simtorch." + self.name


def _make_dtype(name, itemsize, floating):
    d = object.__new__(dtype)
    d.name, d.itemsize, d.is_floating_point = name, itemsize, floating
    return d


float32 = _make_dtype("float32", 4, True)
float16 = _make_dtype("float16", 2, True)
bfloat16 = _make_dtype("bfloat16", 2, True)
float64 = _make_dtype("float64", 8, True)
int64 = _make_dtype("int64", 8, False)
int32 = _make_dtype("int32", 4, False)
uint8 = _make_dtype("uint8", 1, False)
bool_ = _make_dtype("bool", 1, False)


def promote_types(*dts):
    """The result type of an operation on tensors of these types (torch's promotion)."""
    fl = [d for d in dts if d.is_floating_point]
    if not fl:
        return max(dts, key=lambda d: d.itemsize)
    if float64 in fl:
        return float64
    if float32 in fl or (float16 in fl and bfloat16 in fl):
        return float32
    return fl[0]


# ---- the library ------------------------------------------------------------------------------
_lib = None
_state = {"allocator": "native"}


def _paths():
    here = os.path.dirname(os.path.abspath(__file__))
    lib = os.environ.get("SIMTORCH_LIB") or os.path.join(here, "..", "..", "..", "..", "build",
                                                         "examples", "libsimtorch.so")
    c10 = os.environ.get("SIMTORCH_C10") or os.path.join(os.path.dirname(lib), "..", "fakecuda",
                                                         "c10", "cda", "libc10_cuda.so")
    return lib, os.path.normpath(c10)


def lazy_init():
    """torch.cuda's lazy initialisation: loads libsimtorch.so ($SIMTORCH_LIB) and the fake
    libc10_cuda.so ($SIMTORCH_C10, else beside the fake CUDA runtime), creates the context.
    Exits 2 with a message when a library is missing (build them with `make progs fake`)."""
    global _lib
    if _lib is not None:
        return _lib
    lib_path, c10_path = _paths()
    try:
        lib = ctypes.CDLL(lib_path)
    except OSError as e:
        print(f"simtorch: cannot load {lib_path}: {e} (run `make progs fake`, or set SIMTORCH_LIB)",
              file=sys.stderr)
        sys.exit(2)
    u64 = ctypes.c_uint64
    lib.sim_init.argtypes, lib.sim_init.restype = [ctypes.c_char_p], ctypes.c_int
    lib.sim_alloc.argtypes, lib.sim_alloc.restype = [u64], u64
    lib.sim_free.argtypes, lib.sim_free.restype = [u64], None
    lib.sim_empty_cache.argtypes, lib.sim_empty_cache.restype = [], None
    lib.sim_stats.argtypes, lib.sim_stats.restype = [ctypes.POINTER(u64)], ctypes.c_char_p
    lib.sim_error.argtypes, lib.sim_error.restype = [], ctypes.c_char_p
    lib.sim_host_alloc.argtypes, lib.sim_host_alloc.restype = [u64], u64
    lib.sim_mem_get_info.argtypes, lib.sim_mem_get_info.restype = [ctypes.POINTER(u64)], ctypes.c_int
    lib.sim_backward.argtypes, lib.sim_backward.restype = [ctypes.c_void_p], ctypes.c_int
    err = lib.sim_init(c10_path.encode())
    if err == -1:
        print(f"simtorch: {lib.sim_error().decode(errors='replace')} (run `make fake`, or set "
              "SIMTORCH_C10)", file=sys.stderr)
        sys.exit(2)
    if err:
        raise RuntimeError(f"simulated CUDA initialisation failed with error {err}")
    _lib = lib
    for name, symbol in (("\0blas", "_ZN2at4cuda24getCurrentCUDABlasHandleEv"),
                         ("\0blaslt", "_ZN2at4cuda22getCUDABlasLtWorkspaceEv")):
        fn = lib[symbol]  # the workspaces' native frames (BlasHandle, BlasLtWorkspace)
        fn.argtypes, fn.restype = [ctypes.c_uint64], ctypes.c_uint64
        _ops[name] = fn
    return lib


_ops = {}


def _op_fn(op):
    """The native entry of ATen operation `op` (at::_ops::<op>::call), sim_alloc if none."""
    fn = _ops.get(op)
    if fn is None:
        lib = lazy_init()
        try:
            fn = lib["_ZN2at4_ops%d%s4callEm" % (len(op), op)]
        except AttributeError:
            fn = lib.sim_alloc
        fn.argtypes, fn.restype = [ctypes.c_uint64], ctypes.c_uint64
        _ops[op] = fn
    return fn


def oom_error():
    return OutOfMemoryError(lazy_init().sim_error().decode(errors="replace"))


def device_alloc(op, nbytes):
    """nbytes of device memory from the caching allocator, under operation op's native frame.
    Raises OutOfMemoryError when the allocator has none."""
    p = _op_fn(op)(int(nbytes))
    if not p:
        raise oom_error()
    return p


class Storage:
    """A tensor's memory: freed (returned to the caching allocator) when no tensor holds it."""

    __slots__ = ("ptr", "nbytes", "device")

    def __del__(self):
        if self.ptr and _lib is not None:
            _lib.sim_free(self.ptr)
            self.ptr = 0


def new_storage(nbytes, device, op):
    """A storage of nbytes on device ('cuda' allocates under op's frame; 'cpu' holds nothing)."""
    s = object.__new__(Storage)
    s.ptr, s.nbytes, s.device = 0, nbytes, device
    if device == "cuda" and nbytes:  # an empty tensor asks the allocator for nothing
        s.ptr = device_alloc(op, nbytes)
    return s


def memory_stats():
    """The fake allocator's counters under PyTorch's memory_stats() names, and its backend."""
    a = (ctypes.c_uint64 * 12)()
    backend = lazy_init().sim_stats(a).decode()
    keys = ("requested_bytes.all.current", "requested_bytes.all.peak",
            "allocated_bytes.all.current", "allocated_bytes.all.peak",
            "reserved_bytes.all.current", "reserved_bytes.all.peak", "num_device_alloc",
            "num_device_free", "num_alloc_retries", "num_ooms", "num_allocs", "num_frees")
    st = dict(zip(keys, list(a)))
    st["backend"] = backend
    return st


def empty_cache():
    lazy_init().sim_empty_cache()


def mem_get_info():
    a = (ctypes.c_uint64 * 2)()
    lazy_init().sim_mem_get_info(a)
    return a[0], a[1]


_pinned_free = {}  # block size -> pinned host blocks no tensor holds


class PinnedStorage(Storage):
    """Host memory from PyTorch's caching host allocator: cudaHostAlloc'd blocks (sizes rounded
    up to a power of two), returned to the cache when their tensor dies, reused."""

    __slots__ = ("host", "block")

    def __del__(self):
        _pinned_free.setdefault(self.block, []).append(self.host)


def pinned_storage(nbytes):
    block = 1 << max(int(nbytes) - 1, 1).bit_length()
    free = _pinned_free.get(block)
    s = object.__new__(PinnedStorage)
    s.ptr, s.nbytes, s.device, s.block = 0, nbytes, "cpu", block
    s.host = free.pop() if free else lazy_init().sim_host_alloc(block)
    return s


# ---- per-thread state: grad mode, autocast, cuBLAS workspaces ---------------------------------
class _ThreadState(threading.local):
    def __init__(self):  # noqa: D401 — runs once per thread, never on an allocation path
        self.grad = True
        self.autocast = []      # stack of (enabled, dtype)
        self.nesting = 0        # autocast contexts entered (enabled or not)
        self.cache = {}         # autocast's casts of leaf weights: id(weight) -> (weight, cast)


tls = _ThreadState()
# cuBLAS workspaces by OS thread, kept for the thread's life (the autograd thread runs Python
# only inside callbacks, whose thread state, and threading.local data, end with each call)
_workspaces = {}


def grad_enabled():
    return tls.grad


def set_grad_enabled(mode):
    prev, tls.grad = tls.grad, bool(mode)
    return prev


def autocast_dtype():
    """The active autocast 16-bit type, or None."""
    if tls.autocast and tls.autocast[-1][0]:
        return tls.autocast[-1][1]
    return None


def gemm_workspaces(lt=False):
    """A thread's first matrix product gets the cuBLAS handle's workspace (its first addmm,
    cuBLASLt's too), allocated after the product's output, kept for the thread's life."""
    ws = _workspaces.setdefault(threading.get_ident(), {})
    if "blas" not in ws:
        ws["blas"] = new_storage(CUBLAS_WORKSPACE, "cuda", "\0blas")
    if lt and "blaslt" not in ws:
        ws["blaslt"] = new_storage(CUBLASLT_WORKSPACE, "cuda", "\0blaslt")
