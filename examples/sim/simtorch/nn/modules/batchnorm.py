"""simtorch/nn/modules/batchnorm.py — SIMULATION of torch.nn.BatchNorm2d (and BatchNorm1d, the same over N x C x L): weight and bias
(parameters), running_mean, running_var and num_batches_tracked (buffers, moved to the device
with the parameters); in training the batch statistics are saved for the backward and the
running ones updated in place."""
from ... import _C
from ..._C import _tensor as T
from .. import functional as F
from ..parameter import Parameter
from .linear import _cpu
from .module import Module


class BatchNorm2d(Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.weight = Parameter(_cpu(num_features))
        self.bias = Parameter(_cpu(num_features))
        self.register_buffer("running_mean", _cpu(num_features))
        self.register_buffer("running_var", _cpu(num_features))
        self.register_buffer("num_batches_tracked",
                             T.make((), _C.int64, _C.new_storage(0, "cpu", "zeros")))

    def forward(self, input):  # noqa: A002
        if self.training:
            self.num_batches_tracked.add_(1)  # in place
        return F.batch_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                            self.training, self.momentum, self.eps)


class BatchNorm1d(BatchNorm2d):
    """torch.nn.BatchNorm1d: the same statistics per channel (dimension 1) of N x C or N x C x L."""
