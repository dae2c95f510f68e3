"""simtorch/_C/_aten_nn.py — SIMULATION of the ATen kernels a training step of a transformer or a
CNN runs (linear/addmm/mm/bmm with their cuBLAS workspaces, layer norm, embedding, fused
attention as cuDNN's on a compute-capability-9.0 device, log_softmax/nll_loss, mse_loss,
dropout, activations, convolution, batch norm, group norm, pooling, nearest upsampling): outputs, saved tensors, backward allocations and
their order, from public descriptions of those kernels. Nothing is computed."""
from . import float32, int64, bool_, uint8
from ._tensor import empty, numel_of, like_strides
from ._autograd import Node, record, needs_grad, save
from ._aten import ac_lower, ac_fp32, gemm_out, cast

# ---- matrix products ------------------------------------------------------------------------------


class LinearBackward(Node):
    """addmm / mm backward (the folded linear). mm: weight gradient then input gradient;
    addmm: input, weight, then the bias (a reduction with a scratch of 8 bytes an element)."""

    __slots__ = ()

    def apply(self, grads):
        g = grads[0]
        has_bias = self.info
        x_meta, w_meta = self.meta[0], self.meta[1]
        gx = gw = gb = None
        if not has_bias:
            if self.next[1] is not None:
                gw = gemm_out(w_meta[0], g.dtype, g.device, "mm")
            if self.next[0] is not None:
                gx = gemm_out(x_meta[0], g.dtype, g.device, "mm")
        else:
            if self.next[0] is not None:
                gx = gemm_out(x_meta[0], g.dtype, g.device, "mm")
            if self.next[1] is not None:
                gw = gemm_out(w_meta[0], g.dtype, g.device, "mm")
            if self.next[2] is not None:
                out_f = g._shape[-1]
                gb = empty((out_f,), g.dtype, g.device, "sum_dim_IntList")
                if g.dtype.itemsize == 2:
                    scratch = empty((g.numel(),), int64, g.device, "sum_dim_IntList")
                    part = empty((max(out_f // 32, 1),), uint8, g.device, "sum_dim_IntList")
                    del scratch, part
        return [gx, gw, gb]


def linear(x, w, b=None, w_layout_in_out=False):
    """F.linear (w: out x in) or HF's Conv1D (w: in x out, addmm(b, x, w)): autocast casts x, w
    and b to 16 bits; a bias makes it addmm (cuBLASLt), none mm. Saves x' for the weight's
    gradient and w' for the input's, only when that gradient is needed."""
    if w_layout_in_out:  # addmm(b, x, w): autocast casts w, x, b (last argument first)
        b_, x_, w_ = ac_lower(b, x, w)
    else:  # linear(x, w, b): b, w, x
        x_, w_, b_ = ac_lower(x, w, b) if b is not None else ac_lower(x, w) + (None,)
    out_f = w._shape[1] if w_layout_in_out else w._shape[0]
    out = gemm_out(x_._shape[:-1] + (out_f,), x_.dtype, x_.device, "addmm" if b is not None else "mm")
    if needs_grad(x_, w_, b_):
        saved = (save(x_) if w_.requires_grad else None, save(w_) if x_.requires_grad else None)
        record(LinearBackward, [x_, w_, b_], [out], saved, b is not None)
    return out


class BmmBackward(Node):
    __slots__ = ()

    def apply(self, grads):
        g = grads[0]
        return [None if self.next[i] is None else gemm_out(self.meta[i][0], g.dtype, g.device, "bmm")
                for i in (0, 1)]


def bmm(a_in, b_in):
    a, b = ac_lower(a_in, b_in)
    out = gemm_out(a._shape[:-1] + (b._shape[-1],), a.dtype, a.device, "bmm")
    if needs_grad(a, b):
        record(BmmBackward, [a, b], [out], (save(b) if a.requires_grad else None,
                                            save(a) if b.requires_grad else None))
    return out


# ---- normalization ----------------------------------------------------------------------------------
class NormBackward(Node):
    """native_layer_norm_backward / cudnn_batch_norm_backward: input, weight, bias gradients
    (info: the backward op)."""

    __slots__ = ()

    def apply(self, grads):
        g = grads[0]
        return [None if e is None else empty(m[0], m[1], g.device, self.info)
                for e, m in zip(self.next, self.meta)]


def layer_norm(x_in, w_in, b_in, eps=1e-5):
    """native_layer_norm (autocast: fp32): out, mean and rstd (fp32, one per row); saves the
    input, weight, bias, mean and rstd."""
    x, w, b = ac_fp32(x_in, w_in, b_in) if b_in is not None else ac_fp32(x_in, w_in) + (None,)
    rows = x._shape[:-1]
    out = empty(x._shape, x.dtype, x.device, "native_layer_norm")
    mean = empty(rows, float32, x.device, "native_layer_norm")
    rstd = empty(rows, float32, x.device, "native_layer_norm")
    if needs_grad(x, w, b):
        record(NormBackward, [x, w, b], [out], (save(x), save(w), save(b), mean, rstd),
               "native_layer_norm_backward")
    return out


def rms_norm(x_in, w_in, eps=None):
    """torch's fused RMSNorm (autocast: fp32): the output and an fp32 rstd per row; saves the
    input, the weight and the rstd."""
    x, w = ac_fp32(x_in, w_in)
    out = empty(x._shape, x.dtype, x.device, "native_layer_norm")
    rstd = empty(x._shape[:-1], float32, x.device, "native_layer_norm")
    if needs_grad(x, w):
        record(NormBackward, [x, w], [out], (save(x), save(w), rstd), "native_layer_norm_backward")
    return out


def batch_norm(x, running_mean, running_var, w, b, training, eps=1e-5):
    """cudnn_batch_norm: out in the input's type, save_mean and save_invstd (fp32, one per
    channel) in training; the running statistics are updated in place."""
    out = empty(x._shape, x.dtype, x.device, "cudnn_batch_norm")
    if not training:
        return out
    ch = (x._shape[1],)
    smean = empty(ch, float32, x.device, "cudnn_batch_norm")
    sinv = empty(ch, float32, x.device, "cudnn_batch_norm")
    if needs_grad(x, w, b):
        record(NormBackward, [x, w, b], [out], (save(x), save(w), smean, sinv),
               "cudnn_batch_norm_backward")
    return out


class GroupNormBackward(Node):
    """native_group_norm_backward (CUDA): the input, weight and bias gradients (those needed),
    then the kernel's fp32 per-(sample, channel) sums ds and db, freed at the end."""

    __slots__ = ()

    def apply(self, grads):
        g = grads[0]
        outs = [None if e is None else empty(m[0], m[1], g.device, "native_group_norm_backward")
                for e, m in zip(self.next, self.meta)]
        n_c = self.meta[0][0][:2]
        ds = empty(n_c, float32, g.device, "native_group_norm_backward")
        db = empty(n_c, float32, g.device, "native_group_norm_backward")
        del ds, db
        return outs


def group_norm(x_in, groups, w_in, b_in, eps=1e-5):
    """native_group_norm (autocast: fp32, so a 16-bit input is copied to fp32 first): the
    output in the input's type, mean and rstd (fp32, one per sample and group); saves the
    input, the weight, mean and rstd (the output is not saved)."""
    x, w, b = ac_fp32(x_in, w_in, b_in) if b_in is not None else ac_fp32(x_in, w_in) + (None,)
    out = empty(x._shape, x.dtype, x.device, "native_group_norm")
    mean = empty((x._shape[0], groups), float32, x.device, "native_group_norm")
    rstd = empty((x._shape[0], groups), float32, x.device, "native_group_norm")
    if needs_grad(x, w, b):
        record(GroupNormBackward, [x, w, b], [out], (save(x), save(w), mean, rstd))
    return out


# ---- embedding ------------------------------------------------------------------------------------
class EmbeddingBackward(Node):
    """embedding_dense_backward (CUDA): up to 3072 indices, a zeroed gradient as large as the
    table and nothing else; more, the indices sorted first (two int64 copies, an arange, the
    radix sort's scratch), then the table-sized gradient, then the per-segment partial sums
    (segment offsets, and (N + N/10) rows of fp32 partial gradients), freed at the end."""

    __slots__ = ()

    def apply(self, grads):
        g = grads[0]
        n = numel_of(self.saved[0]._shape)
        shape, dev, op = self.meta[1][0], g.device, "embedding_dense_backward"
        if n <= 3072:
            return [None, empty(shape, g.dtype, dev, "zeros")]
        sorted_idx = empty((n,), int64, dev, "empty_like")
        orig_idx = empty((n,), int64, dev, "empty_like")
        rng = empty((n,), int64, dev, "arange")
        cub = empty((n * 150015 // 8192,), uint8, dev, op)
        del cub, rng
        gw = empty(shape, g.dtype, dev, "zeros")
        seg = empty((n,), int64, dev, op)
        nseg = empty((), int64, dev, op)
        tmp = empty((n,), int64, dev, op)
        del tmp
        parts = n + n // 10
        p1 = empty((n,), int64, dev, op)
        p2 = empty((n,), int64, dev, op)
        nparts = empty((), int64, dev, op)
        part_off = empty((parts,), int64, dev, op)
        partial = empty((parts, shape[1]), g.dtype, dev, op)
        del partial, part_off, nparts, p2, p1, nseg, seg, sorted_idx, orig_idx
        return [None, gw]


def embedding(idx, w):
    out = empty(idx._shape + (w._shape[1],), w.dtype, w.device, "embedding")
    if needs_grad(w):
        record(EmbeddingBackward, [idx, w], [out], (save(idx),))
    return out


# ---- attention --------------------------------------------------------------------------------------
class SdpaBackward(Node):
    """cuDNN attention backward: dq, dk, dv like q, k, v, and one workspace (an fp32 dq
    accumulator, the softmax statistics, 256 bytes) freed at once."""

    __slots__ = ()

    def apply(self, grads):
        g = grads[0]
        q, k, v = self.saved[0], self.saved[1], self.saved[2]
        outs = [empty(t._shape, t.dtype, g.device, "empty_like", like_strides(t._shape, t._stride))
                for t in (q, k, v)]
        B, H, T = q._shape[0], q._shape[1], q._shape[2]
        ws = empty((q.numel() * 4 + B * H * T * 4 + 256,), uint8, g.device,
                   "_scaled_dot_product_cudnn_attention_backward")
        del ws
        return outs


def scaled_dot_product_attention(q_in, k_in, v_in, is_causal=False, dropout_p=0.0):
    """F.scaled_dot_product_attention, the fused cuDNN kernel (compute capability 9.0):
    philox seed and offset (8 bytes each), the output (B, H, T, hd) laid out as (B, T, H, hd),
    the logsumexp (B, H, T) in fp32 (only when a gradient is needed), a 256-byte workspace freed
    at once. No T x T matrix.
    Saves q, k, v, the output, the logsumexp, seed and offset."""
    q, k, v = ac_lower(q_in, k_in, v_in, op="scaled_dot_product_attention")
    B, H, T, hd = q._shape
    seed = empty((), int64, q.device, "_scaled_dot_product_cudnn_attention")
    offset = empty((), int64, q.device, "_scaled_dot_product_cudnn_attention")
    out = empty((B, H, T, v._shape[-1]), q.dtype, q.device, "empty_like",
                (T * H * v._shape[-1], v._shape[-1], H * v._shape[-1], 1))
    grad = needs_grad(q, k, v)
    lse = empty((B, H, T), float32, q.device, "_scaled_dot_product_cudnn_attention") if grad else None
    ws = empty((256,), uint8, q.device, "_scaled_dot_product_cudnn_attention")
    del ws
    if grad:
        record(SdpaBackward, [q, k, v], [out], (save(q), save(k), save(v), save(out), lse, seed,
                                                offset))
    return out


# ---- softmax and losses -----------------------------------------------------------------------------
class SoftmaxBackward(Node):
    __slots__ = ()

    def apply(self, grads):
        g = grads[0]
        return [empty(g._shape, self.meta[0][1], g.device, self.info)]


def softmax_op(x_in, dim=-1, dtype=None, op="_log_softmax"):
    """log_softmax / softmax: with an explicit dtype runs in it; else autocast runs it in fp32.
    Saves its output. (Named for neither: torch's C++ leaves no Python frame here, and a frame
    named log_softmax is a loss's to vramtrace's rules: an attention's F.softmax had been
    logits/loss.)"""
    if dtype is not None:
        x = cast(x_in, dtype)
    else:
        (x,) = ac_fp32(x_in)
    out = empty(x._shape, x.dtype, x.device, op)
    if needs_grad(x):
        record(SoftmaxBackward, [x], [out], (save(out),), op + ("_backward_data"))
    return out


class NllLossBackward(Node):
    __slots__ = ()

    def apply(self, grads):
        g = grads[0]
        shape, dtype = self.meta[0]
        return [empty(shape, dtype, g.device, "nll_loss_backward"), None]


def nll_loss(x_in, target, reduction="mean"):
    """nll_loss (autocast: fp32, so a 16-bit input is copied to fp32): the loss and the
    total weight (4 bytes each); saves the input, the target and the total weight."""
    (x,) = ac_fp32(x_in)
    out_shape = () if reduction != "none" else x._shape[:1]
    out = empty(out_shape, x.dtype, x.device, "nll_loss_forward")
    total = empty((), x.dtype, x.device, "nll_loss_forward")
    if needs_grad(x):
        record(NllLossBackward, [x, target], [out], (save(x), save(target), total))
    del total
    return out


def cross_entropy(x, target, reduction="mean"):
    """cross_entropy_loss: log_softmax in the logits' own type, then nll_loss (the
    log_softmax result lives until the loss exists, a C++ temporary)."""
    ls = softmax_op(x, 1, dtype=x.dtype)
    return nll_loss(ls, target, reduction)


class MseLossBackward(Node):
    __slots__ = ()

    def apply(self, grads):
        g = grads[0]
        return [None if e is None else empty(m[0], m[1], g.device, "mse_loss_backward")
                for e, m in zip(self.next, self.meta)]


def mse_loss(x_in, target_in, reduction="mean"):
    """mse_loss (autocast: fp32): the elementwise squared errors (a tensor the input's size),
    reduced to the loss, then freed; saves the input and the target."""
    x, target = ac_fp32(x_in, target_in)
    sq = empty(x._shape, x.dtype, x.device, "mse_loss")
    if reduction == "none":
        out = sq
    else:
        out = empty((), x.dtype, x.device, "mse_loss")
        del sq
    if needs_grad(x, target):
        record(MseLossBackward, [x, target], [out], (save(x), save(target)))
    return out


# ---- pointwise kernels with their own backward ----------------------------------------------------------
class ActBackward(Node):
    __slots__ = ()

    def apply(self, grads):
        g = grads[0]
        return [empty(g._shape, g.dtype, g.device, self.info)]


def _act(x, op, grad_op, save_out=False):
    out = empty(x._shape, x.dtype, x.device, op)
    if needs_grad(x):
        record(ActBackward, [x], [out], (save(out) if save_out else save(x),), grad_op)
    return out


def gelu(x, approximate="none"):
    return _act(x, "gelu", "gelu_backward")


def silu(x):
    return _act(x, "silu", "silu_backward")


def relu(x):
    return _act(x, "relu", "threshold_backward", save_out=True)


def dropout(x, p, training):
    """Dropout: nothing at p == 0 or in eval; else native_dropout's output and a 1-byte mask
    (saved)."""
    if p == 0.0 or not training:
        return x
    out = empty(x._shape, x.dtype, x.device, "native_dropout")
    mask = empty(x._shape, bool_, x.device, "native_dropout")
    if needs_grad(x):
        record(ActBackward, [x], [out], (mask,), "native_dropout_backward")
    return out


# ---- convolution and pooling -------------------------------------------------------------------------
def _out_hw(h, w, k, s, p):
    return (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1


class ConvBackward(Node):
    """convolution_backward: input, weight and bias gradients (those needed)."""

    __slots__ = ()

    def apply(self, grads):
        g = grads[0]
        return [None if e is None else empty(m[0], g.dtype, g.device, "convolution_backward")
                for e, m in zip(self.next, self.meta)]


def conv2d(x, w, b=None, stride=1, padding=0):
    """cuDNN convolution (autocast: 16 bits): saves the input for the weight's gradient and the
    weight for the input's."""
    x_, w_, b_ = ac_lower(x, w, b) if b is not None else ac_lower(x, w) + (None,)
    B, _, H, W = x_._shape
    oh, ow = _out_hw(H, W, w._shape[2], stride, padding)
    out = empty((B, w._shape[0], oh, ow), x_.dtype, x_.device, "cudnn_convolution")
    if needs_grad(x_, w_, b_):
        record(ConvBackward, [x_, w_, b_], [out], (save(x_) if w_.requires_grad else None,
                                                   save(w_) if x_.requires_grad else None))
    return out


class PoolBackward(Node):
    __slots__ = ()

    def apply(self, grads):
        g = grads[0]
        return [empty(self.meta[0][0], g.dtype, g.device, self.info)]


def max_pool2d(x, k, stride, padding):
    """max_pool2d_with_indices: the output and int64 indices of the same shape (saved)."""
    B, C, H, W = x._shape
    oh, ow = _out_hw(H, W, k, stride, padding)
    out = empty((B, C, oh, ow), x.dtype, x.device, "max_pool2d_with_indices")
    idx = empty((B, C, oh, ow), int64, x.device, "max_pool2d_with_indices")
    if needs_grad(x):
        record(PoolBackward, [x], [out], (save(x), idx), "max_pool2d_with_indices_backward")
    return out


def upsample_nearest2d(x, scale):
    """upsample_nearest2d (runs in the input's type; saves only sizes): the output; its
    backward makes a gradient the input's size."""
    B, C, H, W = x._shape
    out = empty((B, C, H * scale, W * scale), x.dtype, x.device, "upsample_nearest2d")
    if needs_grad(x):
        record(PoolBackward, [x], [out], None, "upsample_nearest2d_backward")
    return out


def adaptive_avg_pool2d(x, size):
    B, C = x._shape[:2]
    out = empty((B, C) + tuple(size), x.dtype, x.device, "_adaptive_avg_pool2d")
    if needs_grad(x):
        record(PoolBackward, [x], [out], (save(x),), "_adaptive_avg_pool2d_backward")
    return out
