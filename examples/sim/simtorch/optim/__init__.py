"""simtorch/optim — SIMULATION of torch.optim: AdamW (fused or foreach), SGD (momentum, nesterov,
foreach), Adafactor (factored second moments, single-tensor), Adagrad (its state made at
construction); lr_scheduler (LambdaLR)."""
from .optimizer import Optimizer  # noqa: F401
from .adamw import AdamW  # noqa: F401
from .sgd import SGD  # noqa: F401
from ._adafactor import Adafactor  # noqa: F401
from .adagrad import Adagrad  # noqa: F401
from . import lr_scheduler  # noqa: F401,E402
