"""simtorch/optim — SIMULATION of torch.optim (AdamW only)."""
from .adamw import AdamW  # noqa: F401
