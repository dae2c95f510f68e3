"""simtorch/nn/init.py — SIMULATION of torch.nn.init: initialisers fill values in place, which a
simulation does not have; they allocate nothing."""


def _noop(tensor, *args, **kwargs):
    return tensor


normal_ = zeros_ = ones_ = uniform_ = constant_ = trunc_normal_ = _noop
kaiming_normal_ = kaiming_uniform_ = xavier_uniform_ = xavier_normal_ = _noop
