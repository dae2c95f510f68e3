"""enc_pairs.py — a SIMULATED sentence encoder trained as unsupervised SimCSE is (examples/sim's
simtorch): BERT-base's shape (hidden 768, 12 layers, 12 heads, vocabulary 30522) with no output
layer over its vocabulary; each sentence given twice in one forward (--bs sentences: 2*bs
sequences of --seq_len tokens), the first token's state through an MLP pooler, a bs x bs cosine
similarity matrix and a cross entropy against arange(bs) (in-batch negatives); fp16 autocast with
a GradScaler, AdamW. Prints its facts (VRAMTRACE_TORCH_STATS: the sequences a forward sees, the
allocator's peaks) for tests/integration/enc_no_head.sh.
    python3 tests/python/enc_pairs.py --bs 256 --seq_len 32"""
import argparse
import os
import sys

SIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim")
sys.path.insert(0, SIM)
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from sim_truth import tensor_bytes, state_tensors, print_truth, record_oom  # noqa: E402


class Layer(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.qkv, self.o = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.fc, self.act, self.proj = nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d)
        self.drop, self.h = nn.Dropout(0.1), h

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.h, C // self.h).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=False)
        x = self.ln1(x + self.drop(self.o(y.transpose(1, 2).contiguous().view(B, T, C))))
        return self.ln2(x + self.drop(self.proj(self.act(self.fc(x)))))


class Encoder(nn.Module):
    def __init__(self, vocab, max_pos, d, layers, h):
        super().__init__()
        self.word, self.pos = nn.Embedding(vocab, d), nn.Embedding(max_pos, d)
        self.ln, self.drop = nn.LayerNorm(d), nn.Dropout(0.1)
        self.layers = nn.ModuleList([Layer(d, h) for _ in range(layers)])
        self.mlp = nn.Linear(d, d)  # the pooler's MLP: no layer over the vocabulary

    def forward(self, idx):
        B, T = idx.size()
        x = self.drop(self.ln(self.word(idx) + self.pos(torch.arange(0, T, device="cuda"))))
        for layer in self.layers:
            x = layer(x)
        return torch.tanh(self.mlp(x[:, 0]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bs", type=int, default=64)
    ap.add_argument("--seq_len", type=int, default=32)
    ap.add_argument("--steps", type=int, default=2)
    a = ap.parse_args()
    V, d = 30522, 768
    truth = {"program": "enc_pairs.py", "sentences": a.bs, "sequences_per_forward": 2 * a.bs,
             "seq_len": a.seq_len, "vocab_size": V, "lm_head": False, "steps": 0, "oom": False,
             "oom_phase": None}
    phase = "model"
    try:
        model = Encoder(V, 512, d, 12, 12).to("cuda")
        opt = torch.optim.AdamW(model.parameters(), lr=3e-5, fused=True)
        scaler = torch.amp.GradScaler("cuda")
        for step in range(a.steps):
            phase = "forward"
            ids = torch.randint(0, V, (a.bs, 2, a.seq_len)).to("cuda")
            with torch.autocast("cuda", dtype=torch.float16):
                z = model(ids.view(2 * a.bs, a.seq_len)).view(a.bs, 2, d)
                z1, z2 = z[:, 0], z[:, 1]
                z1 = z1 / z1.norm(dim=-1, keepdim=True)
                z2 = z2 / z2.norm(dim=-1, keepdim=True)
                sim = (z1 @ z2.transpose(0, 1)) / 0.05
                loss = F.cross_entropy(sim, torch.arange(a.bs, device="cuda"))
            phase = "backward"
            scaler.scale(loss).backward()
            phase = "optimizer"
            scaler.step(opt)
            scaler.update()
            truth["adamw_state_bytes"] = tensor_bytes(state_tensors(opt))
            opt.zero_grad(set_to_none=True)
            del ids, z, z1, z2, sim, loss
            truth["steps"] = step + 1
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    print_truth(torch, truth)
    return 1 if truth["oom"] else 0


if __name__ == "__main__":
    sys.exit(main())
