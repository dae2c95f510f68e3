"""simtorch/nn/modules/conv.py — SIMULATION of torch.nn.Conv2d: weight (out, in, k, k) and an
optional bias; forward is the cuDNN convolution (16 bits under autocast)."""
from ..._C import _aten_nn as NN
from ..parameter import Parameter
from .linear import _cpu
from .module import Module


class Conv2d(Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, bias=True):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.weight = Parameter(_cpu(out_channels, in_channels, kernel_size, kernel_size))
        self.bias = Parameter(_cpu(out_channels)) if bias else None

    def forward(self, input):  # noqa: A002
        return NN.conv2d(input, self.weight, self.bias, self.stride, self.padding)
