"""simtorch/nn/modules/padding.py — SIMULATION of torch.nn.ReplicationPad1d: F.pad(input, padding,
"replicate") of the last dimension."""
from .. import functional as F
from .module import Module


class ReplicationPad1d(Module):
    def __init__(self, padding):
        super().__init__()
        self.padding = (padding, padding) if isinstance(padding, int) else tuple(padding)

    def forward(self, input):  # noqa: A002
        return F.pad(input, self.padding, "replicate")
