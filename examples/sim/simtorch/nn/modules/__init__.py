"""simtorch/nn/modules — SIMULATION of torch.nn.modules, one file per kind as in torch."""
from .module import Module  # noqa: F401
from .linear import Linear, Identity  # noqa: F401
from .conv import Conv2d  # noqa: F401
from .batchnorm import BatchNorm1d, BatchNorm2d  # noqa: F401
from .normalization import LayerNorm, RMSNorm, GroupNorm  # noqa: F401
from .sparse import Embedding  # noqa: F401
from .activation import GELU, ReLU, SiLU, Tanh  # noqa: F401
from .dropout import Dropout  # noqa: F401
from .padding import ReplicationPad1d  # noqa: F401
from .pooling import MaxPool2d, AdaptiveAvgPool2d  # noqa: F401
from .container import Sequential, ModuleList, ModuleDict, Flatten  # noqa: F401
from .loss import CrossEntropyLoss, MSELoss  # noqa: F401
