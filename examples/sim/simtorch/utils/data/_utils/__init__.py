"""simtorch/utils/data/_utils — SIMULATION of the DataLoader's helpers: collate, pin_memory."""
from . import collate, pin_memory  # noqa: F401
