"""seq_warmup.py — a SIMULATED training loop of its own (simtorch, examples/sim/): a small decoder
written here (no position ids, no position embedding: its attention alone orders the tokens unless
--learned_pos), fp32, AdamW, whose sequence length warms up: --warmup_seq_len tokens per sample
for its first --warmup_steps optimizer steps, then --seq_len. The micro-batch --batch_size never
changes. With --batch_size left off the program runs 4, which no flag says. Prints a FACTS line of what it
runs and one line per step done. Used by tests/integration/seq_warmup.sh."""
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
    def __init__(self, vocab, ctx, d, layers, h, learned_pos):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(ctx, d) if learned_pos else None
        self.blocks = nn.ModuleList([Block(d, h) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        B, T = idx.size()
        x = self.wte(idx)
        if self.wpe is not None:
            x = x + self.wpe(torch.arange(0, T, device="cuda"))
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln_f(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--blocks", type=int, default=2)
    ap.add_argument("--attn_heads", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--seq_len", type=int, default=256, help="tokens per sample after the warm-up")
    ap.add_argument("--warmup_seq_len", type=int, default=64)
    ap.add_argument("--warmup_steps", type=int, default=2)
    ap.add_argument("--batch_size", type=int, default=None, help="the micro-batch, every step (4 if not given)")
    ap.add_argument("--learned_pos", action="store_true", help="a position embedding over arange(T)")
    ap.add_argument("--steps", type=int, default=4)
    a = ap.parse_args()
    rows = a.batch_size or 4  # (no flag says 4)
    model = Net(a.vocab, a.seq_len, a.width, a.blocks, a.attn_heads, a.learned_pos)
    model.to("cuda")
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    print("FACTS batch_size=%d seq_len=%d warmup_seq_len=%d warmup_steps=%d steps=%d" %
          (rows, a.seq_len, a.warmup_seq_len, a.warmup_steps, a.steps), flush=True)
    for step in range(a.steps):
        T = a.warmup_seq_len if step < a.warmup_steps else a.seq_len
        x = torch.randint(0, a.vocab, (rows, T)).to("cuda")
        loss = F.cross_entropy(model(x).view(-1, a.vocab), x.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        print("step %d (T %d, micro-batch %d)" % (step, T, rows), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
