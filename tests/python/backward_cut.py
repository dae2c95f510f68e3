"""backward_cut.py — a SIMULATED DLRM-like model (--tables embedding tables of --rows x --dim,
each looked up once per sample, dense gradients as simtorch makes them, beside a small MLP),
every weight trained by plain SGD (no state), fp32. On a card too small for all the tables'
gradients it runs out of memory partway through its first backward: the weights whose
gradients had not been made yet train all the same. Prints its truth (VRAMTRACE_TORCH_STATS:
trainable_params, param_bytes, the gradients' bytes at the error, the phase). Used by
tests/integration/backward_cut.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from sim_truth import finish, record_oom, tensor_bytes  # noqa: E402


class Tables(nn.Module):
    def __init__(self, tables, rows, dim):
        super().__init__()
        self.emb = nn.ModuleList([nn.Embedding(rows, dim) for _ in range(tables)])
        self.mlp = nn.Sequential(nn.Linear(dim * tables, 256), nn.ReLU(), nn.Linear(256, 1))

    def forward(self, idx):
        return self.mlp(torch.cat([e(i) for e, i in zip(self.emb, idx)], dim=1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tables", type=int, default=4)
    ap.add_argument("--rows", type=int, default=4 << 20)
    ap.add_argument("--dim", type=int, default=32)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--iters", type=int, default=2)
    a = ap.parse_args()
    model = Tables(a.tables, a.rows, a.dim)
    params = list(model.parameters())
    truth = {"trainable_params": sum(p.numel() for p in params), "steps": 0, "oom": False,
             "oom_phase": None, "grad_bytes_at_oom": 0}
    phase = "init"
    try:
        model.to("cuda")
        truth["param_bytes"] = tensor_bytes(params)
        opt = torch.optim.SGD(params, lr=0.1)
        for it in range(a.iters):
            phase = "forward"
            idx = [torch.randint(0, a.rows, (a.batch,)).to("cuda") for _ in range(a.tables)]
            y = torch.randn(a.batch, 1).to("cuda")
            loss = F.mse_loss(model(idx), y)
            phase = "backward"
            loss.backward()
            phase = "optimizer"
            opt.step()
            opt.zero_grad()
            truth["steps"] = it + 1
            del idx, y, loss
    except torch.OutOfMemoryError as e:
        truth["grad_bytes_at_oom"] = tensor_bytes(p.grad for p in params)
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
