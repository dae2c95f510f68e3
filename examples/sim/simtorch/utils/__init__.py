"""simtorch/utils — SIMULATION of torch.utils: checkpoint (activation checkpointing), data
(Dataset, DataLoader with pinned batches)."""
from . import checkpoint  # noqa: F401
from . import data  # noqa: F401
