"""simtorch/nn/modules/normalization.py — SIMULATION of torch.nn.LayerNorm (weight, optional
bias; fp32 under autocast, saving input, mean and rstd), torch.nn.RMSNorm (weight only;
torch's fused kernel saving input and rstd) and torch.nn.GroupNorm (weight and bias per
channel; fp32 under autocast, saving input, mean and rstd per sample and group)."""
from .. import functional as F
from ..parameter import Parameter
from .linear import _cpu
from .module import Module


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True):
        super().__init__()
        self.normalized_shape, self.eps = normalized_shape, eps
        self.weight = Parameter(_cpu(normalized_shape))
        self.bias = Parameter(_cpu(normalized_shape)) if bias else None

    def forward(self, input):  # noqa: A002
        return F.layer_norm(input, (self.normalized_shape,), self.weight, self.bias, self.eps)


class RMSNorm(Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__()
        self.normalized_shape, self.eps = normalized_shape, eps
        self.weight = Parameter(_cpu(normalized_shape))

    def forward(self, x):
        return F.rms_norm(x, (self.normalized_shape,), self.weight, self.eps)


class GroupNorm(Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True):
        super().__init__()
        self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
        self.weight = Parameter(_cpu(num_channels)) if affine else None
        self.bias = Parameter(_cpu(num_channels)) if affine else None

    def forward(self, input):  # noqa: A002
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)
