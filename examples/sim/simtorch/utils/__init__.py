"""simtorch/utils — SIMULATION of torch.utils: checkpoint (activation checkpointing)."""
from . import checkpoint  # noqa: F401
