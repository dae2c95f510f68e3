"""simtorch/_C/_aten.py — SIMULATION of ATen's tensor operations (casts, elementwise math with
broadcasting and type promotion, reductions, views, creation, cat/stack/split, indexing,
autocast's casting policies): each allocates its outputs with PyTorch's shapes and dtypes under
the operation's native frame and records the backward node, saving what that node reads.
Nothing is computed. Views share memory; in-place operations allocate nothing."""
from . import float32, int64, bool_, promote_types, autocast_dtype, tls, gemm_workspaces
from ._tensor import TensorBase, empty, make, like_strides, broadcast_shapes
from ._autograd import Node, record, needs_grad, save


# ---- casts and copies ---------------------------------------------------------------------------
class ToCopyBackward0(Node):
    __slots__ = ()

    def apply(self, grads):
        return [grads[0]]  # the engine casts it back to the input's type


def cast(t, dtype, device=None, op="_to_copy"):
    """t.to(dtype / device): a copy keeping a dense layout; nothing when already so."""
    device = device or t.device
    if t.dtype == dtype and t.device == device:
        return t
    out = empty(t._shape, dtype, device, op, None if t.is_contiguous() else
                like_strides(t._shape, t._stride))
    if needs_grad(t) and dtype.is_floating_point:
        record(ToCopyBackward0, [t], [out])
    return out


class CloneBackward0(Node):
    __slots__ = ()

    def apply(self, grads):
        return [grads[0]]


def clone(t, op="clone"):
    out = empty(t._shape, t.dtype, t.device, op)
    if needs_grad(t):
        record(CloneBackward0, [t], [out])
    return out


def contiguous(t):
    return t if t.is_contiguous() else clone(t)


# ---- autocast's policies (the dispatcher's Autocast key) ----------------------------------------
def autocast_cast(t, dtype, op="_to_copy"):
    """One input's cast under autocast: leaf weights that need a gradient are cast once per
    autocast region (the cache, cleared when the outermost region exits)."""
    if not isinstance(t, TensorBase) or not t.dtype.is_floating_point or t.dtype == dtype \
            or t.device != "cuda":
        return t
    cacheable = dtype != float32 and t.dtype == float32 and t.requires_grad and \
        t.grad_fn is None and t._base is None
    if cacheable:
        hit = tls.cache.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
    out = cast(t, dtype, op=op)
    if cacheable:
        tls.cache[id(t)] = (t, out)
    if dtype != float32 and t.dtype == float32 and type(t).__name__ == "Parameter":
        # a weight's copy (a frozen one too: not cached, made at each use): the truth line's
        # autocast_copy_bytes (autocast_mode.py)
        tls.copy_bytes = getattr(tls, "copy_bytes", 0) + out.numel() * out.element_size()
    return out


def _cast_all(ts, dtype, op="_to_copy"):
    """Casts every argument, last first (the order a C++ call's arguments are evaluated in
    PyTorch's autocast wrappers built by GCC: linear casts its weight before its input); op: the
    native frame of the casts."""
    out = [autocast_cast(t, dtype, op) for t in reversed(ts)]
    return tuple(reversed(out))


def ac_lower(*ts, op="_to_copy"):
    """Operations autocast runs in 16 bits (matmul, linear, conv, attention); op: the native
    frame of the casts (scaled_dot_product_attention's: _to_copy under the op's own frame)."""
    dt = autocast_dtype()
    return ts if dt is None else _cast_all(ts, dt, op)


def ac_fp32(*ts):
    """Operations autocast runs in fp32 (pow, rsqrt, nll_loss, layer_norm, softmax w/o dtype)."""
    if autocast_dtype() is None:
        return ts
    return _cast_all(ts, float32)


def ac_promote(*ts):
    """Operations autocast runs in the widest input type (cat, stack, addcmul)."""
    if autocast_dtype() is None:
        return ts
    fl = [t.dtype for t in ts if isinstance(t, TensorBase) and t.dtype.is_floating_point]
    if not fl:
        return ts
    return _cast_all(ts, promote_types(*fl))


# ---- elementwise ----------------------------------------------------------------------------------
def _meta(x):
    return (x._shape, x.dtype) if isinstance(x, TensorBase) else ((), None)


def _result_type(a, b):
    ta, tb = isinstance(a, TensorBase), isinstance(b, TensorBase)
    if ta and tb:
        if a.dim() == 0 and b.dim() > 0 and a.dtype.is_floating_point == b.dtype.is_floating_point:
            return b.dtype
        if b.dim() == 0 and a.dim() > 0 and a.dtype.is_floating_point == b.dtype.is_floating_point:
            return a.dtype
        return promote_types(a.dtype, b.dtype)
    t, s = (a, b) if ta else (b, a)
    if isinstance(s, float) and not t.dtype.is_floating_point:
        return float32
    return t.dtype


def _device(*xs):
    for x in xs:
        if isinstance(x, TensorBase) and x.device == "cuda":
            return "cuda"
    return "cpu"


class BinaryBackward(Node):
    """d(a op b): per input that needs it, one gradient the size of the output (the engine
    reduces broadcasts and casts); info = (op, a_needs_b, b_needs_a)."""

    __slots__ = ()

    def apply(self, grads):
        g = grads[0]
        op, pass_a, pass_b = self.info
        outs = []
        for i, passthrough in ((0, pass_a), (1, pass_b)):
            if self.next[i] is None:
                outs.append(None)
            elif passthrough:
                outs.append(g)
            else:
                outs.append(empty(g._shape, g.dtype, g.device, op))
        return outs


def _binary(a, b, op, grad_op, pass_a, pass_b, save_a=False, save_b=False):
    shape = broadcast_shapes(_meta(a)[0], _meta(b)[0])
    out = empty(shape, _result_type(a, b), _device(a, b), op)
    if needs_grad(a, b):
        ga = isinstance(a, TensorBase) and a.requires_grad
        gb = isinstance(b, TensorBase) and b.requires_grad
        saved = (save(b) if (save_b and ga) else None, save(a) if (save_a and gb) else None)
        record(BinaryBackward, [a, b], [out], saved, (grad_op, pass_a, pass_b))
    return out


def add(a, b, alpha=1):
    return _binary(a, b, "add_Tensor", "mul_Tensor", True, alpha == 1)


def sub(a, b):
    return _binary(a, b, "sub_Tensor", "neg", True, False)


def mul(a, b):
    scalar = not isinstance(a, TensorBase) or not isinstance(b, TensorBase)
    return _binary(a, b, "mul_Scalar" if scalar else "mul_Tensor", "mul_Tensor", False, False,
                   save_a=not scalar, save_b=not scalar)


def div(a, b):
    tensor_b = isinstance(b, TensorBase)
    return _binary(a, b, "div_Tensor", "div_Tensor", False, False, save_a=tensor_b,
                   save_b=tensor_b)


class UnaryBackward(Node):
    """d f(x): one new gradient the size of x (info = the backward op's name, or a tuple:
    scratch tensors of that size made first, freed once the last op's result exists)."""

    __slots__ = ()

    def apply(self, grads):
        g = grads[0]
        ops = self.info if isinstance(self.info, tuple) else (self.info,)
        scratch = [empty(g._shape, g.dtype, g.device, op) for op in ops[:-1]]
        out = empty(g._shape, g.dtype, g.device, ops[-1])
        del scratch
        return [out]


def unary(x, op, grad_op, save_input=False, save_output=False, dtype=None):
    out = empty(x._shape, dtype or x.dtype, x.device, op)
    if needs_grad(x):
        record(UnaryBackward, [x], [out], (save(x) if save_input else None,
                                           save(out) if save_output else None), grad_op)
    return out


def neg(x):
    return unary(x, "neg", "neg")


def pow_(x, exponent):
    (x_,) = ac_fp32(x)
    # grad * e * x^(e-1): the power and its scaled copy are scratch
    return unary(x_, "pow_Tensor_Scalar", ("pow_Tensor_Scalar", "mul_Scalar", "mul_Tensor"),
                 save_input=True)


def rsqrt(x):
    (x_,) = ac_fp32(x)
    # -0.5 * grad * result^3
    return unary(x_, "rsqrt", ("pow_Tensor_Scalar", "mul_Scalar", "mul_Tensor"), save_output=True)


def sqrt(x):
    return unary(x, "sqrt", "div_Tensor", save_output=True)


def tanh(x):
    return unary(x, "tanh", "tanh_backward", save_output=True)


def cos(x):
    return unary(x, "cos", "mul_Tensor", save_input=True)


def sin(x):
    return unary(x, "sin", "mul_Tensor", save_input=True)


def exp(x):
    return unary(x, "exp", "mul_Tensor", save_output=True)


def reciprocal(x):
    return unary(x, "reciprocal", "mul_Tensor", save_output=True)


def clamp(x):
    return unary(x, "clamp", "mul_Tensor", save_input=True)


# ---- in place ------------------------------------------------------------------------------------
class InplaceAddBackward(Node):
    __slots__ = ()

    def apply(self, grads):
        g = grads[0]
        return [g, g]


def add_(a, b):
    """a += b: no memory; a's history now goes through the add."""
    if needs_grad(a, b):
        record(InplaceAddBackward, [a, b], [a])
    return a


def relu_(x):
    """x.relu_(): no memory; the backward reads the result (x itself)."""
    if needs_grad(x):
        record(UnaryBackward, [x], [x], (None, save(x)), "threshold_backward")
    return x


# ---- reductions ------------------------------------------------------------------------------------
def _reduced(shape, dims, keepdim):
    dims = [d % len(shape) for d in dims]
    return tuple(1 if i in dims else s for i, s in enumerate(shape) if keepdim or i not in dims)


class SumBackward(Node):
    __slots__ = ()

    def apply(self, grads):
        g = grads[0]
        shape, dtype = self.meta[0]
        v = make(shape, g.dtype, g._storage, [0] * len(shape), g._offset)  # an expanded view
        v._base = g
        return [v]


class MeanBackward(Node):
    __slots__ = ()

    def apply(self, grads):
        g = grads[0]
        return [empty(self.meta[0][0], g.dtype, g.device, "div_Tensor")]


def sum_(x, dims=None, keepdim=False, dtype=None):
    dims = range(x.dim()) if dims is None else ([dims] if isinstance(dims, int) else dims)
    out = empty(_reduced(x._shape, dims, keepdim), dtype or x.dtype, x.device, "sum_dim_IntList")
    if needs_grad(x):
        record(SumBackward, [x], [out])
    return out


def mean(x, dims=None, keepdim=False):
    dims = range(x.dim()) if dims is None else ([dims] if isinstance(dims, int) else dims)
    out = empty(_reduced(x._shape, dims, keepdim), x.dtype, x.device, "mean_dim")
    if needs_grad(x):
        record(MeanBackward, [x], [out])
    return out


def var(x, dims=None, keepdim=False):
    """torch.var (var_correction): the reduced output; its backward a gradient of x's size."""
    dims = range(x.dim()) if dims is None else ([dims] if isinstance(dims, int) else dims)
    out = empty(_reduced(x._shape, dims, keepdim), x.dtype, x.device, "var_correction")
    if needs_grad(x):
        record(UnaryBackward, [x], [out], (save(x), None), "mul_Tensor")
    return out


def compare(x, op="ne_Scalar"):
    """x.ne(value) and the like: a bool tensor of x's shape, outside any graph."""
    return empty(x._shape, bool_, x.device, op)


def sum_to(g, shape):
    """The engine's reduction of a broadcast gradient to its input's shape."""
    return empty(shape, g.dtype, g.device, "sum_dim_IntList")


def norm(x, dims=None, keepdim=False, op="linalg_vector_norm"):
    dims = range(x.dim()) if dims is None else ([dims] if isinstance(dims, int) else dims)
    return empty(_reduced(x._shape, dims, keepdim), float32 if not x.dtype.is_floating_point
                 else x.dtype, x.device, op)


# ---- creation ----------------------------------------------------------------------------------------
def zeros(shape, dtype=float32, device="cpu", op="zeros"):
    return empty(shape, dtype, device, op)


def full(shape, dtype=float32, device="cpu"):
    return empty(shape, dtype, device, "full")


def like(t, op="empty_like", dtype=None):
    return empty(t._shape, dtype or t.dtype, t.device, op)


def arange(n, device="cpu", dtype=int64):
    return empty((n,), dtype, device, "arange")


def randint(shape, device="cpu"):
    return empty(shape, int64, device, "randint_low")


def randn(shape, device="cpu", dtype=float32):
    return empty(shape, dtype, device, "randn")


def foreach(ts, op):
    """A _foreach_* operation that returns new tensors (one per input, same size)."""
    return [empty(t._shape, t.dtype, t.device, op) for t in ts]


def gemm_out(shape, dtype, device, op):
    """A matrix product's output, then the thread's cuBLAS workspaces (first product only)."""
    out = empty(shape, dtype, device, op)
    if device == "cuda":
        gemm_workspaces(lt=op == "addmm")
    return out




# views, indexing, joins (their own file; they use clone() from here)
from ._aten_views import (view, reshape, permute, transpose, unsqueeze, squeeze,  # noqa: E402
                          expand, narrow, select, getitem, split, unbind, cat, stack, pad,
                          index, unfold)
