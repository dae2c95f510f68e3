"""simtorch/utils/data — SIMULATION of torch.utils.data: Dataset, DataLoader (single process)."""
from .dataset import Dataset  # noqa: F401
from .dataloader import DataLoader  # noqa: F401
