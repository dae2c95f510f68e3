"""softmax_attn.py — a SIMULATED decoder whose attention is written out by hand, as nanoGPT's
non-flash path and many own models write it: att = q @ k^T * scale, F.softmax(att), att @ v (no
fused kernel), then the head's logits and cross-entropy. Prints its truth (VRAMTRACE_TORCH_STATS:
the logits' bytes B*T*V*4, each layer's softmax output B*H*T*T*4). Used by
tests/integration/softmax_attn.sh: the softmax outputs are the attention's, not logits/loss."""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402


class Attn(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.h = h

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.h, C // self.h).transpose(1, 2)
        k = k.view(B, T, self.h, C // self.h).transpose(1, 2)
        v = v.view(B, T, self.h, C // self.h).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // self.h))
        att = F.softmax(att, dim=-1)
        y = att @ v
        return self.proj(y.transpose(1, 2).contiguous().view(B, T, C))


class Net(nn.Module):
    def __init__(self, V, T, d, layers, h):
        super().__init__()
        self.wte = nn.Embedding(V, d)
        self.wpe = nn.Embedding(T, d)
        self.blocks = nn.ModuleList([Attn(d, h) for _ in range(layers)])
        self.head = nn.Linear(d, V, bias=False)

    def forward(self, idx, targets):
        t = idx.size()[1]
        x = self.wte(idx) + self.wpe(torch.arange(0, t, dtype=torch.long, device=idx.device).unsqueeze(0))
        for b in self.blocks:
            x = x + b(x)
        logits = self.head(x)
        return F.cross_entropy(logits.view(-1, logits.size()[-1]), targets.view(-1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch_size", type=int, default=16)
    ap.add_argument("--steps", type=int, default=2)
    a = ap.parse_args()
    V, T, d, L, H = 4096, 128, 128, 2, 4
    model = Net(V, T, d, L, H).to("cuda")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for _ in range(a.steps):
        x = torch.randint(0, V, (a.batch_size, T)).to("cuda")
        y = torch.randint(0, V, (a.batch_size, T)).to("cuda")
        loss = model(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    print("VRAMTRACE_TORCH_STATS " + json.dumps({
        "simulation": True, "batch_size": a.batch_size, "layers": L, "heads": H, "T": T, "V": V,
        "logits_bytes": a.batch_size * T * V * 4, "softmax_bytes": a.batch_size * H * T * T * 4}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
