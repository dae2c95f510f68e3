"""simtorch/nn — SIMULATION of torch.nn: modules, Parameter, functional, init, utils."""
from .parameter import Parameter  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import Module  # noqa: F401
from . import functional, init, utils  # noqa: F401
