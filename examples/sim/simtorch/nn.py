"""simtorch/nn.py — SIMULATION of torch.nn's module tree (Module, Linear, LayerNorm, Embedding,
Dropout, GELU, ModuleList) and clip_grad_norm_: parameters are built on the CPU and moved to
the device by Module.to('cuda'), one allocation per parameter, like PyTorch."""
from . import Parameter, Tensor
from . import functional as F


class Module:
    def __init__(self):
        self.training = True

    def __call__(self, *args):
        return self.forward(*args)

    def children(self):
        for v in vars(self).values():
            if isinstance(v, Module):
                yield v
            elif isinstance(v, (list, tuple)):
                yield from (m for m in v if isinstance(m, Module))
            elif isinstance(v, dict):
                yield from (m for m in v.values() if isinstance(m, Module))

    def named_parameters(self, prefix="", seen=None):
        """(dotted name, Parameter), each parameter once (tied weights too)."""
        seen = set() if seen is None else seen
        for k, v in vars(self).items():
            if isinstance(v, Parameter) and id(v) not in seen:
                seen.add(id(v))
                yield prefix + k, v
        for k, v in vars(self).items():
            subs = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, (list, tuple)) else [(None, v)]
            for j, m in subs:
                if isinstance(m, Module):
                    name = prefix + k + ("" if j is None else f".{j}") + "."
                    yield from m.named_parameters(name, seen)

    def parameters(self):
        return [p for _, p in self.named_parameters()]

    def to(self, device):
        """Moves every parameter to the device (one allocation each)."""
        if device.startswith("cuda"):
            for p in self.parameters():
                if not p.ptr:
                    p.to_device()
        return self

    def train(self, mode=True):
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)


class ModuleList(Module, list):
    def __init__(self, mods):
        Module.__init__(self)
        list.__init__(self, mods)

    def children(self):
        return iter(self)

    def named_parameters(self, prefix="", seen=None):
        seen = set() if seen is None else seen
        for i, m in enumerate(self):
            yield from m.named_parameters(f"{prefix}{i}.", seen)


class Linear(Module):
    def __init__(self, fan_in, fan_out, bias=True):
        super().__init__()
        self.weight = Parameter((fan_out, fan_in))
        self.bias = Parameter((fan_out,)) if bias else None

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)


class LayerNorm(Module):
    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = Parameter((ndim,))
        self.bias = Parameter((ndim,)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, self.weight, self.bias)


class Embedding(Module):
    def __init__(self, num, dim):
        super().__init__()
        self.weight = Parameter((num, dim))

    def forward(self, idx):
        return F.embedding(idx, self.weight)


class Dropout(Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        return F.dropout(x, self.p, self.training)


class GELU(Module):
    def forward(self, x):
        return F.gelu(x)


def clip_grad_norm_(parameters, max_norm):
    """torch.nn.utils.clip_grad_norm_: per-gradient norms (foreach_norm), their stack, the total
    norm and the clip coefficient: small temporaries; the scaling is in place. Returns 0.0."""
    grads = [p for p in parameters if p.grad is not None]
    norms = [Tensor((), "float32") for _ in grads]
    stacked = Tensor((len(norms),), "float32")
    total = Tensor((), "float32")
    coef = Tensor((), "float32")
    del norms, stacked, coef
    return total.item()
