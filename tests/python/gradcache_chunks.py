"""gradcache_chunks.py — a SIMULATED dense retriever trained with a representation cache (the
GradCache method, Tevatron's flags), written in the program: two small encoders (queries and
passages), in-batch negatives over the whole batch. With --grad_cache every chunk of the batch is
encoded under no_grad, the loss over the cached representations is back-propagated to them (leaves
that are not weights), then each chunk is encoded again with grad and back-propagated with its part
of that gradient: one optimizer step per batch, no gradient accumulation, the forward's batch the
chunk (--gc_q_chunk_size / --gc_p_chunk_size); --keep_rep_grads keeps the representations'
gradients alive through the optimizer step. With --splits N (and no --grad_cache) the batch is
instead cut into N micro-batches, each with its own loss and backward, the gradients accumulated
over them before the step: real gradient accumulation, for contrast. Prints its own facts first:
"FACTS queries_per_batch=B passages_per_batch=P q_chunk=C p_chunk=C backward_per_step=N
accumulation=A trainable=N" (A 0: none; N the weights' elements, all trained), then "step N" after each optimizer step; an out-of-memory error
prints "OOM in PHASE" and exits 1. Used by tests/integration/gradcache_chunks.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.q, self.k = nn.Linear(d, d), nn.Linear(d, d)
        self.v, self.o = nn.Linear(d, d), nn.Linear(d, d)
        self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.h = heads

    def forward(self, x):
        B, T, C = x.size()
        y = self.n1(x)
        q, k, v = (m(y).view(B, T, self.h, C // self.h).transpose(1, 2) for m in (self.q, self.k, self.v))
        a = F.scaled_dot_product_attention(q, k, v)
        x = x + self.o(a.transpose(1, 2).contiguous().view(B, T, C))
        return x + self.down(F.gelu(self.up(self.n2(x))))


class Encoder(nn.Module):
    def __init__(self, V=8192, d=256, L=4, maxpos=128):
        super().__init__()
        self.word = nn.Embedding(V, d)
        self.pos = nn.Embedding(maxpos, d)  # (BERT's learned positions)
        self.ln = nn.LayerNorm(d)
        self.layers = nn.ModuleList([Block(d, d // 64) for _ in range(L)])

    def forward(self, ids):
        x = self.ln(self.word(ids) + self.pos(torch.arange(0, ids.size()[1], device="cuda")))
        for blk in self.layers:
            x = blk(x)
        return x[:, 0, :]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--per_device_train_batch_size", type=int, default=64)
    ap.add_argument("--train_n_passages", type=int, default=2)
    ap.add_argument("--q_max_len", type=int, default=32)
    ap.add_argument("--p_max_len", type=int, default=128)
    ap.add_argument("--grad_cache", action="store_true")
    ap.add_argument("--gc_q_chunk_size", type=int, default=16)
    ap.add_argument("--gc_p_chunk_size", type=int, default=8)
    ap.add_argument("--splits", type=int, default=1)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--keep_rep_grads", action="store_true")  # freed after the step, not before
    a = ap.parse_args()
    V = 8192
    # (positions for 64 query and 256 passage tokens: at a batch of 64 the cached queries'
    # gradient, 64 x 256, is the size of the query encoder's position table, as BERT's 512 rows
    # are of a batch of 512's representations)
    qenc, penc = Encoder(V, maxpos=64).to("cuda"), Encoder(V, maxpos=256).to("cuda")
    params = list(qenc.parameters()) + list(penc.parameters())
    B, n = a.per_device_train_batch_size, a.train_n_passages
    qc, pc = min(a.gc_q_chunk_size, B), min(a.gc_p_chunk_size, B * n)
    if a.grad_cache:
        per_step = 1 + -(-B // qc) + -(-(B * n) // pc)
    else:
        per_step = a.splits
    print(f"FACTS queries_per_batch={B} passages_per_batch={B * n} q_chunk={qc if a.grad_cache else 0} "
          f"p_chunk={pc if a.grad_cache else 0} backward_per_step={per_step} "
          f"accumulation={0 if a.grad_cache else a.splits} trainable={sum(p.numel() for p in params)}",
          flush=True)
    opt = torch.optim.AdamW(params, lr=1e-5, fused=True)

    def encode(enc, ids):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return enc(ids)

    phase = "forward"
    try:
        for it in range(a.steps):
            q = torch.randint(0, V, (B, a.q_max_len)).to("cuda")
            p = torch.randint(0, V, (B * n, a.p_max_len)).to("cuda")
            if not a.grad_cache:
                m = B // a.splits
                for s in range(a.splits):
                    phase = "forward"
                    qr = encode(qenc, q[s * m:(s + 1) * m])
                    pr = encode(penc, p[s * m * n:(s + 1) * m * n])
                    target = torch.arange(0, m, device="cuda") * n
                    loss = F.cross_entropy(torch.matmul(qr.float(), pr.float().transpose(0, 1)), target)
                    phase = "backward"
                    (loss * (1.0 / a.splits)).backward()
                    del qr, pr, loss, target
            else:
                phase = "representation pass"
                with torch.no_grad():
                    qreps = torch.cat([encode(qenc, q[i:i + qc]) for i in range(0, B, qc)], dim=0)
                    preps = torch.cat([encode(penc, p[i:i + pc]) for i in range(0, B * n, pc)], dim=0)
                qreps = qreps.float().detach().requires_grad_()
                preps = preps.float().detach().requires_grad_()
                phase = "cached loss"
                target = torch.arange(0, B, device="cuda") * n
                loss = F.cross_entropy(torch.matmul(qreps, preps.transpose(0, 1)), target)
                loss.backward()
                qg, pg = qreps.grad, preps.grad
                del loss, qreps, preps, target
                for enc, ids, g, c in ((qenc, q, qg, qc), (penc, p, pg, pc)):
                    for i in range(0, ids.size()[0], c):
                        phase = "chunk forward"
                        r = encode(enc, ids[i:i + c])
                        sur = (r.float() * g[i:i + c]).sum()
                        phase = "chunk backward"
                        sur.backward()
                        del r, sur
                if not a.keep_rep_grads:
                    del qg, pg
            phase = "optimizer"
            opt.step()
            opt.zero_grad(set_to_none=True)
            if a.grad_cache and a.keep_rep_grads:
                del qg, pg
            del q, p
            print(f"step {it}", flush=True)
    except torch.OutOfMemoryError:
        print(f"OOM in {phase}", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
