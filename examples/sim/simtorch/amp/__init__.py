"""simtorch/amp — SIMULATION of torch.amp: autocast and GradScaler."""
from .autocast_mode import autocast  # noqa: F401
from .grad_scaler import GradScaler  # noqa: F401
