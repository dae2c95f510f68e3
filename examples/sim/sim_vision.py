"""examples/sim/sim_vision.py — a SIMULATION of a plain image-classification training script
(argparse flags, its own loop) on simtorch and the simulated torchvision / timm of simmodels/:
ResNet-50 (SGD with Nesterov momentum and weight decay, fp16 autocast with a GradScaler by
default) or ViT-B/16 (AdamW, bf16 by default), images made on the host and copied over. No GPU,
no PyTorch: the tensors eager PyTorch would allocate, on the fake CUDA runtime.

    python3 examples/sim/sim_vision.py --model resnet50 --batch-size 64 --steps 2

It prints `VRAMTRACE_TORCH_STATS {json}` at the end (also after an out-of-memory error): its
own truth (parameters, gradients before the first optimizer step, optimizer state, counted from
its objects) and the allocator's counters."""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "simmodels", "site-packages"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
from sim_truth import (tensor_bytes, state_tensors, factored_elements, print_truth,  # noqa: E402
                       record_oom)

MODELS = {
    # name: (family, default optimizer, default amp)
    "resnet50": ("resnet", "sgd", "fp16"),
    "vit-b16": ("vit", "adamw", "bf16"),
}


def build(name, image_size, classes):
    if name == "resnet50":
        from torchvision.models import resnet50
        return resnet50(num_classes=classes)
    from timm import vit_base_patch16_224
    return vit_base_patch16_224(num_classes=classes, img_size=image_size)


def make_optimizer(name, params, lr):
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=0.9, nesterov=True, weight_decay=1e-4)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=lr, weight_decay=0.05)
    return torch.optim.Adafactor(params, lr=lr, foreach=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=sorted(MODELS), default="resnet50")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--image-size", type=int, default=224)
    ap.add_argument("--num-classes", type=int, default=1000)
    ap.add_argument("--grad-accum", type=int, default=1)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--optimizer", choices=["sgd", "adamw", "adafactor"], default=None,
                    help="default: sgd (ResNet), adamw (ViT)")
    ap.add_argument("--amp", choices=["bf16", "fp16", "none"], default=None,
                    help="default: fp16 with a GradScaler (ResNet), bf16 (ViT)")
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--freeze-backbone", action="store_true",
                    help="a linear probe: every weight frozen but the classifier head's")
    ap.add_argument("--compile", action="store_true",
                    help="train through torch.compile(model) (not simulated: it runs eagerly, said on stdout)")
    a = ap.parse_args()
    family, default_opt, default_amp = MODELS[a.model]
    opt_name, amp = a.optimizer or default_opt, a.amp or default_amp
    tokens = (a.image_size // 16) ** 2 + 1 if family == "vit" else None
    print(f"sim_vision.py: {torch.SIMULATION}", flush=True)
    dev = "cuda"
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "none": None}[amp]
    truth = {"program": "sim_vision.py", "family": family, "model": a.model,
             "batch_size": a.batch_size, "image_size": a.image_size, "tokens": tokens,
             "num_classes": a.num_classes, "grad_accum": a.grad_accum, "optimizer": opt_name,
             "freeze_backbone": a.freeze_backbone,
             "amp": amp, "steps": 0, "oom": False, "oom_phase": None, "grad_bytes": None,
             "optim_state_bytes": None}
    phase = "model"
    try:
        model = build(a.model, a.image_size, a.num_classes)
        if a.freeze_backbone:
            head = model.get_classifier() if family == "vit" else model.fc
            for p in model.parameters():
                p.requires_grad_(False)
            for p in head.parameters():
                p.requires_grad_(True)
        params = list(model.parameters())
        trainable = [p for p in params if p.requires_grad]
        truth.update(params=sum(p.numel() for p in params),
                     trainable_params=sum(p.numel() for p in trainable),
                     trainable_tensors=len(trainable),
                     factored_elements=factored_elements(trainable),
                     buffer_elements=sum(b.numel() for b in model.buffers()))
        print(f"number of parameters: {truth['params'] / 1e6:.2f}M", flush=True)
        model.to(dev)
        model.train()
        if a.compile:  # (the simulation's torch.compile returns the model: eager, said)
            model = torch.compile(model)
            print("sim_vision.py: --compile is simulated as eager", flush=True)
        truth["param_bytes"] = tensor_bytes(params)
        truth["trainable_param_bytes"] = tensor_bytes(trainable)
        truth["buffer_bytes"] = tensor_bytes(model.buffers())
        criterion = nn.CrossEntropyLoss()
        opt = make_optimizer(opt_name, trainable, a.lr)
        scaler = torch.amp.GradScaler("cuda", enabled=amp == "fp16")
        for step in range(a.steps):
            for _ in range(a.grad_accum):
                phase = "forward"
                images = torch.randn(a.batch_size, 3, a.image_size, a.image_size)
                images = images.to(dev)
                target = torch.randint(0, a.num_classes, (a.batch_size,))
                target = target.to(dev)
                with torch.autocast("cuda", dtype=dtype, enabled=dtype is not None):
                    output = model(images)
                    loss = criterion(output, target) / a.grad_accum
                phase = "backward"
                scaler.scale(loss).backward()
            if step == 0:
                truth["grad_bytes"] = tensor_bytes(p.grad for p in trainable)
            phase = "optimizer"
            scaler.step(opt)
            scaler.update()
            if step == 0:
                truth["optim_state_bytes"] = tensor_bytes(state_tensors(opt))
            opt.zero_grad(set_to_none=True)
            truth["steps"] = step + 1
            print(f"step {step}: (simulated)", flush=True)
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    print_truth(torch, truth)
    return 1 if truth["oom"] else 0


if __name__ == "__main__":
    sys.exit(main())
