"""enc_cls.py — a SIMULATED encoder classifier written in the program (examples/sim's simtorch):
XLM-R-base's shape (hidden 768, 12 layers, 12 heads, vocabulary 250002), 3 labels read from the
first token, no output layer over the vocabulary; its word and position embeddings frozen (192 M
of its 278 M parameters); two optimizers stepped one after the other, SGD with momentum on the
encoder layers and AdamW on the head; fp16 autocast with a GradScaler. Prints its facts
(FACTS, VRAMTRACE_TORCH_STATS: its tensors' peak, each optimizer's state) for
tests/integration/sim_encoder.sh.
    python3 tests/python/enc_cls.py --bs 64 --max_len 256"""
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
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.fc, self.act, self.proj = nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d)
        self.drop, self.h = nn.Dropout(0.1), h

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = (m(x).view(B, T, self.h, C // self.h).transpose(1, 2) for m in (self.q, self.k, self.v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=False)
        x = self.ln1(x + self.drop(self.o(y.transpose(1, 2).contiguous().view(B, T, C))))
        return self.ln2(x + self.drop(self.proj(self.act(self.fc(x)))))


class Classifier(nn.Module):
    def __init__(self, vocab, max_pos, d, layers, h, labels):
        super().__init__()
        self.word, self.pos = nn.Embedding(vocab, d), nn.Embedding(max_pos, d)
        self.ln = nn.LayerNorm(d)
        self.layers = nn.ModuleList([Layer(d, h) for _ in range(layers)])
        self.dense, self.out = nn.Linear(d, d), nn.Linear(d, labels)

    def forward(self, idx):
        B, T = idx.size()
        x = self.ln(self.word(idx) + self.pos(torch.arange(0, T, device="cuda")))
        for layer in self.layers:
            x = layer(x)
        return self.out(torch.tanh(self.dense(x[:, 0])))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vocab", type=int, default=250002)
    ap.add_argument("--labels", type=int, default=3)
    ap.add_argument("--bs", type=int, default=32)
    ap.add_argument("--max_len", type=int, default=256)
    ap.add_argument("--steps", type=int, default=3)
    a = ap.parse_args()
    truth = {"program": "enc_cls.py", "batch_size": a.bs, "seq_len": a.max_len, "vocab_size": a.vocab,
             "labels": a.labels, "lm_head": False, "steps": 0, "oom": False, "oom_phase": None}
    phase = "model"
    try:
        model = Classifier(a.vocab, 514, 768, 12, 12, a.labels)
        model.word.requires_grad_(False)
        model.pos.requires_grad_(False)
        body = [p for layer in model.layers for p in layer.parameters()] + list(model.ln.parameters())
        head = list(model.dense.parameters()) + list(model.out.parameters())
        model.to("cuda")
        truth["trainable_param_bytes"] = tensor_bytes(body + head)
        opt_body = torch.optim.SGD(body, lr=1e-2, momentum=0.9)
        opt_head = torch.optim.AdamW(head, lr=1e-3, fused=True)
        scaler = torch.amp.GradScaler("cuda")
        for step in range(a.steps):
            phase = "forward"
            x = torch.randint(0, a.vocab, (a.bs, a.max_len)).to("cuda")
            y = torch.randint(0, a.labels, (a.bs,)).to("cuda")
            with torch.autocast("cuda", dtype=torch.float16):
                loss = F.cross_entropy(model(x), y)
            phase = "backward"
            scaler.scale(loss).backward()
            phase = "optimizer"
            scaler.step(opt_body)
            scaler.step(opt_head)
            scaler.update()
            if step == 0:
                truth["sgd_state_bytes"] = tensor_bytes(state_tensors(opt_body))
                truth["adamw_state_bytes"] = tensor_bytes(state_tensors(opt_head))
            opt_body.zero_grad(set_to_none=True)
            opt_head.zero_grad(set_to_none=True)
            truth["steps"] = step + 1
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    print_truth(torch, truth)
    return 1 if truth["oom"] else 0


if __name__ == "__main__":
    sys.exit(main())
