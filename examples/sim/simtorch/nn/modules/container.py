"""simtorch/nn/modules/container.py — SIMULATION of torch.nn.Sequential, ModuleList, ModuleDict,
and Flatten: containers whose children are registered in order."""
from .module import Module


class Sequential(Module):
    def __init__(self, *mods):
        super().__init__()
        for i, m in enumerate(mods):
            self._modules[str(i)] = m

    def __iter__(self):
        return iter(self._modules.values())

    def __len__(self):
        return len(self._modules)

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def forward(self, input):  # noqa: A002
        for m in self._modules.values():
            input = m(input)
        return input


class ModuleList(Module):
    def __init__(self, mods=()):
        super().__init__()
        for i, m in enumerate(mods):
            self._modules[str(i)] = m

    def __iter__(self):
        return iter(self._modules.values())

    def __len__(self):
        return len(self._modules)

    def __getitem__(self, i):
        return list(self._modules.values())[i]


class ModuleDict(Module):
    def __init__(self, mods=None):
        super().__init__()
        for k, m in (mods or {}).items():
            self._modules[k] = m

    def __getitem__(self, k):
        return self._modules[k]

    def keys(self):
        return self._modules.keys()


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):  # noqa: A002
        return input.flatten(self.start_dim, self.end_dim)
