"""simtorch/_C/_tensor.py — SIMULATION of a tensor's native part (TensorImpl): shape, strides,
dtype and a shared storage; views share the storage and keep it alive; nothing is computed.
The Python-level class (simtorch/_tensor.py, Tensor.backward) derives from TensorBase."""
import weakref

from . import Storage, new_storage  # noqa: F401 — Storage re-exported


class Size(tuple):
    """torch.Size: a tuple of dimensions."""

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n


def contiguous_strides(shape):
    st, acc = [], 1
    for s in reversed(shape):
        st.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(st))


def like_strides(shape, stride):
    """The strides empty_like / a preserve_format copy gives: dense, in the same order of
    dimensions as the source's strides (a transposed view stays transposed)."""
    order = sorted(range(len(shape)), key=lambda i: (stride[i], -i))
    out, acc = [0] * len(shape), 1
    for i in order:
        out[i] = acc
        acc *= max(shape[i], 1)
    return tuple(out)


def numel_of(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def broadcast_shapes(*shapes):
    nd = max(len(s) for s in shapes)
    out = []
    for i in range(nd):
        d = 1
        for s in shapes:
            j = i - (nd - len(s))
            if j >= 0 and s[j] != 1:
                d = s[j]
        out.append(d)
    return tuple(out)


def view_strides(old_shape, old_stride, new_shape):
    """The strides a view of new_shape gets (torch's computeStride), None when the layout
    cannot be viewed that way (a reshape then copies)."""
    if numel_of(old_shape) == 0:
        return contiguous_strides(new_shape)
    new_stride = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = old_stride[-1] if old_stride else 1
    tensor_numel, view_numel = 1, 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (old_shape[tensor_d - 1] != 1 and
                             old_stride[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_stride[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_stride[tensor_d - 1]
                tensor_numel, view_numel = 1, 1
    if view_d != -1:
        return None
    return tuple(new_stride)


def infer_shape(shape, numel):
    shape = list(shape)
    if -1 in shape:
        i = shape.index(-1)
        rest = numel_of([s for j, s in enumerate(shape) if j != i])
        shape[i] = numel // rest if rest else 0
    return tuple(shape)


TENSOR_CLASS = None  # simtorch._tensor.Tensor, set when it is imported


class TensorBase:
    """The native part of a tensor. grad_fn / _output_nr: the graph node that made it;
    _base: the tensor a view was taken of; _uses: engine buffers holding it as a gradient."""

    __slots__ = ("_shape", "_stride", "_offset", "dtype", "_storage", "grad_fn", "_output_nr",
                 "requires_grad", "grad", "_base", "_accum", "_uses", "_external", "_name",
                 "__weakref__")

    @property
    def shape(self):
        return Size(self._shape)

    @property
    def device(self):
        return self._storage.device if self._storage is not None else "cpu"

    @property
    def is_cuda(self):
        return self.device == "cuda"

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def ndim(self):
        return len(self._shape)

    @property
    def nbytes(self):
        return numel_of(self._shape) * self.dtype.itemsize

    @property
    def data(self):
        return alias(self)

    @data.setter
    def data(self, other):
        self._shape, self._stride, self._offset = other._shape, other._stride, other._offset
        self.dtype, self._storage = other.dtype, other._storage

    def size(self, dim=None):
        return Size(self._shape) if dim is None else self._shape[dim]

    def dim(self):
        return len(self._shape)

    def numel(self):
        return numel_of(self._shape)

    nelement = numel

    def element_size(self):
        return self.dtype.itemsize

    def stride(self, dim=None):
        return self._stride if dim is None else self._stride[dim]

    def is_contiguous(self):
        expect = 1
        for s, st in zip(reversed(self._shape), reversed(self._stride)):
            if s != 1 and st != expect:
                return False
            expect *= s
        return True

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def data_ptr(self):
        return self._storage.ptr + self._offset * self.dtype.itemsize if self._storage else 0

    def untyped_storage(self):
        return self._storage

    def is_view(self):
        return self._base is not None

    def item(self):
        return 0.0  # a simulation computes nothing

    def tolist(self):
        return [0] * self.numel()

    def __len__(self):
        return self._shape[0]

    def __repr__(self):
        return f"tensor(shape={tuple(self._shape)}, dtype={self.dtype!r}, device='{self.device}')"

    def __hash__(self):
        return id(self)

    def __bool__(self):
        return True


def make(shape, dtype, storage, stride=None, offset=0, cls=None):
    """A tensor object over storage (no allocation)."""
    t = object.__new__(cls or TENSOR_CLASS)
    t._shape = tuple(shape)
    t._stride = tuple(stride) if stride is not None else contiguous_strides(t._shape)
    t._offset = offset
    t.dtype = dtype
    t._storage = storage
    t.grad_fn = None
    t._output_nr = 0
    t.requires_grad = False
    t.grad = None
    t._base = None
    t._accum = None
    t._uses = 0
    t._external = False
    t._name = None
    return t


def empty(shape, dtype, device, op, stride=None):
    """A new tensor of shape on device, allocated under ATen operation op's frame."""
    shape = tuple(shape)
    if stride is None:
        nbytes = numel_of(shape) * dtype.itemsize
    else:
        nbytes = (1 + sum((s - 1) * st for s, st in zip(shape, stride) if s > 0)) * dtype.itemsize
        nbytes = nbytes if numel_of(shape) else 0
    return make(shape, dtype, new_storage(nbytes, device, op), stride)


def alias(t):
    """Another tensor object over t's memory, without its graph (a saved variable, .data)."""
    a = make(t._shape, t.dtype, t._storage, t._stride, t._offset)
    a._base = t._base
    return a


def view_of(t, shape, stride, offset=None):
    """A view of t (shares its storage); the graph edge is the caller's business."""
    v = make(shape, t.dtype, t._storage, stride, t._offset if offset is None else offset)
    v._base = t._base if t._base is not None else t
    return v


def accumulate_node(t):
    """The AccumulateGrad node of leaf t (made once; the tensor holds it weakly, as torch)."""
    from ._autograd import AccumulateGrad
    node = t._accum() if t._accum is not None else None
    if node is None:
        node = AccumulateGrad.for_variable(t)
        t._accum = weakref.ref(node)
    return node


__all__ = ["Size", "TensorBase", "Storage", "make", "empty", "alias", "view_of"]
