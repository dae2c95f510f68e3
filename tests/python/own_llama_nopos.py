"""own_llama_nopos.py — a SIMULATED Llama-like decoder written in the program (RMSNorm, SwiGLU,
fused attention, an untied head) with NO position ids and no rotary tensors: the only int64
tensor of its forward is the token batch. fp32 weights under fp16 autocast, the loss scaled by
hand (no GradScaler), gradients accumulated over --accum micro-batches, AdamW (foreach). Prints its
own facts: "facts: micro_batch=B seq_len=T layers=L dim=d vocab=V position_ids=none
model_class=Decoder". Used by
tests/integration/own_llama_nopos.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402


class Attn(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.q, self.k = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
        self.v, self.o = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
        self.h = heads

    def forward(self, x):
        B, T, C = x.size()
        q = self.q(x).view(B, T, self.h, C // self.h).transpose(1, 2)
        k = self.k(x).view(B, T, self.h, C // self.h).transpose(1, 2)
        v = self.v(x).view(B, T, self.h, C // self.h).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o(y.transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    def __init__(self, d, heads, inner):
        super().__init__()
        self.n1, self.attn, self.n2 = nn.RMSNorm(d), Attn(d, heads), nn.RMSNorm(d)
        self.gate, self.up = nn.Linear(d, inner, bias=False), nn.Linear(d, inner, bias=False)
        self.down = nn.Linear(inner, d, bias=False)

    def forward(self, x):
        x = x + self.attn(self.n1(x))
        h = self.n2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Decoder(nn.Module):
    def __init__(self, vocab, d, layers, heads, inner):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)  # no position table, no rotary tensors
        self.blocks = nn.ModuleList([Block(d, heads, inner) for _ in range(layers)])
        self.norm, self.head = nn.RMSNorm(d), nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        x = self.emb(idx)
        for b in self.blocks:
            x = b(x)
        return self.head(self.norm(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--micro_batch_size", type=int, default=4)
    ap.add_argument("--seq_len", type=int, default=512)
    ap.add_argument("--accum", type=int, default=2)
    a = ap.parse_args()
    L, d, V = 4, 512, 8000
    torch.cuda.init()
    model = Decoder(V, d, L, 8, 1408).to("cuda")
    params = list(model.parameters())
    print("facts: micro_batch=%d seq_len=%d layers=%d dim=%d vocab=%d position_ids=none model_class=%s"
          % (a.micro_batch_size, a.seq_len, L, d, V, type(model).__name__), flush=True)
    opt = torch.optim.AdamW(params, lr=3e-4, foreach=True)
    for _ in range(2):
        for _ in range(a.accum):
            x = torch.randint(0, V, (a.micro_batch_size, a.seq_len)).to("cuda")
            with torch.autocast("cuda", dtype=torch.float16):
                logits = model(x)
            loss = F.cross_entropy(logits.float().view(-1, V), x.view(-1))
            del logits
            (loss * (1024.0 / a.accum)).backward()  # the loss scaled by hand
            del x, loss
        for p in params:
            p.grad.div_(1024.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
    print("trained 2 steps", flush=True)


if __name__ == "__main__":
    main()
