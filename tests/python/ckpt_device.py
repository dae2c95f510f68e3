"""ckpt_device.py — a SIMULATED GPT written in the program (bf16 autocast, fused AdamW) that keeps
a checkpoint on the device, as hand-written loops do: after each --save_every steps, a clone of
every weight and of every optimizer state tensor (`{k: v.clone()}`-style), kept alive until the
next one is made (the old one dropped first). With --ckpt_host the copies go to the host instead.
With --offload the optimizer's state is moved to the host after each step (st[k] = v.cpu()) and
brought back with .cuda() just before the next one, as loops short of memory do by hand.
Prints its truth (VRAMTRACE_TORCH_STATS): the weights', the state's and the checkpoint's bytes on
the device (those of a weight's size apart from the state's 4-byte step counters), one batch's
bytes. Used by tests/integration/ckpt_device.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from sim_truth import finish, record_oom, state_tensors, tensor_bytes  # noqa: E402


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
        self.head.weight = self.wte.weight

    def forward(self, idx):
        B, T = idx.size()
        x = self.wte(idx) + self.wpe(torch.arange(0, T, device="cuda"))
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln_f(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch_size", type=int, default=4)
    ap.add_argument("--block_size", type=int, default=512)
    ap.add_argument("--n_embd", type=int, default=512)
    ap.add_argument("--n_layer", type=int, default=8)
    ap.add_argument("--n_head", type=int, default=8)
    ap.add_argument("--vocab_size", type=int, default=16384)
    ap.add_argument("--max_iters", type=int, default=4)
    ap.add_argument("--save_every", type=int, default=1)
    ap.add_argument("--ckpt_host", action="store_true")
    ap.add_argument("--offload", action="store_true")
    a = ap.parse_args()
    truth = {"batch_size": a.batch_size, "seq_len": a.block_size, "steps": 0, "checkpoints": 0,
             "oom": False, "oom_phase": None}
    phase = "init"
    last_ckpt = None
    try:
        model = GPT(a.vocab_size, a.block_size, a.n_embd, a.n_layer, a.n_head).to("cuda")
        params = list(model.parameters())
        truth["param_bytes"] = tensor_bytes(params)
        opt = torch.optim.AdamW(params, lr=3e-4, fused=True)
        for it in range(a.max_iters):
            phase = "forward"
            x = torch.randint(0, a.vocab_size, (a.batch_size, a.block_size)).to("cuda")
            truth["input_bytes"] = tensor_bytes([x])
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(x)
            loss = F.cross_entropy(logits.float().view(-1, a.vocab_size), x.view(-1))
            del logits
            phase = "backward"
            loss.backward()
            del x, loss
            phase = "optimizer"
            for st in opt.state.values():  # the state kept on the host, brought back for the step
                for k in list(st):
                    if hasattr(st[k], "is_cuda") and not st[k].is_cuda:
                        st[k] = st[k].cuda()
            opt.step()
            truth["optim_state_bytes"] = tensor_bytes(state_tensors(opt))
            opt.zero_grad(set_to_none=True)
            if a.offload:
                for st in opt.state.values():
                    for k in list(st):
                        if hasattr(st[k], "is_cuda") and st[k].is_cuda:
                            st[k] = st[k].cpu()
            truth["steps"] = it + 1
            if (it + 1) % a.save_every == 0:
                phase = "checkpoint"
                last_ckpt = None  # the old one dropped before the new one is made
                state = [t for t in state_tensors(opt)]
                ck = [p.detach().clone() for p in params] + [t.clone() for t in state]
                if a.ckpt_host:
                    ck = [t.cpu() for t in ck]
                last_ckpt = ck
                on_device = [t for t in ck if t.is_cuda]
                truth["optim_state_bytes"] = tensor_bytes(state)
                truth["ckpt_device_bytes"] = tensor_bytes(on_device)
                # the copies of a weight's size (weights, AdamW's moments), not the step counters
                truth["ckpt_weight_sized_bytes"] = tensor_bytes(t for t in on_device if t.numel() > 1)
                truth["checkpoints"] += 1
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
