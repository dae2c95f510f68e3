"""simtorch/nn/modules/pooling.py — SIMULATION of torch.nn.MaxPool2d (output and int64 indices)
and AdaptiveAvgPool2d."""
from .. import functional as F
from .module import Module


class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride or kernel_size, padding

    def forward(self, input):  # noqa: A002
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding)


class AdaptiveAvgPool2d(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):  # noqa: A002
        return F.adaptive_avg_pool2d(input, self.output_size)
