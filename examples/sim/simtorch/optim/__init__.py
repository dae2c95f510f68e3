"""simtorch/optim — SIMULATION of torch.optim: AdamW (fused or foreach), SGD (momentum, nesterov,
foreach), Adafactor (factored second moments, single-tensor)."""
from .optimizer import Optimizer  # noqa: F401
from .adamw import AdamW  # noqa: F401
from .sgd import SGD  # noqa: F401
from ._adafactor import Adafactor  # noqa: F401
