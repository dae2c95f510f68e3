"""simtorch/amp.py — SIMULATION of torch.amp.GradScaler: its scale and growth tracker (0-dim
device tensors), the scaled loss, unscale_'s inverse scale and found-inf flag, update()."""
from . import Tensor
from . import functional as F


class GradScaler:
    def __init__(self, enabled=True):
        self.enabled = enabled
        self._scale = self._growth = self._inv = self._found_inf = None

    def scale(self, loss):
        """loss * scale (a new 0-dim tensor); creates the scale tensors the first time."""
        if not self.enabled:
            return loss
        if self._scale is None:
            self._scale = Tensor((), "float32")
            self._growth = Tensor((), "int64")
        return F.scalar_op(loss)

    def unscale_(self, optimizer):
        if self.enabled and self._inv is None:
            self._inv = Tensor((), "float32")
            self._found_inf = Tensor((), "float32")

    def step(self, optimizer):
        self.unscale_(optimizer)
        optimizer.step()

    def update(self):
        if self.enabled:
            tmp = Tensor((), "float32")  # found_inf summed over devices
            del tmp
            self._inv = self._found_inf = None
