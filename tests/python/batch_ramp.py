"""batch_ramp.py — a SIMULATED training loop of its own (simtorch, examples/sim/): a small GPT
written here, fp32, AdamW, whose micro-batch ramps up: --batch_size/4 in its first step,
--batch_size/2 in its second, --batch_size from its third. Its context is --ctx (argparse
default 256, not on the command lines the tests use) and its heads --attn_heads (default 4):
names of its own. Prints a FACTS line of what it ran. Used by tests/integration/batch_flags.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.h = h

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.h, C // self.h).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).contiguous().view(B, T, C))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class Net(nn.Module):
    def __init__(self, vocab, ctx, d, layers, h):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList([Block(d, h) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        B, T = idx.size()
        x = self.wte(idx) + self.wpe(torch.arange(0, T, device="cuda"))
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln_f(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--blocks", type=int, default=2)
    ap.add_argument("--attn_heads", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--ctx", type=int, default=256)
    ap.add_argument("--batch_size", type=int, default=16, help="the micro-batch after the ramp-up")
    ap.add_argument("--steps", type=int, default=4)
    a = ap.parse_args()
    ramp = [max(1, a.batch_size // 4), max(1, a.batch_size // 2)] + [a.batch_size] * max(0, a.steps - 2)
    model = Net(a.vocab, a.ctx, a.width, a.blocks, a.attn_heads)
    model.to("cuda")
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    print("FACTS " + " ".join("%s=%s" % kv for kv in (("seq_len", a.ctx), ("heads", a.attn_heads),
                                                          ("batch_size", a.batch_size))) +
          " ramp=" + ",".join(str(b) for b in ramp[:a.steps]), flush=True)
    for step in range(a.steps):
        x = torch.randint(0, a.vocab, (ramp[step], a.ctx)).to("cuda")
        loss = F.cross_entropy(model(x).view(-1, a.vocab), x.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        print("step %d (micro-batch %d)" % (step, ramp[step]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
