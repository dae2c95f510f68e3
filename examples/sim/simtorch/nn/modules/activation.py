"""simtorch/nn/modules/activation.py — SIMULATION of torch.nn.GELU, ReLU (optionally in place),
SiLU, Tanh."""
from ..._C import _aten as A
from ..._C import _aten_nn as NN
from .. import functional as F
from .module import Module


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):  # noqa: A002
        return NN.gelu(input, approximate=self.approximate)


class ReLU(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.relu(input, inplace=self.inplace)


class SiLU(Module):
    def forward(self, input):  # noqa: A002
        return F.silu(input)


class Tanh(Module):
    def forward(self, input):  # noqa: A002
        return A.tanh(input)

