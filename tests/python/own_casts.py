"""own_casts.py — a SIMULATED GPT written in the program, trained by a hand-written 16-bit loop whose
dtype casts are the program's own (x.float(): PyTorch's builtin, the program's line the innermost
Python frame): bf16 weights on the device (no autocast), fp32 MASTER weights kept by the program
(nn.Parameter(p.detach().float())), the bf16 gradients cast to fp32 into the masters' .grad after
each backward (m.grad = p.grad.float(), freed by zero_grad after the step), AdamW (foreach) over the
masters, the result copied back; the logits cast to fp32 for the loss (logits.float()), and a
per-token loss mask drawn on the host, moved to the device and cast there before the forward
(mask.cuda().float(), a batch's cast, alive until the next one). With --masters_after_batch the
first batch goes onto the device before the masters are made; with --keep_grads the masters' .grad
are kept across steps (zero_grad(set_to_none=False): cast once after the first backward, copied
into after the others). Prints its truth (VRAMTRACE_TORCH_STATS): the weights', the masters', the
master gradients', the logits copy's, the mask's and the token ids' bytes. Used by
tests/integration/own_casts.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from sim_truth import finish, record_oom, tensor_bytes  # noqa: E402


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.ln1, self.qkv, self.proj = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ln2, self.fc, self.out = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.h = h

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.h, C // self.h).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).contiguous().view(B, T, C))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
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
    ap.add_argument("--batch_size", type=int, default=4)
    ap.add_argument("--block_size", type=int, default=96)
    ap.add_argument("--n_embd", type=int, default=256)
    ap.add_argument("--n_layer", type=int, default=4)
    ap.add_argument("--n_head", type=int, default=4)
    ap.add_argument("--vocab_size", type=int, default=8192)
    ap.add_argument("--max_iters", type=int, default=3)
    ap.add_argument("--masters_after_batch", action="store_true")
    ap.add_argument("--keep_grads", action="store_true")
    a = ap.parse_args()
    B, T, V = a.batch_size, a.block_size, a.vocab_size
    truth = {"batch_size": B, "seq_len": T, "vocab_size": V, "steps": 0, "oom": False, "oom_phase": None,
             "logits_copy_bytes": B * T * V * 4, "mask_bytes": B * T * 4, "ids_bytes": B * T * 8}
    phase = "init"
    try:
        model = GPT(V, T, a.n_embd, a.n_layer, a.n_head)
        model.to(torch.bfloat16)
        model.to("cuda")
        params = list(model.parameters())
        truth["param_bytes"] = tensor_bytes(params)
        first = torch.randint(0, V, (B, T)).to("cuda") if a.masters_after_batch else None
        master = [nn.Parameter(p.detach().float()) for p in params]
        truth["master_bytes"] = tensor_bytes(master)
        opt = torch.optim.AdamW(master, lr=3e-4, foreach=True)
        for it in range(a.max_iters):
            phase = "forward"
            x = first if first is not None else torch.randint(0, V, (B, T)).to("cuda")
            first = None
            mask = torch.randint(0, 2, (B, T)).cuda().float()
            logits = model(x)
            per_token = F.cross_entropy(logits.float().view(-1, V), x.view(-1), reduction="none")
            loss = (per_token * mask.view(-1)).sum() / mask.sum()
            del logits
            phase = "backward"
            loss.backward()
            phase = "optimizer"
            for m, p in zip(master, params):
                if a.keep_grads and m.grad is not None:
                    m.grad.copy_(p.grad)
                else:
                    m.grad = p.grad.float()
                p.grad = None
            truth["master_grad_bytes"] = tensor_bytes(m.grad for m in master)
            opt.step()
            opt.zero_grad(set_to_none=not a.keep_grads)
            for m, p in zip(master, params):
                p.copy_(m)
            truth["steps"] = it + 1
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
