"""examples/sim/sim_diffusion.py — a SIMULATION of a plain diffusion-model training script
(argparse flags, its own loop) on simtorch and the simulated diffusers of simmodels/: a UNet2D
denoiser (diffusers' UNet2DModel in the configuration of its unconditional training example:
ResNet blocks with GroupNorm and SiLU, a sinusoidal timestep embedding with an MLP, attention at
low resolution, skip connections), DDPM noising, a noise-prediction MSE loss, AdamW (foreach),
bf16 autocast, gradient clipping and an EMA copy of the weights (diffusers' EMAModel). No GPU,
no PyTorch: the tensors eager PyTorch would allocate, on the fake CUDA runtime.

    python3 examples/sim/sim_diffusion.py --batch-size 16 --image-size 64 --steps 2

It prints `VRAMTRACE_TORCH_STATS {json}` at the end (also after an out-of-memory error): its
own truth (parameters, gradients before the first optimizer step, optimizer state and the EMA
copy's bytes, counted from its objects) and the allocator's counters."""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "simmodels", "site-packages"))
import simtorch as torch  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from diffusers import DDPMScheduler, EMAModel, UNet2DModel  # noqa: E402
from sim_truth import (tensor_bytes, state_tensors, print_truth,  # noqa: E402
                       record_oom)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--image-size", type=int, default=64)
    ap.add_argument("--grad-accum", type=int, default=1)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--ema", action=argparse.BooleanOptionalAction, default=True,
                    help="keep an EMA copy of the weights (default: on)")
    ap.add_argument("--ema-decay", type=float, default=0.9999)
    ap.add_argument("--amp", choices=["bf16", "none"], default="bf16")
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--num-train-timesteps", type=int, default=1000)
    a = ap.parse_args()
    print(f"sim_diffusion.py: {torch.SIMULATION}", flush=True)
    dev = "cuda"
    dtype = torch.bfloat16 if a.amp == "bf16" else None
    truth = {"program": "sim_diffusion.py", "family": "unet2d", "model": "unet2d-ddpm",
             "batch_size": a.batch_size, "image_size": a.image_size, "grad_accum": a.grad_accum,
             "optimizer": "adamw", "amp": a.amp, "ema": a.ema, "steps": 0, "oom": False,
             "oom_phase": None, "grad_bytes": None, "optim_state_bytes": None, "ema_bytes": 0}
    phase = "model"
    try:
        model = UNet2DModel(sample_size=a.image_size)
        params = list(model.parameters())
        truth.update(params=sum(p.numel() for p in params),
                     trainable_params=sum(p.numel() for p in params if p.requires_grad),
                     trainable_tensors=len(params),
                     largest_param=max(p.numel() for p in params))
        print(f"number of parameters: {truth['params'] / 1e6:.2f}M", flush=True)
        model.to(dev)
        model.train()
        truth["param_bytes"] = tensor_bytes(params)
        truth["trainable_param_bytes"] = truth["param_bytes"]
        ema_model = None
        if a.ema:
            phase = "ema"
            ema_model = EMAModel(model.parameters(), decay=a.ema_decay)
            truth["ema_bytes"] = tensor_bytes(ema_model.shadow_params)
        noise_scheduler = DDPMScheduler(num_train_timesteps=a.num_train_timesteps)
        optimizer = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.95, 0.999),
                                      weight_decay=1e-6, eps=1e-8)
        for step in range(a.steps):
            for _ in range(a.grad_accum):
                phase = "forward"
                clean_images = torch.randn(a.batch_size, 3, a.image_size, a.image_size)
                clean_images = clean_images.to(dev)
                noise = torch.randn(clean_images.shape, device=clean_images.device)
                timesteps = torch.randint(0, a.num_train_timesteps, (a.batch_size,),
                                          device=clean_images.device)
                noisy_images = noise_scheduler.add_noise(clean_images, noise, timesteps)
                with torch.autocast("cuda", dtype=dtype, enabled=dtype is not None):
                    model_output = model(noisy_images, timesteps).sample
                loss = F.mse_loss(model_output.float(), noise.float()) / a.grad_accum
                phase = "backward"
                loss.backward()
                del model_output, noisy_images, noise, clean_images, loss
            if step == 0:
                truth["grad_bytes"] = tensor_bytes(p.grad for p in params)
            phase = "optimizer"
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            if step == 0:
                truth["optim_state_bytes"] = tensor_bytes(state_tensors(optimizer))
            if ema_model is not None:
                phase = "ema"
                ema_model.step(model.parameters())
            truth["steps"] = step + 1
            print(f"step {step}: (simulated)", flush=True)
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    print_truth(torch, truth)
    return 1 if truth["oom"] else 0


if __name__ == "__main__":
    sys.exit(main())
