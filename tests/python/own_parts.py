"""own_parts.py — a SIMULATED training loop of its own (simtorch, examples/sim/): a small decoder
written here whose class is named GPT (as many programs name theirs; not nanoGPT's model.py),
fp32, AdamW. --ema keeps an fp32 EMA copy of every weight, updated after each step, in code of
its own (no library's EMA class); --ema_copy keeps it as copy.deepcopy of the model instead, whose
own position table (a parameter of its own, beside its children) comes first in the copy and last
in the model as .to() moved it; --lora freezes the weights and trains low-rank adapters on the
attention's projection written here (no peft). Prints a FACTS line of what it ran (ema_bytes: its
EMA copy's bytes) and "step N" after each step (none: it ran out of memory in its first). Used by
tests/integration/own_parts.sh."""
import argparse
import copy
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402


class Adapted(nn.Module):
    """a linear layer with a low-rank adapter beside it (its own LoRA)"""

    def __init__(self, d, r):
        super().__init__()
        self.base = nn.Linear(d, d)
        self.a, self.b = nn.Linear(d, r, bias=False), nn.Linear(r, d, bias=False)

    def forward(self, x):
        return self.base(x) + self.b(self.a(x))


class Block(nn.Module):
    def __init__(self, d, h, r):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), Adapted(d, r) if r else nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.h = h

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.h, C // self.h).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).contiguous().view(B, T, C))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab, ctx, d, layers, h, r, own_pos=False):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Parameter(torch.zeros(ctx, d)) if own_pos else nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList([Block(d, h, r) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        B, T = idx.size()
        x = self.wte(idx) + (self.wpe[:T] if isinstance(self.wpe, nn.Parameter) else
                             self.wpe(torch.arange(0, T, device="cuda")))
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln_f(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch_size", type=int, default=8)
    ap.add_argument("--ema", action="store_true")
    ap.add_argument("--ema_copy", action="store_true")
    ap.add_argument("--lora", type=int, default=0, help="the adapters' rank (0: none)")
    ap.add_argument("--steps", type=int, default=3)
    a = ap.parse_args()
    V, T, d = 8192, 256, 256
    model = GPT(V, T, d, 4, 4, a.lora, own_pos=a.ema_copy)
    if a.lora:
        for n, p in model.named_parameters():
            p.requires_grad_(n.endswith(".a.weight") or n.endswith(".b.weight"))
    model.to("cuda")
    params = [p for p in model.parameters() if p.requires_grad]
    ema = [p.detach().clone() for p in model.parameters()] if a.ema else []
    if a.ema_copy:
        ema = list(copy.deepcopy(model).requires_grad_(False).parameters())
    opt = torch.optim.AdamW(params, lr=3e-4)
    print("FACTS ema=%d lora=%d params=%d trainable=%d ema_bytes=%d" % (
        bool(a.ema or a.ema_copy), a.lora, sum(p.numel() for p in model.parameters()), sum(p.numel() for p in params),
        sum(e.numel() * e.element_size() for e in ema)), flush=True)
    for step in range(a.steps):
        x = torch.randint(0, V, (a.batch_size, T)).to("cuda")
        loss = F.cross_entropy(model(x).view(-1, V), x.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        for e, p in zip(ema, model.parameters()):  # its own EMA: e = 0.999 e + 0.001 p
            e.mul_(0.999).add_(p.detach(), alpha=0.001)
        print("step %d" % step, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
