"""txl_mems.py — a SIMULATED Transformer-XL-style language model: each layer attends over the
hidden states it kept from the previous segments (its memory, --mem_len tokens, detached) beside
the current segment (--tgt_len tokens). The memory is carried from step to step and fills up over
the first mem_len / tgt_len steps: the run's peak rises until then (the memory's bytes and the keys
and values over it). AdamW, fp32. Prints the run's peak of allocated bytes so far after each step
as "STEP i peak=N" (torch.cuda.max_memory_allocated), then the run's truth line
VRAMTRACE_TORCH_STATS; an out-of-memory error prints "OOM in step i PHASE" and exits 1."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402


class Layer(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.q, self.kv = nn.Linear(d, d), nn.Linear(d, 2 * d)
        self.o = nn.Linear(d, d)
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff1, self.ff2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x, mem):
        B, T, C = x.size()
        cat = torch.cat([mem, x], dim=1) if mem is not None else x
        M = cat.size(1)
        q = self.q(x).view(B, T, self.h, C // self.h).transpose(1, 2)
        k, v = self.kv(cat).split(C, dim=2)
        k = k.view(B, M, self.h, C // self.h).transpose(1, 2)
        v = v.view(B, M, self.h, C // self.h).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v)
        x = self.n1(x + self.o(a.transpose(1, 2).contiguous().view(B, T, C)))
        return self.n2(x + self.ff2(F.gelu(self.ff1(x))))


class TransfoXL(nn.Module):
    def __init__(self, vocab, d, layers, heads, mem_len):
        super().__init__()
        self.mem_len = mem_len
        self.emb = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList([Layer(d, heads) for _ in range(layers)])
        self.head = nn.Linear(d, vocab)

    def forward(self, ids, mems):
        x = self.emb(ids)
        new_mems = []
        for i, layer in enumerate(self.layers):
            m = mems[i] if mems else None
            with torch.no_grad():  # the memory kept: this layer's input, the last mem_len tokens
                full = torch.cat([m, x.detach()], dim=1) if m is not None else x.detach()
                new_mems.append(full[:, -self.mem_len:].contiguous())
                del full
            x = layer(x, m)
        return self.head(x), new_mems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch_size", type=int, default=8)
    ap.add_argument("--tgt_len", type=int, default=256)
    ap.add_argument("--mem_len", type=int, default=768)
    ap.add_argument("--d_model", type=int, default=512)
    ap.add_argument("--n_layer", type=int, default=8)
    ap.add_argument("--max_step", type=int, default=6)
    ap.add_argument("--batch_chunk", type=int, default=1, help="split the batch into chunks")
    a = ap.parse_args()
    if a.batch_chunk > 1:
        assert a.batch_size % a.batch_chunk == 0
    V = 32000
    model = TransfoXL(V, a.d_model, a.n_layer, a.d_model // 64, a.mem_len).to("cuda")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    params = sum(p.numel() for p in model.parameters())
    C = a.batch_chunk
    mems, peaks, phase, it = [None] * C, [], "forward", 0
    try:
        for it in range(a.max_step):
            data = torch.randint(0, V, (a.batch_size, a.tgt_len)).to("cuda")
            target = torch.randint(0, V, (a.batch_size, a.tgt_len)).to("cuda")
            # (--batch_chunk: the batch in chunks, each with its own memory, as Transformer-XL's
            # train.py does)
            data_chunks, target_chunks = data.chunk(a.batch_chunk, 0), target.chunk(a.batch_chunk, 0)
            for c in range(C):
                x, y = data_chunks[c].contiguous(), target_chunks[c].contiguous()
                phase = "forward"
                logits, new_mems = model(x, mems[c])
                loss = F.cross_entropy(logits.view(-1, V), y.view(-1))
                del logits
                phase = "backward"
                loss.backward()
                del loss
                mems[c] = new_mems  # (the previous segments' memory freed here)
                del x, y, new_mems
            del data, target, data_chunks, target_chunks
            phase = "optimizer"
            opt.step()
            opt.zero_grad(set_to_none=True)
            peaks.append(torch.cuda.max_memory_allocated())
            print(f"STEP {it} peak={peaks[-1]}", flush=True)
    except torch.OutOfMemoryError:
        print(f"OOM in step {it} {phase}", flush=True)
        print("VRAMTRACE_TORCH_STATS " + json.dumps({"simulation": True, "oom": True, "oom_step": it,
              "phase": phase, "params": params, "step_peaks": peaks, "batch": a.batch_size}), flush=True)
        return 1
    print("VRAMTRACE_TORCH_STATS " + json.dumps({"simulation": True, "oom": False, "params": params,
          "step_peaks": peaks, "steps": len(peaks), "batch": a.batch_size}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
