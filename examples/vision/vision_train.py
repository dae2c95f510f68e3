"""examples/vision/vision_train.py — a plain image-classification training loop (argparse flags,
its own loop): torchvision's ResNet-50 (SGD with Nesterov momentum and weight decay, fp16 autocast
with a GradScaler by default) or ViT-B/16 from timm (torchvision's when timm is missing; AdamW,
bf16 by default), random images made on the host and copied over: nothing to download.

Flags are the same as the SIMULATION examples/sim/sim_vision.py:

    python examples/vision/vision_train.py --model resnet50 --batch-size 64 --steps 2

At the end, and after an out-of-memory error (exit 1), it prints ONE line
`VRAMTRACE_TORCH_STATS {json}`: PyTorch's own memory figures and the ground truth of the
categories (parameters, buffers, gradients just before the first optimizer step, optimizer state
after it, counted from the program's objects; examples/hf/train_truth.py)."""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "hf"))
from train_truth import (torch, need_torch, tensor_bytes, state_tensors, model_truth,  # noqa: E402
                         record_failure, versions, print_truth)

MODELS = {
    # name: (family, default optimizer, default amp)
    "resnet50": ("resnet", "sgd", "fp16"),
    "vit-b16": ("vit", "adamw", "bf16"),
}


def build(name, image_size, classes):
    """The model and where it came from (timm or torchvision); random weights."""
    if name == "resnet50":
        import torchvision
        return torchvision.models.resnet50(weights=None, num_classes=classes), "torchvision"
    try:
        import timm
    except ImportError:
        import torchvision
        return (torchvision.models.vit_b_16(weights=None, num_classes=classes, image_size=image_size),
                "torchvision")
    return (timm.create_model("vit_base_patch16_224", pretrained=False, num_classes=classes,
                              img_size=image_size), "timm")


def freeze_backbone(model):
    """A linear probe: requires_grad off for every weight but the classifier head's (timm's
    get_classifier(), torchvision's ViT heads or ResNet fc)."""
    head = model.get_classifier() if hasattr(model, "get_classifier") else \
        getattr(model, "heads", None) or model.fc
    for p in model.parameters():
        p.requires_grad_(False)
    for p in head.parameters():
        p.requires_grad_(True)


def make_optimizer(name, params, lr):
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=0.9, nesterov=True, weight_decay=1e-4)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=lr, weight_decay=0.05)
    return torch.optim.Adafactor(params, lr=lr, foreach=False)  # torch >= 2.5


def parser():
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
                    help="train through torch.compile(model)")
    return ap


def main():
    a = parser().parse_args()
    need_torch()
    family, default_opt, default_amp = MODELS[a.model]
    opt_name, amp = a.optimizer or default_opt, a.amp or default_amp
    tokens = (a.image_size // 16) ** 2 + 1 if family == "vit" else None
    dev = "cuda"
    torch.manual_seed(0)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "none": None}[amp]
    truth = {"program": "vision_train.py", "args": vars(a), "family": family, "model": a.model,
             "batch_size": a.batch_size, "image_size": a.image_size, "tokens": tokens,
             "num_classes": a.num_classes, "grad_accum": a.grad_accum, "optimizer": opt_name,
             "freeze_backbone": a.freeze_backbone, "amp": amp, "steps": 0, "oom": False, "oom_phase": None, "grad_bytes": None,
             "optim_state_bytes": None}
    phase, rc = "model", 0
    try:
        model, truth["model_source"] = build(a.model, a.image_size, a.num_classes)
        if a.freeze_backbone:
            freeze_backbone(model)
        model.to(dev)
        model.train()
        if a.compile:
            model = torch.compile(model)
        trainable = model_truth(model, truth)
        truth["buffer_elements"] = sum(b.numel() for b in model.buffers())
        truth["buffer_bytes"] = tensor_bytes(model.buffers())
        print(f"number of parameters: {truth['params'] / 1e6:.2f}M ({truth['model_source']})",
              flush=True)
        criterion = torch.nn.CrossEntropyLoss()
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
            print(f"step {step}: loss {loss.item() * a.grad_accum:.4f}", flush=True)
    except Exception as e:  # noqa: BLE001 — OOM (or anything else): the truth line still comes
        rc = record_failure(truth, e, phase)
    truth.update(versions("torchvision", "timm"))
    print_truth(truth)
    return rc


if __name__ == "__main__":
    sys.exit(main())
