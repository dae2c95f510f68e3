"""simtorch/_tensor.py — SIMULATION of torch.Tensor: the Python class (Tensor.backward lives here,
as in torch/_tensor.py) over the native part in simtorch/_C. Operators and methods call the
simulated ATen operations; .to() and .cuda() enter the native library straight from the
caller (PyTorch's are builtins: the caller is the innermost Python frame of the copy)."""
import ctypes
import functools

from . import _C
from ._C import _aten as A
from ._C import _aten_nn as NN
from ._C import _tensor as T
from ._C._autograd import record, needs_grad
from ._C._aten import ToCopyBackward0, CloneBackward0


class Tensor(T.TensorBase):
    """A tensor: shape, strides, dtype, device memory; nothing is computed."""

    __slots__ = ()

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        from .autograd import backward
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    # arithmetic
    def __add__(self, o):
        return A.add(self, o)

    __radd__ = __add__

    def __sub__(self, o):
        return A.sub(self, o)

    def __rsub__(self, o):
        return A.add(A.neg(self), o)

    def __mul__(self, o):
        return A.mul(self, o)

    __rmul__ = __mul__

    def __truediv__(self, o):
        return A.div(self, o)

    def __rtruediv__(self, o):
        return A.mul(A.reciprocal(self), o)

    def __neg__(self):
        return A.neg(self)

    def __pow__(self, e):
        return A.pow_(self, e)

    def __matmul__(self, o):
        return NN.bmm(self, o)

    def __iadd__(self, o):
        return A.add_(self, o)

    def __getitem__(self, idx):
        return A.getitem(self, idx)

    # shape and views
    def view(self, *shape):
        return A.view(self, shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list))
                      else shape)

    def reshape(self, *shape):
        return A.reshape(self, shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list))
                         else shape)

    def transpose(self, d0, d1):
        return A.transpose(self, d0, d1)

    def permute(self, *dims):
        return A.permute(self, dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list))
                         else dims)

    def contiguous(self, memory_format=None):
        return A.contiguous(self)

    def unsqueeze(self, dim):
        return A.unsqueeze(self, dim)

    def squeeze(self, dim):
        return A.squeeze(self, dim)

    def expand(self, *shape):
        return A.expand(self, shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list))
                        else shape)

    def flatten(self, start_dim=0, end_dim=-1):
        nd = self.dim()
        s, e = start_dim % nd, end_dim % nd
        shape = self._shape[:s] + (T.numel_of(self._shape[s:e + 1]),) + self._shape[e + 1:]
        return A.reshape(self, shape)

    def unfold(self, dimension, size, step):
        return A.unfold(self, dimension, size, step)

    def split(self, size, dim=-1):
        return A.split(self, size, dim)

    def chunk(self, n, dim=-1):
        return A.split(self, self._shape[dim] // n, dim)

    def unbind(self, dim=0):
        return A.unbind(self, dim)

    # types (.float(), .half(), .bfloat16(), .long(): below, as .to())
    def type_as(self, other):
        return A.cast(self, other.dtype)

    def detach(self):
        return T.alias(self)

    def requires_grad_(self, flag=True):
        self.requires_grad = flag
        return self

    def __deepcopy__(self, memo):
        """copy.deepcopy of a leaf: a clone of its memory, its requires_grad kept (a Parameter
        stays one), once per memo, as torch's Tensor / Parameter.__deepcopy__ (a deepcopy of a
        module copies its own parameters before its children's, in its __dict__'s order)."""
        if id(self) in memo:
            return memo[id(self)]
        from .autograd.grad_mode import no_grad
        with no_grad():
            new = self.clone()
        if type(self) is not Tensor:
            new = type(self)(new, self.requires_grad)
        else:
            new.requires_grad = self.requires_grad
        memo[id(self)] = new
        return new

    def pin_memory(self):
        """A contiguous copy in pinned host memory (the caching host allocator's)."""
        return T.make(self._shape, self.dtype, _C.pinned_storage(self.numel() * self.dtype.itemsize))

    # math
    def mean(self, dim=None, keepdim=False):
        return A.mean(self, dim, keepdim)

    def var(self, dim=None, keepdim=False, unbiased=True):
        return A.var(self, dim, keepdim)

    def sum(self, dim=None, keepdim=False, dtype=None):
        return A.sum_(self, dim, keepdim, dtype)

    def pow(self, e):
        return A.pow_(self, e)

    def tanh(self):
        return A.tanh(self)

    def rsqrt(self):
        return A.rsqrt(self)

    def sqrt(self):
        return A.sqrt(self)

    def cos(self):
        return A.cos(self)

    def exp(self):
        return A.exp(self)

    def sin(self):
        return A.sin(self)

    def softmax(self, dim, dtype=None):
        return NN.softmax_op(self, dim, dtype, op="_softmax")

    def log_softmax(self, dim, dtype=None):
        return NN.softmax_op(self, dim, dtype)

    def norm(self, p=2, dim=None, keepdim=False):
        return A.norm(self, dim, keepdim)

    def ne(self, other):
        return A.compare(self, "ne_Scalar")

    def item(self):
        """The value (a synchronisation in torch; nothing is computed here: 0)."""
        return 0

    def square(self):
        return A.mul(self, self)

    def relu_(self):
        return A.relu_(self)

    def add_(self, other, alpha=1):
        return A.add_(self, other) if isinstance(other, Tensor) else self

    def new_zeros(self, shape):
        return A.zeros(shape, self.dtype, self.device)

    def new_empty(self, shape):
        return A.zeros(shape, self.dtype, self.device, op="empty_like")

    # in place on data (optimizers, initialisation): no memory, no graph
    def _inplace(self, *a, **k):
        return self

    mul_ = div_ = sub_ = zero_ = fill_ = copy_ = normal_ = uniform_ = lerp_ = _inplace
    addcmul_ = addcdiv_ = clamp_ = sqrt_ = rsqrt_ = square_ = masked_fill_ = _inplace


# ---- .to() / .cuda(): the copy is made from the caller's frame ------------------------------------
_PLANNER = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.py_object, ctypes.py_object)


def _target(arg, t):
    if arg is None:  # clone: the tensor's own device and type
        return t.device, t.dtype
    if isinstance(arg, _C.dtype):
        return t.device, arg
    name = arg if isinstance(arg, str) else getattr(arg, "type", str(arg))
    return ("cuda" if name.startswith("cuda") else "cpu"), t.dtype


# the overload of aten::to a call dispatches to (libsimtorch.c's SIM_TO_*), as PyTorch's binding
# picks it: a device alone is a TensorOptions (to_dtype_layout), a dtype alone to_dtype
_TO_LAYOUT, _TO_DTYPE = 0, 1


def _plan_copy(t, arg):
    """Planner callback: the bytes t.to(arg) allocates on the device, times 4, plus the overload
    (_TO_*; -1: none, t itself; -3: a host copy; -2: an error, kept for the caller)."""
    try:
        device, dtype = _target(arg, t)
        _C.tls.copy_plan = (device, dtype)
        if device == t.device and dtype == t.dtype and arg is not None:
            return -1
        if device == "cpu":
            return -3
        kind = _TO_DTYPE if isinstance(arg, _C.dtype) else _TO_LAYOUT
        return T.numel_of(t._shape) * dtype.itemsize * 4 + kind
    except BaseException as e:  # noqa: BLE001 — raised by the caller's _copy_result
        _C.tls.copy_error = e
        return -2


_planner_ptr = _PLANNER(_plan_copy)


def _copy_result(result, func, args):
    """The Tensor of a .to(): itself, a host copy, or the device copy at address result."""
    t = args[0]
    if result == 1:
        return t
    if result == 2:
        raise _C.tls.__dict__.pop("copy_error", RuntimeError("simtorch: .to() failed"))
    if result == 0:
        raise _C.oom_error()
    device, dtype = _C.tls.copy_plan
    st = object.__new__(_C.Storage)
    st.ptr, st.nbytes, st.device = (result if result != 3 else 0), t.numel() * dtype.itemsize, device
    out = T.make(t._shape, dtype, st)
    if needs_grad(t) and dtype.is_floating_point:
        record(CloneBackward0 if args[1] is None else ToCopyBackward0, [t], [out])
    return out


_to_entry = None
_clone_entry = None


def _entry():
    global _to_entry
    if _to_entry is None:
        lib = _C.lazy_init()
        lib.sim_set_planner.argtypes, lib.sim_set_planner.restype = [ctypes.c_void_p], None
        lib.sim_set_planner(ctypes.cast(_planner_ptr, ctypes.c_void_p))
        fn = lib["_ZN5torch8autograd14THPVariable_toEv"]
        fn.argtypes, fn.restype = [ctypes.py_object, ctypes.py_object], ctypes.c_uint64
        fn.errcheck = _copy_result
        _to_entry = fn
    return _to_entry


def _clone_fn():
    global _clone_entry
    if _clone_entry is None:
        _entry()  # (the planner set)
        fn = _C.lazy_init()["_ZN2at6native5cloneEv"]
        fn.argtypes, fn.restype = [ctypes.py_object, ctypes.py_object], ctypes.c_uint64
        fn.errcheck = _copy_result
        _clone_entry = fn
    return _clone_entry


def _bound_clone(self):
    """Tensor.clone: enters the native library directly, as .to() does."""
    return functools.partial(_clone_fn(), self, None)


def _bound_copy(self):
    """Tensor.to: a callable that enters the native library directly (one argument: a device
    or a dtype)."""
    return functools.partial(_entry(), self)


def _bound_cuda(self):
    return functools.partial(_entry(), self, "cuda")


def _bound_cpu(self):
    return functools.partial(_entry(), self, "cpu")


def _bound_dtype(dtype):
    """Tensor.float() / .half() / .bfloat16() / .long(): .to(dtype), entering the native library
    straight from the caller as torch's builtins do (a cast in a training loop's own line has that
    line for its innermost Python frame, not one of simtorch's)."""
    return property(lambda self: functools.partial(_entry(), self, dtype))


Tensor.to = property(_bound_copy)
Tensor.float = _bound_dtype(_C.float32)
Tensor.half = _bound_dtype(_C.float16)
Tensor.bfloat16 = _bound_dtype(_C.bfloat16)
Tensor.long = _bound_dtype(_C.int64)
Tensor.cuda = property(_bound_cuda)
Tensor.cpu = property(_bound_cpu)
Tensor.clone = property(_bound_clone)
T.TENSOR_CLASS = Tensor
