"""simtorch/nn/modules/dropout.py — SIMULATION of torch.nn.Dropout: nothing at p = 0 or in eval;
else an output and a saved 1-byte mask."""
from .. import functional as F
from .module import Module


class Dropout(Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        self.p = p

    def forward(self, input):  # noqa: A002
        return F.dropout(input, self.p, self.training)
