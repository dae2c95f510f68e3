"""controlnet_frozen16.py — a SIMULATED ControlNet training in the shape of diffusers'
examples/controlnet/train_controlnet.py: a frozen text encoder (CLIP's shape in miniature), a
frozen VAE (its encoder makes the latents; its decoder is loaded beside, unused) and a frozen
conditional UNet (ResNet blocks, cross-attention transformers reading the text states) from the
"pretrained model"; the trainable ControlNet made by ControlNetModel.from_unet(unet) (a copy of
the UNet's conv_in, time embedding, down blocks and mid block, with the conditioning image's
embedding and a zero 1x1 convolution per residual), trained with AdamW on the conditioning
image batch beside the images. As the script does: the ControlNet, optimizer and DataLoader go
through accelerator.prepare() (the ControlNet fp32 on the device, its forward under the mixed
precision's autocast), then `vae.to(accelerator.device, dtype=weight_dtype)`, the same for the
UNet and the text encoder (weight_dtype float16 under --mixed_precision fp16, bfloat16 under bf16,
else float32); each step the VAE encodes pixel_values.to(weight_dtype), DDPM noise, the text
states, the ControlNet's residuals, the UNet's prediction with them added, an fp32 MSE,
accelerator.backward, clipping, the optimizer step. Its flags are the script's: --resolution,
--train_batch_size, --gradient_accumulation_steps, --mixed_precision, --max_train_steps,
--learning_rate, --max_grad_norm, --set_grads_to_none; --block_out_channels sizes the UNet (SD's
320,640,1280,1280 would be full size). --use_8bit_adam (bitsandbytes) is not simulated.
It prints its truth in VRAMTRACE_TORCH_STATS: frozen_elems and frozen_dtype (the UNet's, the VAE's
and the text encoder's weights as they lie on the device), frozen_bytes, trainable_params and
trainable_param_bytes, batch_size, resolution, steps, oom and oom_phase. Used by
tests/integration/controlnet_frozen16.sh."""
import argparse
import copy
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SIM = os.path.join(HERE, "..", "..", "examples", "sim")
sys.path.insert(0, SIM)
sys.path.insert(0, os.path.join(SIM, "simmodels", "site-packages"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from simtorch.utils.data import DataLoader, Dataset  # noqa: E402
from accelerate import Accelerator  # noqa: E402
from diffusers import DDPMScheduler  # noqa: E402
from diffusers.models.embeddings import TimestepEmbedding, Timesteps  # noqa: E402
from diffusers.models.resnet import Downsample2D, ResnetBlock2D, Upsample2D  # noqa: E402
from sim_truth import finish, record_oom, state_tensors, tensor_bytes  # noqa: E402

VOCAB, TOKENS = 49408, 77


class CLIPLayer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.layer_norm1, self.layer_norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.q_proj, self.k_proj = nn.Linear(d, d), nn.Linear(d, d)
        self.v_proj, self.out_proj = nn.Linear(d, d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.h = d // 64

    def forward(self, x):
        B, T, C = x.shape
        y = self.layer_norm1(x)
        q, k, v = (m(y).view(B, T, self.h, C // self.h).transpose(1, 2)
                   for m in (self.q_proj, self.k_proj, self.v_proj))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.out_proj(a.transpose(1, 2).contiguous().view(B, T, C))
        return x + self.fc2(F.gelu(self.fc1(self.layer_norm2(x))))


class CLIPTextModel(nn.Module):
    def __init__(self, d, layers):
        super().__init__()
        self.token_embedding = nn.Embedding(VOCAB, d)
        self.position_embedding = nn.Embedding(TOKENS, d)
        self.layers = nn.ModuleList([CLIPLayer(d) for _ in range(layers)])
        self.final_layer_norm = nn.LayerNorm(d)

    def forward(self, input_ids, return_dict=False):
        pos = torch.arange(0, TOKENS, device=input_ids.device)
        x = self.token_embedding(input_ids) + self.position_embedding(pos)
        for layer in self.layers:
            x = layer(x)
        return (self.final_layer_norm(x),)


class VaeResnet(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.norm1, self.norm2 = nn.GroupNorm(32, cin, eps=1e-6), nn.GroupNorm(32, cout, eps=1e-6)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.conv_shortcut = nn.Conv2d(cin, cout, 1) if cin != cout else None

    def forward(self, x):
        h = self.conv1(F.silu(self.norm1(x)))
        h = self.conv2(F.silu(self.norm2(h)))
        return (self.conv_shortcut(x) if self.conv_shortcut is not None else x) + h


class LatentDist:
    def __init__(self, moments):
        self.mean, self.logvar = moments.chunk(2, dim=1)

    def sample(self):
        std = torch.exp(0.5 * self.logvar)
        return self.mean + std * torch.randn(*self.mean.shape, dtype=self.mean.dtype,
                                             device=self.mean.device)


class EncoderOutput:
    def __init__(self, dist):
        self.latent_dist = dist


class AutoencoderKL(nn.Module):
    """Encoder: conv_in, per level two ResNet blocks and a strided convolution (three times down),
    a mid ResNet block, GroupNorm, SiLU, conv_out to 2x4 moments, quant_conv. The decoder mirrors
    it (loaded and moved with the VAE; training never calls it)."""

    def __init__(self, ch=(32, 64, 128, 128)):
        super().__init__()
        self.conv_in = nn.Conv2d(3, ch[0], 3, padding=1)
        enc, c = [], ch[0]
        for i, o in enumerate(ch):
            enc += [VaeResnet(c, o), VaeResnet(o, o)]
            if i < len(ch) - 1:
                enc.append(Downsample2D(o))
            c = o
        self.down = nn.ModuleList(enc)
        self.mid = VaeResnet(c, c)
        self.norm_out = nn.GroupNorm(32, c, eps=1e-6)
        self.conv_out = nn.Conv2d(c, 8, 3, padding=1)
        self.quant_conv = nn.Conv2d(8, 8, 1)
        self.post_quant_conv = nn.Conv2d(4, 4, 1)
        self.decoder = nn.ModuleList([nn.Conv2d(4, c, 3, padding=1), VaeResnet(c, c)] + [
            VaeResnet(o, o) for o in reversed(ch) for _ in range(3)] + [
            nn.Conv2d(ch[0], 3, 3, padding=1)])

    def encode(self, x):
        h = self.conv_in(x)
        for m in self.down:
            h = m(h)
        h = self.conv_out(F.silu(self.norm_out(self.mid(h))))
        return EncoderOutput(LatentDist(self.quant_conv(h)))


class CrossAttention(nn.Module):
    def __init__(self, d, ctx, heads=8):
        super().__init__()
        self.heads = heads
        self.to_q = nn.Linear(d, d, bias=False)
        self.to_k, self.to_v = nn.Linear(ctx, d, bias=False), nn.Linear(ctx, d, bias=False)
        self.to_out = nn.Linear(d, d)

    def forward(self, x, ctx=None):
        ctx = x if ctx is None else ctx
        B, T, C = x.shape
        q = self.to_q(x).view(B, T, self.heads, C // self.heads).transpose(1, 2)
        k = self.to_k(ctx).view(B, ctx.shape[1], self.heads, C // self.heads).transpose(1, 2)
        v = self.to_v(ctx).view(B, ctx.shape[1], self.heads, C // self.heads).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v)
        return self.to_out(a.transpose(1, 2).reshape(B, T, C))


class Transformer2DModel(nn.Module):
    """GroupNorm, proj_in, one BasicTransformerBlock (self-attention, cross-attention on the
    text states, a GEGLU feed-forward), proj_out, the residual."""

    def __init__(self, c, ctx):
        super().__init__()
        self.norm = nn.GroupNorm(32, c, eps=1e-6)
        self.proj_in, self.proj_out = nn.Linear(c, c), nn.Linear(c, c)
        self.norm1, self.norm2, self.norm3 = nn.LayerNorm(c), nn.LayerNorm(c), nn.LayerNorm(c)
        self.attn1, self.attn2 = CrossAttention(c, c), CrossAttention(c, ctx)
        self.ff_proj, self.ff_out = nn.Linear(c, 8 * c), nn.Linear(4 * c, c)

    def forward(self, x, ctx):
        B, C, H, W = x.shape
        h = self.norm(x).view(B, C, H * W).transpose(1, 2)
        h = self.proj_in(h)
        h = h + self.attn1(self.norm1(h))
        h = h + self.attn2(self.norm2(h), ctx)
        a, gate = self.ff_proj(self.norm3(h)).chunk(2, dim=-1)
        h = h + self.ff_out(a * F.gelu(gate))
        h = self.proj_out(h).transpose(1, 2).reshape(B, C, H, W)
        return h + x


class DownBlock(nn.Module):
    def __init__(self, cin, cout, temb, ctx, attn, down):
        super().__init__()
        self.resnets = nn.ModuleList([ResnetBlock2D(cin, cout, temb), ResnetBlock2D(cout, cout, temb)])
        self.attentions = nn.ModuleList([Transformer2DModel(cout, ctx) for _ in range(2)]) if attn else None
        self.downsamplers = nn.ModuleList([Downsample2D(cout)]) if down else None

    def forward(self, h, temb, ctx):
        out = ()
        for i, r in enumerate(self.resnets):
            h = r(h, temb)
            if self.attentions is not None:
                h = self.attentions[i](h, ctx)
            out += (h,)
        if self.downsamplers is not None:
            h = self.downsamplers[0](h)
            out += (h,)
        return h, out


class MidBlock(nn.Module):
    def __init__(self, c, temb, ctx):
        super().__init__()
        self.resnets = nn.ModuleList([ResnetBlock2D(c, c, temb), ResnetBlock2D(c, c, temb)])
        self.attentions = nn.ModuleList([Transformer2DModel(c, ctx)])

    def forward(self, h, temb, ctx):
        h = self.resnets[0](h, temb)
        return self.resnets[1](self.attentions[0](h, ctx), temb)


class UpBlock(nn.Module):
    def __init__(self, cin, prev, cout, temb, ctx, attn, up):
        super().__init__()
        self.resnets = nn.ModuleList([ResnetBlock2D((prev if i == 0 else cout) + (cin if i == 2 else cout), cout, temb)
                                      for i in range(3)])
        self.attentions = nn.ModuleList([Transformer2DModel(cout, ctx) for _ in range(3)]) if attn else None
        self.upsamplers = nn.ModuleList([Upsample2D(cout)]) if up else None

    def forward(self, h, skips, temb, ctx):
        for i, r in enumerate(self.resnets):
            h = r(torch.cat([h, skips[-1 - i]], dim=1), temb)
            if self.attentions is not None:
                h = self.attentions[i](h, ctx)
        return self.upsamplers[0](h) if self.upsamplers is not None else h


class UNet2DConditionModel(nn.Module):
    def __init__(self, ch, ctx):
        super().__init__()
        temb = 4 * ch[0]
        self.ch, self.ctx = ch, ctx
        self.conv_in = nn.Conv2d(4, ch[0], 3, padding=1)
        self.time_proj = Timesteps(ch[0], True, 0)
        self.time_embedding = TimestepEmbedding(ch[0], temb)
        last = len(ch) - 1
        self.down_blocks = nn.ModuleList([DownBlock(ch[max(i - 1, 0)], c, temb, ctx, i < last, i < last)
                                          for i, c in enumerate(ch)])
        self.mid_block = MidBlock(ch[-1], temb, ctx)
        rev = list(reversed(ch))
        self.up_blocks = nn.ModuleList([UpBlock(rev[min(i + 1, last)], rev[max(i - 1, 0)], c, temb, ctx, i > 0, i < last)
                                        for i, c in enumerate(rev)])
        self.conv_norm_out = nn.GroupNorm(32, ch[0], eps=1e-5)
        self.conv_out = nn.Conv2d(ch[0], 4, 3, padding=1)

    @property
    def dtype(self):
        return next(iter(self.parameters())).dtype

    def embed(self, sample, timestep):
        t_emb = self.time_proj(timestep).to(self.dtype)
        return self.time_embedding(t_emb)

    def forward(self, sample, timestep, encoder_hidden_states, down_block_additional_residuals=None,
                mid_block_additional_residual=None, return_dict=False):
        emb = self.embed(sample, timestep)
        h = self.conv_in(sample)
        res = (h,)
        for b in self.down_blocks:
            h, out = b(h, emb, encoder_hidden_states)
            res += out
        if down_block_additional_residuals is not None:
            res = tuple(r + a for r, a in zip(res, down_block_additional_residuals))
        h = self.mid_block(h, emb, encoder_hidden_states)
        if mid_block_additional_residual is not None:
            h = h + mid_block_additional_residual
        for b in self.up_blocks:
            n = len(b.resnets)
            h, res = b(h, res[-n:], emb, encoder_hidden_states), res[:-n]
        return (self.conv_out(F.silu(self.conv_norm_out(h))),)


class ControlNetConditioningEmbedding(nn.Module):
    def __init__(self, cout, chans=(16, 32, 96, 256)):
        super().__init__()
        self.conv_in = nn.Conv2d(3, chans[0], 3, padding=1)
        blocks = []
        for i in range(len(chans) - 1):
            blocks += [nn.Conv2d(chans[i], chans[i], 3, padding=1),
                       nn.Conv2d(chans[i], chans[i + 1], 3, padding=1, stride=2)]
        self.blocks = nn.ModuleList(blocks)
        self.conv_out = nn.Conv2d(chans[-1], cout, 3, padding=1)

    def forward(self, cond):
        h = F.silu(self.conv_in(cond))
        for b in self.blocks:
            h = F.silu(b(h))
        return self.conv_out(h)


class ControlNetModel(nn.Module):
    @classmethod
    def from_unet(cls, unet):
        """The UNet's encoder copied (load_state_dict of its conv_in, time embedding, down and mid
        blocks), the conditioning embedding and the zero convolutions new."""
        self = cls()
        self.time_proj = unet.time_proj
        for name in ("conv_in", "time_embedding", "down_blocks", "mid_block"):
            setattr(self, name, copy.deepcopy(getattr(unet, name)))
        ch = unet.ch
        self.controlnet_cond_embedding = ControlNetConditioningEmbedding(ch[0])
        outs = [ch[0]] + [c for i, c in enumerate(ch) for _ in range(3 if i < len(ch) - 1 else 2)]
        self.controlnet_down_blocks = nn.ModuleList([nn.Conv2d(c, c, 1) for c in outs])
        self.controlnet_mid_block = nn.Conv2d(ch[-1], ch[-1], 1)
        return self

    def forward(self, sample, timestep, encoder_hidden_states, controlnet_cond, return_dict=False):
        t_emb = self.time_proj(timestep).to(sample.dtype)
        emb = self.time_embedding(t_emb)
        h = self.conv_in(sample) + self.controlnet_cond_embedding(controlnet_cond)
        res = (h,)
        for b in self.down_blocks:
            h, out = b(h, emb, encoder_hidden_states)
            res += out
        h = self.mid_block(h, emb, encoder_hidden_states)
        down = [z(r) for z, r in zip(self.controlnet_down_blocks, res)]
        return down, self.controlnet_mid_block(h)


class Fill50k(Dataset):
    """fill50k's rows: an image, its conditioning image (both normalized, 3 x R x R) and the
    prompt's 77 token ids."""

    def __init__(self, n, resolution):
        self.n, self.r = n, resolution

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"pixel_values": torch.randn(3, self.r, self.r),
                "conditioning_pixel_values": torch.randn(3, self.r, self.r),
                "input_ids": torch.randint(0, VOCAB, size=(TOKENS,))}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--resolution", type=int, default=512)
    ap.add_argument("--train_batch_size", type=int, default=4)
    ap.add_argument("--gradient_accumulation_steps", type=int, default=1)
    ap.add_argument("--mixed_precision", choices=["no", "fp16", "bf16"], default=None)
    ap.add_argument("--max_train_steps", type=int, default=2)
    ap.add_argument("--learning_rate", type=float, default=5e-6)
    ap.add_argument("--max_grad_norm", type=float, default=1.0)
    ap.add_argument("--set_grads_to_none", action="store_true")
    ap.add_argument("--use_8bit_adam", action="store_true")
    ap.add_argument("--block_out_channels", default="64,128,256,256")
    ap.add_argument("--text_width", type=int, default=256)
    ap.add_argument("--text_layers", type=int, default=6)
    a = ap.parse_args()
    if a.use_8bit_adam:
        sys.exit("controlnet_frozen16.py: --use_8bit_adam (bitsandbytes) is not simulated")
    print(f"controlnet_frozen16.py: {torch.SIMULATION}", flush=True)
    ch = tuple(int(c) for c in a.block_out_channels.split(","))
    B, R = a.train_batch_size, a.resolution
    accelerator = Accelerator(gradient_accumulation_steps=a.gradient_accumulation_steps,
                              mixed_precision=a.mixed_precision)
    text_encoder = CLIPTextModel(a.text_width, a.text_layers)
    vae = AutoencoderKL()
    unet = UNet2DConditionModel(ch, a.text_width)
    noise_scheduler = DDPMScheduler(num_train_timesteps=1000)
    controlnet = ControlNetModel.from_unet(unet)
    vae.requires_grad_(False)
    unet.requires_grad_(False)
    text_encoder.requires_grad_(False)
    controlnet.train()
    params_to_optimize = list(controlnet.parameters())
    optimizer = torch.optim.AdamW(params_to_optimize, lr=a.learning_rate, betas=(0.9, 0.999),
                                  weight_decay=1e-2, eps=1e-8)
    train_dataloader = DataLoader(Fill50k(B * a.max_train_steps * a.gradient_accumulation_steps, R),
                                  shuffle=True, batch_size=B)
    frozen = list(vae.parameters()) + list(unet.parameters()) + list(text_encoder.parameters())
    # (train_controlnet.py's: the frozen models are cast to the mixed precision's 16 bits)
    weight_dtype = torch.float32
    if accelerator.mixed_precision == "fp16":
        weight_dtype = torch.float16
    elif accelerator.mixed_precision == "bf16":
        weight_dtype = torch.bfloat16
    truth = {"program": "controlnet_frozen16.py", "batch_size": B, "resolution": R,
             "grad_accum": a.gradient_accumulation_steps, "mixed_precision": accelerator.mixed_precision,
             "frozen_elems": sum(p.numel() for p in frozen),
             "frozen_dtype": {torch.float16: "fp16", torch.bfloat16: "bf16"}.get(weight_dtype, "fp32"),
             "trainable_params": sum(p.numel() for p in params_to_optimize), "optimizer": "adamw",
             "steps": 0, "oom": False, "oom_phase": None, "grad_bytes": None, "optim_state_bytes": None}
    phase = "model"
    try:
        controlnet, optimizer, train_dataloader = accelerator.prepare(controlnet, optimizer, train_dataloader)
        vae.to(accelerator.device, dtype=weight_dtype)
        unet.to(accelerator.device, dtype=weight_dtype)
        text_encoder.to(accelerator.device, dtype=weight_dtype)
        frozen = list(vae.parameters()) + list(unet.parameters()) + list(text_encoder.parameters())
        truth.update(frozen_bytes=tensor_bytes(frozen), trainable_param_bytes=tensor_bytes(params_to_optimize))
        truth["params"] = truth["frozen_elems"] + truth["trainable_params"]
        for step, batch in enumerate(train_dataloader):
            with accelerator.accumulate(controlnet):
                phase = "forward"
                latents = vae.encode(batch["pixel_values"].to(weight_dtype)).latent_dist.sample()
                latents = latents * 0.18215
                noise = torch.randn(*latents.shape, dtype=latents.dtype, device=latents.device)
                timesteps = torch.randint(0, 1000, (B,), device=latents.device)
                noisy_latents = noise_scheduler.add_noise(latents.float(), noise.float(), timesteps).to(
                    weight_dtype)
                encoder_hidden_states = text_encoder(batch["input_ids"], return_dict=False)[0]
                controlnet_image = batch["conditioning_pixel_values"].to(weight_dtype)
                down_block_res_samples, mid_block_res_sample = controlnet(
                    noisy_latents, timesteps, encoder_hidden_states=encoder_hidden_states,
                    controlnet_cond=controlnet_image, return_dict=False)
                model_pred = unet(noisy_latents, timesteps, encoder_hidden_states=encoder_hidden_states,
                                  down_block_additional_residuals=[s.to(weight_dtype)
                                                                   for s in down_block_res_samples],
                                  mid_block_additional_residual=mid_block_res_sample.to(weight_dtype),
                                  return_dict=False)[0]
                loss = F.mse_loss(model_pred.float(), noise.float(), reduction="mean")
                del down_block_res_samples, mid_block_res_sample, model_pred, latents, noisy_latents
                phase = "backward"
                accelerator.backward(loss)
                if accelerator.sync_gradients:
                    if truth["grad_bytes"] is None:
                        truth["grad_bytes"] = tensor_bytes(p.grad for p in params_to_optimize)
                    accelerator.clip_grad_norm_(params_to_optimize, a.max_grad_norm)
                phase = "optimizer"
                optimizer.step()
                optimizer.zero_grad(set_to_none=a.set_grads_to_none)
                del loss, noise, encoder_hidden_states, controlnet_image, batch
            if accelerator.sync_gradients:
                truth["steps"] += 1
                if truth["optim_state_bytes"] is None:
                    truth["optim_state_bytes"] = tensor_bytes(state_tensors(optimizer))
                print(f"step {truth['steps']}: (simulated)", flush=True)
            if truth["steps"] >= a.max_train_steps:
                break
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
