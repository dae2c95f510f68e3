"""simtorch/nn/modules/module.py — SIMULATION of torch.nn.Module: parameters, buffers and
submodules registered by attribute assignment; every call goes through _wrapped_call_impl and
_call_impl to forward() (then its forward hooks); .to('cuda') moves parameters then buffers, children first (_apply),
one allocation each, through a nested convert() as torch's."""
from collections import OrderedDict

from ..parameter import Parameter
from ...autograd.grad_mode import no_grad
from ... import _C
from ..._C._tensor import TensorBase


class Module:
    def __init__(self):
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_forward_hooks", OrderedDict())

    def __setattr__(self, name, value):
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            for d in (self.__dict__, self._buffers, self._modules):
                d.pop(name, None)
            params[name] = value
        elif params is not None and name in params:
            params[name] = value
        elif isinstance(value, Module):
            self.__dict__.pop(name, None)
            self._parameters.pop(name, None)
            self._modules[name] = value
        elif params is not None and name in self._modules:
            self._modules[name] = value
        elif params is not None and name in self._buffers:
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def register_buffer(self, name, tensor, persistent=True):
        self._buffers[name] = tensor
        if not persistent:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        self._parameters[name] = param

    def add_module(self, name, module):
        self._modules[name] = module

    def forward(self, *args, **kwargs):
        raise NotImplementedError(type(self).__name__ + ".forward")

    def _call_impl(self, *args, **kwargs):
        result = self.forward(*args, **kwargs)
        for hook in list(self.__dict__.get("_forward_hooks", {}).values()):
            hooked = hook(self, args, result)
            if hooked is not None:
                result = hooked
        return result

    def register_forward_hook(self, hook):
        """hook(module, args, output) after each forward (its result, if not None, replaces the
        output); the handle's remove() takes it away."""
        hooks = self._forward_hooks
        key = object()
        hooks[key] = hook

        class _Handle:
            def remove(self):
                hooks.pop(key, None)
        return _Handle()

    def _wrapped_call_impl(self, *args, **kwargs):
        return self._call_impl(*args, **kwargs)

    __call__ = _wrapped_call_impl

    # the module tree
    def named_children(self):
        for name, m in self._modules.items():
            if m is not None:
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def named_modules(self, memo=None, prefix=""):
        memo = set() if memo is None else memo
        if self in memo:
            return
        memo.add(self)
        yield prefix, self
        for name, m in self._modules.items():
            if m is not None:
                yield from m.named_modules(memo, prefix + ("." if prefix else "") + name)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """(dotted name, Parameter) in registration order, module by module; a shared
        (tied) parameter once."""
        seen = set()
        mods = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for mname, m in mods:
            for k, p in m._parameters.items():
                if p is None or (remove_duplicate and id(p) in seen):
                    continue
                seen.add(id(p))
                yield (mname + "." if mname else "") + k, p

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True):
        for mname, m in self.named_modules(prefix=prefix):
            for k, b in m._buffers.items():
                if b is not None:
                    yield (mname + "." if mname else "") + k, b

    def buffers(self, recurse=True):
        for _, b in self.named_buffers():
            yield b

    # moving to the device
    def _apply(self, fn, recurse=True):
        if recurse:
            for module in self.children():
                module._apply(fn)
        for key, param in self._parameters.items():
            if param is None:
                continue
            with no_grad():
                param_applied = fn(param)
            param.data = param_applied
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        """to(device), to(dtype), to(device, dtype): a dtype converts the floating-point
        parameters and buffers only (integer buffers keep theirs), as PyTorch's does."""
        device, dtype = kwargs.get("device"), kwargs.get("dtype")
        for a in args:
            if isinstance(a, _C.dtype):
                dtype = a
            else:
                device = a

        def convert(t):
            if not isinstance(t, TensorBase):
                return t
            if dtype is not None and t.dtype.is_floating_point and t.dtype != dtype:
                t = t.to(dtype)
            return t.to(device) if device is not None else t

        return self._apply(convert)

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda())

    def train(self, mode=True):
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            p.grad = None

    def apply(self, fn):
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def extra_repr(self):
        return ""

    def __repr__(self):
        return f"{type(self).__name__}({self.extra_repr()})"
