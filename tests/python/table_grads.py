"""table_grads.py — a SIMULATED recommendation model in DLRM's shape: --tables embedding tables of
--rows rows x --dim (nn.Embedding, each its own large weight, taking a DENSE table-sized gradient:
simtorch has no sparse ones), a small MLP over the pooled lookups, MSE loss, plain SGD (no state),
--steps steps of --batch samples. Nearly all its memory is the tables and their gradients, each in
a segment of its own, allocated once a step at the same sizes: the caching allocator reuses them
exactly and reserves next to nothing beside its tensors. On a card too small it runs out of memory
in its first backward, partway through the tables' gradients. Prints its truth
(VRAMTRACE_TORCH_STATS: table bytes, gradient bytes, the allocator's peaks, steps, the phase of an
out-of-memory error, the gradients made when a backward failed). Used by tests/integration/table_cache.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from sim_truth import finish, record_oom, tensor_bytes  # noqa: E402


class Tables(nn.Module):
    def __init__(self, n, rows, dim):
        super().__init__()
        self.emb = nn.ModuleList([nn.Embedding(rows, dim) for _ in range(n)])
        self.top = nn.Sequential(nn.Linear(dim, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, idx):
        x = self.emb[0](idx[0])
        for e, i in zip(self.emb[1:], idx[1:]):
            x = x + e(i)
        return self.top(x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tables", type=int, default=8)
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--dim", type=int, default=32)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--steps", type=int, default=2)
    a = ap.parse_args()
    truth = {"tables": a.tables, "batch_size": a.batch, "steps": 0, "oom": False, "oom_phase": None}
    phase = "init"
    try:
        model = Tables(a.tables, a.rows, a.dim).to("cuda")
        params = list(model.parameters())
        emb = [p for e in model.emb for p in e.parameters()]
        truth["table_bytes"] = tensor_bytes(emb)
        truth["param_bytes"] = tensor_bytes(params)
        opt = torch.optim.SGD(params, lr=0.1)
        for it in range(a.steps):
            phase = "forward"
            idx = [torch.randint(0, a.rows, (a.batch,)).to("cuda") for _ in range(a.tables)]
            y = torch.randn(a.batch, 1).to("cuda")
            loss = F.mse_loss(model(idx), y)
            phase = "backward"
            opt.zero_grad()
            loss.backward()
            truth["grad_bytes"] = tensor_bytes(p.grad for p in params)
            phase = "optimizer"
            opt.step()
            del idx, y, loss
            truth["steps"] = it + 1
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
        if phase == "backward":  # (the gradients the backward had made when it failed)
            truth["grad_bytes_at_oom"] = tensor_bytes(p.grad for p in params if p.grad is not None)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
