"""simtorch/amp/grad_scaler.py — SIMULATION of torch.amp.GradScaler: an enabled scaler keeps a
scale and a growth tracker (0-dim device tensors, made at the first scale()), multiplies the
loss, unscales the gradients in place with an inverse scale and a found-inf flag, hands them
to a fused optimizer or checks them, and updates the scale; a disabled one allocates nothing."""
from .. import _C
from .._C import _aten as A


class _MultiDeviceReplicator:
    """The per-device copies of a tensor (one device here: a .to() that copies nothing)."""

    def __init__(self, master):
        self.master = master
        self._per_device = {}

    def get(self, device):
        t = self._per_device.get(device)
        if t is None:
            # .to(device, non_blocking=True, copy=True): always a copy
            t = self._per_device[device] = A.clone(self.master, op="_to_copy")
        return t


class GradScaler:
    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._enabled = bool(enabled)
        self._scale = None
        self._growth_tracker = None
        self._per_optimizer_states = {}

    def is_enabled(self):
        return self._enabled

    def _lazy_init_scale_growth_tracker(self, dev):
        self._scale = A.full((), _C.float32, dev)
        self._growth_tracker = A.full((), _C.int32, dev)

    def scale(self, outputs):
        """outputs * scale (a new 0-dim tensor in the backward's graph)."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._lazy_init_scale_growth_tracker(outputs.device)
        return outputs * self._scale

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        per_device_inv_scale = _MultiDeviceReplicator(inv_scale)
        per_device_found_inf = _MultiDeviceReplicator(found_inf)
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    per_device_inv_scale.get(p.grad.device)
                    per_device_found_inf.get(p.grad.device)
        # _amp_foreach_non_finite_check_and_unscale_: in place, no memory
        return per_device_found_inf._per_device

    def _state(self, optimizer):
        return self._per_optimizer_states.setdefault(id(optimizer), {"stage": "ready"})

    def unscale_(self, optimizer):
        if not self._enabled:
            return
        st = self._state(optimizer)
        if st["stage"] == "unscaled":
            raise RuntimeError("unscale_() has already been called on this optimizer")
        # self._scale.double().reciprocal().float()
        inv_scale = A.cast(A.reciprocal(A.cast(self._scale, _C.float64)), _C.float32)
        found_inf = A.full((), _C.float32, self._scale.device)
        st["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
        st["stage"] = "unscaled"

    def step(self, optimizer, *args, **kwargs):
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        st = self._state(optimizer)
        if getattr(optimizer, "_step_supports_amp_scaling", False):
            if st["stage"] == "ready":
                dummy = A.full((), _C.float32, self._scale.device)
                found = A.full((), _C.float32, self._scale.device)
                st["found_inf_per_device"] = self._unscale_grads_(optimizer, dummy, found, True)
            found_inf = sum(v.to(self._scale.device) for v in st["found_inf_per_device"].values())
            optimizer.grad_scale = None if st["stage"] == "unscaled" else self._scale
            optimizer.found_inf = found_inf
            retval = optimizer.step(*args, **kwargs)
            st["stage"] = "stepped"
            optimizer.grad_scale = optimizer.found_inf = None
            return retval
        if st["stage"] == "ready":
            self.unscale_(optimizer)
        retval = optimizer.step(*args, **kwargs)  # found_inf.item() == 0 in a simulation
        st["stage"] = "stepped"
        return retval

    def update(self, new_scale=None):
        """_amp_update_scale_ in place; the per-optimizer tensors are dropped."""
        if not self._enabled:
            return
        found_infs = [f for st in self._per_optimizer_states.values()
                      for f in st.get("found_inf_per_device", {}).values()]
        found_inf_combined = found_infs[0] if found_infs else None
        for f in found_infs[1:]:
            found_inf_combined = found_inf_combined + f
        del found_infs, found_inf_combined
        self._per_optimizer_states = {}
