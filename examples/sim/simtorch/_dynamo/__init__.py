"""simtorch/_dynamo — SIMULATION of the one part of torch._dynamo an eager run meets: disable(),
the wrapper torch.utils.checkpoint (and other eager code) runs under. Nothing is compiled."""
from .eval_frame import disable  # noqa: F401
