"""simtorch — a SIMULATION of the parts of PyTorch a nanoGPT training step uses, for vramtrace's
no-GPU demo: tensors hold only sizes; their device memory comes from libsimtorch.so (an emulated
caching allocator on the fake CUDA runtime). Not PyTorch; nothing is computed."""
import ctypes
import os
import sys

SIMULATION = "SIMULATION (simtorch on the fake CUDA runtime; no GPU, no PyTorch)"
DTYPE_SIZE = {"float32": 4, "float16": 2, "bfloat16": 2, "int64": 8, "bool": 1, "uint8": 1}
CUBLAS_WORKSPACE = 8519680  # PyTorch's default ":4096:2:16:8" = 8 MiB + 128 KiB


class OutOfMemoryError(RuntimeError):
    """Raised like torch.OutOfMemoryError when the emulated allocator cannot get memory."""


_lib = None
_state = {"grad": True, "autocast": None, "tape": [], "uid": 0, "mode": "caching"}
_persistent = []  # cuBLAS workspaces: never freed, like PyTorch's


def _load_lib():
    """Loads libsimtorch.so ($SIMTORCH_LIB, else build/examples/ beside the repo). Returns the
    CDLL; exits 2 with a message when it is missing (build it with `make progs`)."""
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.environ.get("SIMTORCH_LIB") or os.path.join(here, "..", "..", "..", "build",
                                                          "examples", "libsimtorch.so")
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        print(f"simtorch: cannot load {path}: {e} (run `make progs`, or set SIMTORCH_LIB)",
              file=sys.stderr)
        sys.exit(2)
    u64, i64 = ctypes.c_uint64, ctypes.c_int64
    lib.sim_init.argtypes, lib.sim_init.restype = [ctypes.c_int], ctypes.c_int
    lib.sim_alloc.argtypes, lib.sim_alloc.restype = [u64], u64
    lib.sim_free.argtypes, lib.sim_free.restype = [u64], None
    lib.sim_host_alloc.argtypes, lib.sim_host_alloc.restype = [u64], u64
    lib.sim_mem_get_info.argtypes, lib.sim_mem_get_info.restype = [ctypes.POINTER(u64)], ctypes.c_int
    lib.sim_stats.argtypes, lib.sim_stats.restype = [ctypes.POINTER(u64)], None
    lib.sim_error.argtypes, lib.sim_error.restype = [], ctypes.c_char_p
    lib.sim_backward.argtypes = [ctypes.POINTER(i64), i64, ctypes.POINTER(u64)]
    lib.sim_backward.restype = ctypes.c_int
    return lib


def init(allocator):
    """Starts the simulated CUDA: allocator 'caching' (segments) or 'async' (cudaMallocAsync per
    tensor). Creates the context like torch's lazy init. Raises RuntimeError on a CUDA error."""
    global _lib
    _lib = _load_lib()
    _state["mode"] = allocator
    err = _lib.sim_init(1 if allocator == "async" else 0)
    if err:
        raise RuntimeError(f"simulated CUDA initialisation failed with error {err}")


def _oom():
    return OutOfMemoryError(_lib.sim_error().decode(errors="replace"))


class Tensor:
    """A device tensor: shape, dtype and the address of its memory (freed when the object dies,
    unless the autograd thread freed it first: ptr 0). `saved` counts graph nodes keeping it."""

    __slots__ = ("shape", "dtype", "ptr", "nbytes", "uid", "saved", "requires_grad", "grad")

    def __init__(self, shape, dtype="float32", device="cuda"):
        self.shape = tuple(shape)
        self.dtype = dtype
        n = 1
        for s in self.shape:
            n *= s
        self.nbytes = n * DTYPE_SIZE[dtype]
        self.ptr = 0
        self.saved = 0
        self.requires_grad = False
        self.grad = None
        _state["uid"] += 1
        self.uid = _state["uid"]
        if device == "cuda":
            self.ptr = _lib.sim_alloc(self.nbytes)
            if not self.ptr:
                raise _oom()

    @classmethod
    def adopt(cls, ptr, shape, dtype):
        """A tensor around memory the autograd thread allocated (ownership moves to it)."""
        t = cls(shape, dtype, device="cpu")
        t.ptr = ptr
        return t

    def backward(self):
        """loss.backward(): see simtorch.autograd.backward."""
        from .autograd import backward
        backward(self)

    def numel(self):
        return self.nbytes // DTYPE_SIZE[self.dtype]

    def item(self):
        return 0.0  # a simulation computes nothing

    def __del__(self):
        if self.ptr and _lib is not None:
            _lib.sim_free(self.ptr)
            self.ptr = 0


class Parameter(Tensor):
    """A model weight: built on the CPU, moved to the device by Module.to('cuda')."""

    __slots__ = ("name",)

    def __init__(self, shape, name=""):
        super().__init__(shape, "float32", device="cpu")
        self.requires_grad = True
        self.name = name  # never None: autograd tells parameters from activations by it

    def to_device(self):
        self.ptr = _lib.sim_alloc(self.nbytes)
        if not self.ptr:
            raise _oom()


class no_grad:
    """Context manager and decorator: no graph is recorded, nothing saved for backward."""

    def __enter__(self):
        self.prev = _state["grad"]
        _state["grad"] = False

    def __exit__(self, *exc):
        _state["grad"] = self.prev

    def __call__(self, fn):
        def wrapper(*a, **k):
            with no_grad():
                return fn(*a, **k)
        wrapper.__name__, wrapper.__qualname__ = fn.__name__, fn.__qualname__
        return wrapper


class autocast:
    """torch.amp.autocast: matmuls run in 16 bits on 16-bit copies of their inputs/weights."""

    def __init__(self, dtype):
        self.dtype = dtype

    def __enter__(self):
        self.prev = _state["autocast"]
        _state["autocast"] = self.dtype

    def __exit__(self, *exc):
        _state["autocast"] = self.prev


def grad_enabled():
    return _state["grad"]


def autocast_dtype():
    return _state["autocast"]


def cublas_workspace():
    """The per-thread cuBLAS workspace, allocated at the main thread's first matmul."""
    if not _persistent:
        _persistent.append(Tensor((CUBLAS_WORKSPACE,), "uint8"))


def memory_stats():
    """The simulated allocator's counters, with PyTorch's memory_stats() names."""
    a = (ctypes.c_uint64 * 8)()
    _lib.sim_stats(a)
    keys = ("allocated_bytes.all.current", "allocated_bytes.all.peak", "reserved_bytes.all.current",
            "reserved_bytes.all.peak", "num_device_alloc", "num_device_free", "num_alloc_retries",
            "num_ooms")
    return dict(zip(keys, list(a)))


def mem_get_info():
    """(free, total) bytes from cudaMemGetInfo (emulated card when vramtrace --card)."""
    a = (ctypes.c_uint64 * 2)()
    _lib.sim_mem_get_info(a)
    return a[0], a[1]


def host_alloc(nbytes):
    """Pinned host memory (cudaHostAlloc), as pin_memory() gets it."""
    return _lib.sim_host_alloc(nbytes)
