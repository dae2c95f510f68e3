"""frozen_inversion.py — a SIMULATED textual inversion in the program's own loop: one trained token
embedding (fp32, the only parameter AdamW holds) feeds a frozen fp32 text encoder, whose states
(--text_layers MLP blocks, 8 by default) condition a frozen denoiser cast to fp16 (its noise-level MLP kept in fp32, as diffusers' modules
kept in fp32 are), under fp16 autocast. The denoiser's gradient flows to its input only, so its
forward keeps its activations for the embedding's gradient although none of its weights trains.
Prints its own facts before training ("FACTS trainable=N trainable_bytes=B weights_bytes=B
frozen_fp16_bytes=B", then "AMP fp16 autocast, ..."), after its first step "STATE grads=B optimizer=B", and at the end "trained N
steps at batch B, allocated at most A" (torch.cuda.max_memory_allocated); an out-of-memory error
prints "OOM in PHASE" and exits 1. Used by tests/integration/frozen_inversion.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402


class TextEncoder(nn.Module):
    def __init__(self, vocab, d, layers):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab, d)
        self.ups = nn.ModuleList([nn.Linear(d, 4 * d) for _ in range(layers)])
        self.downs = nn.ModuleList([nn.Linear(4 * d, d) for _ in range(layers)])

    def forward(self, ids):
        x = self.token_embedding(ids)
        for up, down in zip(self.ups, self.downs):
            x = x + down(F.gelu(up(x)))
        return x


class Denoiser(nn.Module):
    def __init__(self, c, d, blocks, wide):
        super().__init__()
        self.time_in, self.time_out = nn.Linear(c, 4 * c), nn.Linear(4 * c, c)  # kept fp32
        self.conv_in = nn.Conv2d(4, c, 3, padding=1)
        self.ctx = nn.Linear(d, c)
        self.convs = nn.ModuleList([nn.Conv2d(c, c, 3, padding=1) for _ in range(blocks)])
        self.ups = nn.ModuleList([nn.Linear(c, wide) for _ in range(blocks)])
        self.downs = nn.ModuleList([nn.Linear(wide, c) for _ in range(blocks)])
        self.conv_out = nn.Conv2d(c, 4, 3, padding=1)

    def forward(self, x, t, context):
        B, _, H, W = x.size()
        temb = self.time_out(F.silu(self.time_in(t)))  # no gradient flows here: copies freed
        h = self.conv_in(x) + temb.unsqueeze(-1).unsqueeze(-1)
        h = h + self.ctx(context).mean(1).unsqueeze(-1).unsqueeze(-1)  # the gradient's way in
        for conv, up, down in zip(self.convs, self.ups, self.downs):
            h = h + conv(F.silu(h))
            C = h.size()[1]
            s = h.view(B, C, H * W).transpose(1, 2)
            s = s + down(F.gelu(up(s)))
            h = s.transpose(1, 2).reshape(B, C, H, W)
        return self.conv_out(F.silu(h))


def nbytes(ts):
    return sum(t.numel() * t.element_size() for t in ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train_batch_size", type=int, default=16)
    ap.add_argument("--resolution", type=int, default=128)
    ap.add_argument("--max_train_steps", type=int, default=2)
    ap.add_argument("--mixed_precision", default="fp16")
    ap.add_argument("--text_layers", type=int, default=8)
    a = ap.parse_args()
    weight_dtype = torch.float16 if a.mixed_precision == "fp16" else torch.float32
    text_encoder = TextEncoder(49408, 768, a.text_layers)
    unet = Denoiser(640, 768, 24, 8192)
    unet.requires_grad_(False)
    text_encoder.requires_grad_(False)
    text_encoder.token_embedding.requires_grad_(True)
    text_encoder = text_encoder.to("cuda")
    unet = unet.to("cuda", dtype=weight_dtype)
    unet.time_in.to(dtype=torch.float32)
    unet.time_out.to(dtype=torch.float32)
    emb = text_encoder.token_embedding.weight
    every = list(text_encoder.parameters()) + list(unet.parameters())
    frozen16 = [p for p in unet.parameters() if p.element_size() == 2]
    print(f"FACTS trainable={emb.numel()} trainable_bytes={nbytes([emb])} weights_bytes={nbytes(every)} "
          f"frozen_fp16_bytes={nbytes(frozen16)}", flush=True)
    print(f"AMP {a.mixed_precision} autocast, no GradScaler; trained: the token embedding alone", flush=True)
    opt = torch.optim.AdamW([emb], lr=5e-4, foreach=True)
    side = a.resolution // 8
    phase = "batch"
    try:
        for it in range(a.max_train_steps):
            phase = "batch"
            ids = torch.randint(0, 49408, (a.train_batch_size, 77)).to("cuda")
            latents = torch.randn(a.train_batch_size, 4, side, side).to("cuda")
            t = torch.randn(a.train_batch_size, 640).to("cuda")
            phase = "forward"
            with torch.autocast("cuda", dtype=weight_dtype):
                states = text_encoder(ids)
                pred = unet(latents, t, states)
            loss = F.mse_loss(pred.float(), latents.float())
            phase = "backward"
            loss.backward()
            grads = nbytes([emb.grad])
            phase = "optimizer"
            opt.step()
            if it == 0:
                state = sum(nbytes([v]) for s in opt.state.values() for v in s.values()
                            if hasattr(v, "numel") and v.numel() > 1)
                print(f"STATE grads={grads} optimizer={state}", flush=True)
            opt.zero_grad(set_to_none=True)
            del ids, latents, t, states, pred, loss
    except torch.OutOfMemoryError:
        print(f"OOM in {phase}", flush=True)
        return 1
    print(f"trained {a.max_train_steps} steps at batch {a.train_batch_size}, allocated at most "
          f"{torch.cuda.max_memory_allocated()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
