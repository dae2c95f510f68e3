"""sim_own16.py — SIMULATION: 16-bit weights that the program itself makes, with no library to
say their shape. Two loops over a small transformer written here:
  --mode lora    a Llama-like decoder (RMSNorm, SwiGLU) cast to bf16 and frozen, the program's
                 own fp32 LoRA adapters on q and v (made after the cast), fused AdamW on them,
                 bf16 autocast
  --mode master  a GPT (LayerNorm, GELU MLP, tied head) in bf16 without autocast, fp32 master
                 copies of every weight kept by the program (their .grad = the bf16 .grad cast
                 to fp32), foreach AdamW on the masters, and an fp32 EMA of the masters
    python3 examples/sim/sim_own16.py --mode lora --batch 2 --seq 256
Its last line is VRAMTRACE_TORCH_STATS with the program's own counts (parameters, trainable
ones, their bytes, the masters', the optimizer's state)."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from sim_truth import tensor_bytes, state_tensors, print_truth, record_oom  # noqa: E402


class Attn(nn.Module):
    def __init__(self, d, heads, bias):
        super().__init__()
        self.q = nn.Linear(d, d, bias=bias)
        self.k = nn.Linear(d, d, bias=bias)
        self.v = nn.Linear(d, d, bias=bias)
        self.o = nn.Linear(d, d, bias=bias)
        self.h = heads

    def forward(self, x):
        B, T, C = x.size()
        q = self.q(x).view(B, T, self.h, C // self.h).transpose(1, 2)
        k = self.k(x).view(B, T, self.h, C // self.h).transpose(1, 2)
        v = self.v(x).view(B, T, self.h, C // self.h).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o(y.transpose(1, 2).contiguous().view(B, T, C))


class Gated(nn.Module):
    def __init__(self, d, inner):
        super().__init__()
        self.gate = nn.Linear(d, inner, bias=False)
        self.up = nn.Linear(d, inner, bias=False)
        self.down = nn.Linear(inner, d, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class Gelu(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, 4 * d)
        self.proj = nn.Linear(4 * d, d)

    def forward(self, x):
        return self.proj(F.gelu(self.fc(x)))


class Block(nn.Module):
    def __init__(self, d, h, llama):
        super().__init__()
        norm = nn.RMSNorm if llama else nn.LayerNorm
        self.n1, self.attn, self.n2 = norm(d), Attn(d, h, not llama), norm(d)
        self.mlp = Gated(d, 8 * d // 3 // 64 * 64) if llama else Gelu(d)

    def forward(self, x):
        x = x + self.attn(self.n1(x))
        return x + self.mlp(self.n2(x))


class Net(nn.Module):
    def __init__(self, vocab, ctx, d, depth, h, llama):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = None if llama else nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList([Block(d, h, llama) for _ in range(depth)])
        self.norm = nn.RMSNorm(d) if llama else nn.LayerNorm(d)
        self.out = nn.Linear(d, vocab, bias=False)
        if not llama:
            self.out.weight = self.tok.weight

    def forward(self, idx):
        x = self.tok(idx)
        if self.pos is not None:
            x = x + self.pos(torch.arange(0, idx.size()[1], device="cuda"))
        for b in self.blocks:
            x = b(x)
        return self.out(self.norm(x))


class LoRA(nn.Module):
    def __init__(self, base, r):
        super().__init__()
        self.base = base
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(x)) * 2.0


def count(ps):
    n = 0
    for p in ps:
        k = 1
        for s in p.shape:
            k *= s
        n += k
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["lora", "master"], default="lora")
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--vocab", type=int, default=8000)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--rank", type=int, default=8)
    ap.add_argument("--steps", type=int, default=2)
    a = ap.parse_args()
    print("sim_own16.py: " + torch.SIMULATION, flush=True)
    lora = a.mode == "lora"
    truth = {"program": "sim_own16.py", "mode": a.mode, "hidden": a.dim, "layers": a.depth,
             "heads": a.heads, "vocab_size": a.vocab, "batch_size": a.batch, "seq_len": a.seq,
             "steps": 0, "oom": False, "oom_phase": None}
    phase = "model"
    try:
        model = Net(a.vocab, a.seq, a.dim, a.depth, a.heads, lora)
        model.to(torch.bfloat16)
        if lora:
            model.requires_grad_(False)
            for b in model.blocks:
                b.attn.q = LoRA(b.attn.q, a.rank)
                b.attn.v = LoRA(b.attn.v, a.rank)
        params = list(model.parameters())
        trained = [p for p in params if p.requires_grad]
        model.to("cuda")
        truth.update(params=count(params), trainable_params=count(trained),
                     param_bytes=tensor_bytes(params), trainable_param_bytes=tensor_bytes(trained))
        master, ema = [], []
        if not lora:
            master = [nn.Parameter(p.detach().float()) for p in params]
            ema = [m.detach().clone() for m in master]
            truth.update(master_bytes=tensor_bytes(master), ema_bytes=tensor_bytes(ema))
        opt = torch.optim.AdamW(trained if lora else master, lr=1e-4, fused=lora, foreach=not lora)
        for step in range(a.steps):
            phase = "forward"
            x = torch.randint(0, a.vocab, (a.batch, a.seq)).to("cuda")
            if lora:
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits = model(x)
                    loss = F.cross_entropy(logits.view(-1, a.vocab), x.view(-1))
            else:
                logits = model(x)
                loss = F.cross_entropy(logits.view(-1, a.vocab), x.view(-1))
            del logits
            phase = "backward"
            loss.backward()
            phase = "optimizer"
            for m, p in zip(master, params):
                m.grad = p.grad.float()
                p.grad = None
            opt.step()
            if step == 0:
                truth["optim_state_bytes"] = tensor_bytes(state_tensors(opt))
            opt.zero_grad(set_to_none=True)
            for m, p, e in zip(master, params, ema):
                p.copy_(m)
                e.lerp_(m, 0.001)
            truth["steps"] = step + 1
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    print_truth(torch, truth)
    return 1 if truth["oom"] else 0


if __name__ == "__main__":
    sys.exit(main())
