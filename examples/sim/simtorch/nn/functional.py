"""simtorch/nn/functional.py — SIMULATION of torch.nn.functional. Functions that are Python in
torch are Python here (layer_norm, embedding, cross_entropy, dropout, silu, relu, pad, softmax,
batch_norm, group_norm, pooling, interpolate, mse_loss), so stacks show functional.py as torch's do; builtins (linear, gelu,
scaled_dot_product_attention, conv2d) are the simulated ATen operations themselves."""
from .._C import _aten as _A
from .._C import _aten_nn as _NN

linear = _NN.linear
scaled_dot_product_attention = _NN.scaled_dot_product_attention
conv2d = _NN.conv2d


gelu = _NN.gelu


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):  # noqa: A002
    return _NN.layer_norm(input, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):  # noqa: A002
    """torch's fused RMSNorm kernel: the output and the fp32 rstd (one per row), saved."""
    return _NN.rms_norm(input, weight)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,  # noqa: A002
              scale_grad_by_freq=False, sparse=False):
    return _NN.embedding(input, weight)


def dropout(input, p=0.5, training=True, inplace=False):  # noqa: A002
    return _NN.dropout(input, p, training)


def silu(input, inplace=False):  # noqa: A002
    return _NN.silu(input)


def relu(input, inplace=False):  # noqa: A002
    return _A.relu_(input) if inplace else _NN.relu(input)


def softmax(input, dim=None, _stacklevel=3, dtype=None):  # noqa: A002
    return _NN.softmax_op(input, dim, dtype, op="_softmax")


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):  # noqa: A002
    return _NN.softmax_op(input, dim, dtype)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,  # noqa: A002
                  reduce=None, reduction="mean", label_smoothing=0.0):
    return _NN.cross_entropy(input, target, reduction)


def pad(input, pad, mode="constant", value=None):  # noqa: A002
    """Modes "constant" and "replicate" (one dimension) only."""
    if mode not in ("constant", "replicate"):
        raise NotImplementedError("simtorch: pad(mode='constant' | 'replicate') only")
    return _A.pad(input, pad, value, mode)


def batch_norm(input, running_mean, running_var, weight=None, bias=None,  # noqa: A002
               training=False, momentum=0.1, eps=1e-5):
    return _NN.batch_norm(input, running_mean, running_var, weight, bias, training, eps)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,  # noqa: A002
               return_indices=False):
    return _NN.max_pool2d(input, kernel_size, stride or kernel_size, padding)


def adaptive_avg_pool2d(input, output_size):  # noqa: A002
    size = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    return _NN.adaptive_avg_pool2d(input, size)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):  # noqa: A002
    return _NN.group_norm(input, num_groups, weight, bias, eps)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,  # noqa: A002
                recompute_scale_factor=None, antialias=False):
    """Only mode='nearest' with an integer scale factor is simulated."""
    if mode != "nearest" or scale_factor is None or int(scale_factor) != scale_factor:
        raise NotImplementedError("simtorch: interpolate(mode='nearest', scale_factor=N) only")
    return _NN.upsample_nearest2d(input, int(scale_factor))


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean",  # noqa: A002
             weight=None):
    return _NN.mse_loss(input, target, reduction)
