"""simtorch/functional.py — SIMULATION of the torch.nn.functional ops a GPT uses: each allocates
its outputs with PyTorch's sizes and dtypes (autocast included) and records what it saves for
backward and what its backward allocates (formula.md §3's table). Nothing is computed."""
from . import Tensor, autocast_dtype, grad_enabled, cublas_workspace
from .autograd import record


def _grads_like_inputs(plan, g, node):
    """Backward of an elementwise op: one gradient per input, shaped like it."""
    outs = [(uid, plan.alloc(n), p) for uid, n, p in node.inputs]
    plan.decref(g)
    return outs


def embedding(idx, weight):
    """Token/position embedding: fp32 rows of weight; saves the indices; backward allocates a
    dense gradient as large as the table."""
    out = Tensor(idx.shape + (weight.shape[1],), weight.dtype)
    return record(out, [weight], [idx], _grads_like_inputs)


def _add_bwd(plan, g, node):
    outs = []
    for uid, n, p in node.inputs:  # same size: the gradient passes through; else reduce/cast
        outs.append((uid, plan.incref(g) if n == node.info else plan.alloc(n), p))
    plan.decref(g)
    return outs


def add(a, b):
    """a + b with broadcasting and type promotion (fp32 residual + 16-bit branch -> fp32)."""
    big = a if a.numel() >= b.numel() else b
    dtype = "float32" if "float32" in (a.dtype, b.dtype) else a.dtype
    out = Tensor(big.shape, dtype)
    return record(out, [a, b], [], _add_bwd, out.nbytes)


def layer_norm(x, weight, bias=None):
    """fp32 LayerNorm (autocast runs it in fp32): saves its input and mean/rstd (4N each)."""
    out = Tensor(x.shape, "float32")
    mean = Tensor(x.shape[:-1], "float32")
    rstd = Tensor(x.shape[:-1], "float32")
    ins = [x, weight] + ([bias] if bias is not None else [])
    return record(out, ins, [x, mean, rstd], _grads_like_inputs)


def _cast(x, dtype):
    """x.to(dtype) (autocast's casts of activations and weight copies)."""
    out = Tensor(x.shape, dtype)
    return record(out, [x], [], _grads_like_inputs)


def linear(x, weight, bias=None):
    """x @ weight.T (+ bias). Under autocast: a 16-bit copy of x if needed and of the weight
    (kept by the graph until this layer's backward), a 16-bit output."""
    cublas_workspace()
    ac = autocast_dtype()
    if ac:
        x_ = x if x.dtype == ac else _cast(x, ac)
        w_ = _cast(weight, ac)
        b_ = _cast(bias, ac) if bias is not None else None
    else:
        x_, w_, b_ = x, weight, bias
    out = Tensor(x.shape[:-1] + (weight.shape[0],), x_.dtype)
    saved = [t for t in (x_, w_) if not hasattr(t, "name")]
    ins = [x_, w_] + ([b_] if b_ is not None else [])
    return record(out, ins, saved, _grads_like_inputs)


def _sdpa_bwd(plan, g, node):
    (uid, n, p), = node.inputs
    lse_bytes, out_bytes = node.info
    softmax_d = plan.alloc(lse_bytes)  # flash backward scratch: fp32 (B, H, T)
    dq_accum = plan.alloc(2 * out_bytes)  # fp32 dq accumulator
    parts = [plan.alloc(n // 3) for _ in range(3)]  # dq, dk, dv
    plan.decref(softmax_d)
    plan.decref(dq_accum)
    gqkv = plan.alloc(n)  # cat back into the c_attn output's layout
    for s in parts:
        plan.decref(s)
    plan.decref(g)
    return [(uid, gqkv, p)]


def scaled_dot_product_attention(qkv, n_head):
    """Fused causal attention (flash) over q, k, v views of one (B, T, 3C) tensor: a (B, T, C)
    output and an fp32 logsumexp (B, H, T), both saved with qkv. No T x T matrix."""
    B, T, C3 = qkv.shape
    out = Tensor((B, T, C3 // 3), qkv.dtype)
    lse = Tensor((B, n_head, T), "float32")
    return record(out, [qkv], [qkv, out, lse], _sdpa_bwd, (lse.nbytes, out.nbytes))


def gelu(x):
    """GELU: saves its input."""
    return record(Tensor(x.shape, x.dtype), [x], [x], _grads_like_inputs)


def dropout(x, p, training):
    """Dropout: nothing when p == 0 or in eval mode; else an output and a saved 1-byte mask."""
    if p == 0.0 or not training:
        return x
    mask = Tensor(x.shape, "bool")
    return record(Tensor(x.shape, x.dtype), [x], [mask], _grads_like_inputs)


def _ce_bwd(plan, g, node):
    (uid, n, p), = node.inputs
    g_nll = plan.alloc(node.info)  # fp32 gradient of the log-probabilities: the 12NV moment
    plan.release(node, 0)  # the fp32 copy
    g_logits = plan.alloc(n)
    plan.decref(g_nll)
    plan.release(node, 0)  # the log_softmax output
    plan.decref(g)
    return [(uid, g_logits, p)]


def cross_entropy(logits, targets):
    """F.cross_entropy under autocast: an fp32 copy of the logits (4NV) and log_softmax; in
    training the 16-bit log_softmax (2NV) and the fp32 copy are saved (8NV with the logits);
    under no_grad an fp32 log_softmax (10NV with the logits), all freed at once."""
    f32 = Tensor(logits.shape, "float32")
    ls = Tensor(logits.shape, logits.dtype if grad_enabled() else "float32")
    loss = Tensor((), "float32")
    return record(loss, [logits], [f32, ls, targets], _ce_bwd, f32.nbytes)


def scalar_op(x):
    """loss / A, loss * scale: a new 0-dim tensor."""
    return record(Tensor((), x.dtype), [x], [], _grads_like_inputs)


def arange(n):
    """torch.arange(n) on the device (int64)."""
    return Tensor((n,), "int64")
