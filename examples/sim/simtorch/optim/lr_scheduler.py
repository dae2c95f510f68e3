"""simtorch/optim/lr_scheduler.py — SIMULATION of torch.optim.lr_scheduler: LRScheduler wraps its
optimizer's step() (a `wrapper` frame of this file on every optimizer step, as torch's); LambdaLR
multiplies each group's initial rate by a function of the step count. No device memory."""
import functools


class LRScheduler:
    def __init__(self, optimizer, last_epoch=-1):
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [g["initial_lr"] for g in optimizer.param_groups]
        self.last_epoch = last_epoch

        def patch_track_step_called(opt):
            if hasattr(opt.step, "_wrapped_by_lr_sched"):
                return opt.step

            def wrap_step(step_fn):
                opt_ref = opt
                func = step_fn.__func__

                @functools.wraps(func)
                def wrapper(*args, **kwargs):
                    opt_ref._opt_called = True
                    return func.__get__(opt_ref, opt_ref.__class__)(*args, **kwargs)

                wrapper._wrapped_by_lr_sched = True
                return wrapper

            opt.step = wrap_step(opt.step)

        patch_track_step_called(self.optimizer)
        self._initial_step()

    def _initial_step(self):
        self.step()

    def get_lr(self):
        return self.base_lrs

    def get_last_lr(self):
        return self._last_lr

    def step(self, epoch=None):
        self.last_epoch += 1
        self._last_lr = self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, self._last_lr):
            group["lr"] = lr


class LambdaLR(LRScheduler):
    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        n = len(optimizer.param_groups)
        self.lr_lambdas = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else [lr_lambda] * n
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [base * lmbda(self.last_epoch) for lmbda, base in zip(self.lr_lambdas, self.base_lrs)]

