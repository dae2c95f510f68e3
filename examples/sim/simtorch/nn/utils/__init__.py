"""simtorch/nn/utils — SIMULATION of torch.nn.utils: clip_grad_norm_."""
from .clip_grad import clip_grad_norm_  # noqa: F401
