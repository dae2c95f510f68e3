"""simtorch/_C/_aten_views.py — SIMULATION of ATen's views and joins: view, reshape (a copy when
the layout cannot be viewed), permute/transpose, (un)squeeze, expand, narrow/select/indexing,
split/unbind (one multi-output node), cat, stack, constant and replication pad, unfold. Views share their input's memory;
their backward nodes allocate only what PyTorch's do (a reshape's copy, a slice's zeroed input,
an expand's sum, the join of split pieces)."""
from . import promote_types
from ._tensor import TensorBase, empty, view_of, contiguous_strides, view_strides, infer_shape
from ._autograd import Node, record, needs_grad
from ._aten import clone, _device


class ViewBackward(Node):
    """Gradient of a view: the same memory seen in the input's shape (a copy if it cannot)."""

    __slots__ = ()

    def apply(self, grads):
        g = grads[0]
        shape = self.meta[0][0]
        st = view_strides(g._shape, g._stride, shape)
        if st is None:
            return [empty(shape, g.dtype, g.device, "clone")]
        return [view_of(g, shape, st)]


class PermuteBackward(Node):
    __slots__ = ()

    def apply(self, grads):
        g = grads[0]
        inv = [0] * len(self.info)
        for i, d in enumerate(self.info):
            inv[d] = i
        return [view_of(g, [g._shape[i] for i in inv], [g._stride[i] for i in inv])]


class IndexBackward(Node):
    """select / slice / expand: a gradient the input's size (zeros plus the piece, or a sum)."""

    __slots__ = ()

    def apply(self, grads):
        g = grads[0]
        return [empty(self.meta[0][0], g.dtype, g.device, self.info)]


def _view_node(t, v, cls, info=None):
    if needs_grad(t):
        record(cls, [t], [v], None, info)
    return v


def view(t, shape):
    shape = infer_shape(shape, t.numel())
    st = view_strides(t._shape, t._stride, shape)
    if st is None:
        raise RuntimeError(f"view size is not compatible with input tensor's size and stride "
                           f"({t._shape} -> {shape}); use .reshape(...)")
    return _view_node(t, view_of(t, shape, st), ViewBackward)


def reshape(t, shape):
    shape = infer_shape(shape, t.numel())
    st = view_strides(t._shape, t._stride, shape)
    if st is None:
        return view(clone(t), shape)
    return _view_node(t, view_of(t, shape, st), ViewBackward)


def permute(t, dims):
    dims = [d % t.dim() for d in dims]
    v = view_of(t, [t._shape[d] for d in dims], [t._stride[d] for d in dims])
    return _view_node(t, v, PermuteBackward, dims)


def transpose(t, d0, d1):
    dims = list(range(t.dim()))
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return permute(t, dims)


def unsqueeze(t, dim):
    dim = dim % (t.dim() + 1)
    shape = list(t._shape)
    shape.insert(dim, 1)
    return _view_node(t, view_of(t, shape, contiguous_strides(shape) if t.is_contiguous() else
                                 list(t._stride[:dim]) + [1] + list(t._stride[dim:])), ViewBackward)


def squeeze(t, dim):
    dim = dim % t.dim()
    if t._shape[dim] != 1:
        return t
    shape = t._shape[:dim] + t._shape[dim + 1:]
    return _view_node(t, view_of(t, shape, t._stride[:dim] + t._stride[dim + 1:]), ViewBackward)


def expand(t, shape):
    shape = [t._shape[i - (len(shape) - t.dim())] if s == -1 else s for i, s in enumerate(shape)]
    nd = len(shape) - t.dim()
    st = [0] * nd + [0 if (t._shape[i] == 1 and shape[nd + i] != 1) else t._stride[i]
                     for i in range(t.dim())]
    return _view_node(t, view_of(t, shape, st), IndexBackward, "sum_dim_IntList")


def narrow(t, dim, start, length):
    dim = dim % t.dim()
    shape = list(t._shape)
    shape[dim] = length
    v = view_of(t, shape, t._stride, t._offset + start * t._stride[dim])
    return _view_node(t, v, IndexBackward, "slice_backward")


def select(t, dim, index):
    dim = dim % t.dim()
    index = index % t._shape[dim]
    v = view_of(t, t._shape[:dim] + t._shape[dim + 1:], t._stride[:dim] + t._stride[dim + 1:],
                t._offset + index * t._stride[dim])
    return _view_node(t, v, IndexBackward, "zeros")


def index(t, idx):
    """t[idx] with an integer index tensor (advanced indexing along dimension 0): a gathered
    copy (index_Tensor); its backward scatters into a zeroed tensor of t's size."""
    out = empty(tuple(idx._shape) + tuple(t._shape[1:]), t.dtype, _device(t, idx), "index_Tensor")
    return _view_node(t, out, IndexBackward, "zeros")


def getitem(t, idx):
    """t[...]: integers select, slices narrow, None adds a dimension, Ellipsis fills; an
    integer tensor gathers (index)."""
    if isinstance(idx, TensorBase):
        return index(t, idx)
    if not isinstance(idx, tuple):
        idx = (idx,)
    if Ellipsis in idx:
        i = idx.index(Ellipsis)
        fill = t.dim() - (len(idx) - 1 - idx.count(None))
        idx = idx[:i] + (slice(None),) * fill + idx[i + 1:]
    out, dim = t, 0
    for k in idx:
        if k is None:
            out = unsqueeze(out, dim)
            dim += 1
        elif isinstance(k, int):
            out = select(out, dim, k)
        elif isinstance(k, slice):
            start, stop, step = k.indices(out._shape[dim])
            if (start, stop, step) != (0, out._shape[dim], 1):
                out = narrow(out, dim, start, max(0, stop - start))
            dim += 1
        else:
            raise TypeError(f"simtorch: unsupported index {k!r}")
    return out


class SplitBackward(Node):
    """Gradient of split / chunk / unbind: the pieces' gradients joined (zeros for a missing
    one) into one tensor of the input's size."""

    __slots__ = ()

    def apply(self, grads):
        ref = next(g for g in grads if g is not None)
        for i, g in enumerate(grads):
            if g is None:
                grads[i] = empty(self.info[i], ref.dtype, ref.device, "zeros")
        return [empty(self.meta[0][0], ref.dtype, ref.device, "cat" if self.saved else "stack")]


def _split_node(t, pieces, joined_by_cat):
    if needs_grad(t):
        record(SplitBackward, [t], pieces, joined_by_cat, [p._shape for p in pieces])
    return pieces


def split(t, size, dim=-1):
    dim = dim % t.dim()
    sizes = [size] * (t._shape[dim] // size) if isinstance(size, int) else list(size)
    pieces, at = [], 0
    for s in sizes:
        shape = list(t._shape)
        shape[dim] = s
        pieces.append(view_of(t, shape, t._stride, t._offset + at * t._stride[dim]))
        at += s
    return tuple(_split_node(t, pieces, True))


def unbind(t, dim=0):
    dim = dim % t.dim()
    pieces = [view_of(t, t._shape[:dim] + t._shape[dim + 1:], t._stride[:dim] + t._stride[dim + 1:],
                      t._offset + i * t._stride[dim]) for i in range(t._shape[dim])]
    return tuple(_split_node(t, pieces, False))


class CatBackward(Node):
    __slots__ = ()

    def apply(self, grads):
        g = grads[0]
        dim, at, outs = self.info, 0, []
        for m in self.meta:
            shape = m[0]
            outs.append(view_of(g, shape, g._stride, g._offset + at * g._stride[dim]))
            at += shape[dim]
        return outs


def cat(tensors, dim=0):
    """torch.cat: one new tensor of the promoted type (mixed types are read as they are: no
    casts first); an empty (0,) tensor is skipped."""
    ts = list(tensors)
    dtype = promote_types(*[t.dtype for t in ts])  # an empty (0,) tensor's type counts too
    ts = [t for t in ts if t._shape != (0,)] or ts  # ... but not its shape (torch's legacy rule)
    dim = dim % ts[0].dim()
    shape = list(ts[0]._shape)
    shape[dim] = sum(t._shape[dim] for t in ts)
    out = empty(shape, dtype, _device(*ts), "cat")
    if needs_grad(*ts):
        record(CatBackward, list(ts), [out], None, dim)
    return out


class StackBackward(Node):
    __slots__ = ()

    def apply(self, grads):
        g = grads[0]
        d = self.info
        return [view_of(g, g._shape[:d] + g._shape[d + 1:], g._stride[:d] + g._stride[d + 1:],
                        g._offset + i * g._stride[d]) for i in range(len(self.meta))]


def stack(tensors, dim=0):
    ts = list(tensors)
    shape = list(ts[0]._shape)
    shape.insert(dim % (len(shape) + 1), len(ts))
    out = empty(shape, promote_types(*[t.dtype for t in ts]), _device(*ts), "stack")
    if needs_grad(*ts):
        record(StackBackward, list(ts), [out], None, dim % (len(shape)))
    return out


def pad(t, pads, value=0, mode="constant"):
    """F.pad's constant mode (pads: last dimension first); mode "replicate" of one dimension
    (nn.ReplicationPad1d: replication_pad1d, its backward a gradient of t's size)."""
    shape = list(t._shape)
    for i in range(len(pads) // 2):
        shape[-1 - i] += pads[2 * i] + pads[2 * i + 1]
    op, grad_op = (("replication_pad1d", "replication_pad1d_backward") if mode == "replicate"
                   else ("constant_pad_nd", "slice_backward"))
    out = empty(shape, t.dtype, t.device, op)
    if needs_grad(t):
        record(IndexBackward, [t], [out], None, grad_op)
    return out


def unfold(t, dim, size, step):
    """Tensor.unfold: a view of t's windows of size, every step along dim (a new last
    dimension); its backward (unfold_backward) a gradient of t's size."""
    dim = dim % t.dim()
    shape, st = list(t._shape), list(t._stride)
    shape[dim] = (t._shape[dim] - size) // step + 1
    st[dim] = t._stride[dim] * step
    v = view_of(t, shape + [size], st + [t._stride[dim]])
    return _view_node(t, v, IndexBackward, "unfold_backward")


