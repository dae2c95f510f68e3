"""simtorch/nn/modules/loss.py — SIMULATION of torch.nn.CrossEntropyLoss (F.cross_entropy) and MSELoss
(F.mse_loss)."""
from .. import functional as F
from .module import Module


class CrossEntropyLoss(Module):
    def __init__(self, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__()
        self.ignore_index, self.reduction = ignore_index, reduction

    def forward(self, input, target):  # noqa: A002
        return F.cross_entropy(input, target, ignore_index=self.ignore_index,
                               reduction=self.reduction)


class MSELoss(Module):
    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input, target):  # noqa: A002
        return F.mse_loss(input, target, reduction=self.reduction)
