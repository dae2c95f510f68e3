"""mamba_width.py — a SIMULATED Mamba-style selective state-space LM written in the program (no
attention): each of --n_layer blocks is RMSNorm -> in_proj (d -> 2E, E = 2·d) -> a causal conv1d
and a selective scan (custom autograd Functions, as causal_conv1d's and mamba_ssm's kernels) ->
out_proj, with a tied embedding/head. Its in_proj, 2E×d elements, is E² (a square of the inner
width, not of d), and --d_model is not given: the run takes its default. bf16 autocast, AdamW.
Prints its own facts: "facts: d_model=d d_inner=E vocab=V n_layer=L micro_batch=B seq_len=T
attention=none". Used by tests/integration/mamba_width.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from simtorch.autograd.function import Function  # noqa: E402
from simtorch.nn.modules.linear import _cpu  # noqa: E402


class ConvFn(Function):
    @staticmethod
    def forward(ctx, x, w, b):
        ctx.save_for_backward(x, w)
        return torch.empty_like(x)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return torch.empty_like(x), torch.zeros_like(w), torch.zeros(w.shape[0], device="cuda")


class ScanFn(Function):
    @staticmethod
    def forward(ctx, u, delta, A, D, z):
        ctx.save_for_backward(u, delta, A, D, z)
        return torch.empty_like(u)

    @staticmethod
    def backward(ctx, g):
        u, delta, A, D, z = ctx.saved_tensors
        return (torch.empty_like(u), torch.empty_like(delta), torch.zeros_like(A),
                torch.zeros_like(D), torch.empty_like(z))


class Mixer(nn.Module):
    def __init__(self, d, n_state):
        super().__init__()
        E = 2 * d
        self.E = E
        self.in_proj = nn.Linear(d, 2 * E, bias=False)
        self.conv_weight, self.conv_bias = nn.Parameter(_cpu(E, 1, 4)), nn.Parameter(_cpu(E))
        self.dt_proj = nn.Linear(E, E, bias=True)
        self.A_log, self.D = nn.Parameter(_cpu(E, n_state)), nn.Parameter(_cpu(E))
        self.out_proj = nn.Linear(E, d, bias=False)

    def forward(self, h):
        B, T, _ = h.size()
        xz = self.in_proj(h)
        x, z = xz.chunk(2, dim=-1)
        x = F.silu(ConvFn.apply(x.contiguous(), self.conv_weight, self.conv_bias))
        delta = self.dt_proj(x)
        y = ScanFn.apply(x, delta, self.A_log.float(), self.D.float(), z.contiguous())
        return self.out_proj(y)


class MambaBlock(nn.Module):
    def __init__(self, d, n_state):
        super().__init__()
        self.norm, self.mixer = nn.RMSNorm(d), Mixer(d, n_state)

    def forward(self, x):
        return x + self.mixer(self.norm(x))


class MambaLM(nn.Module):
    def __init__(self, V, d, L, n_state):
        super().__init__()
        self.embedding = nn.Embedding(V, d)
        self.layers = nn.ModuleList([MambaBlock(d, n_state) for _ in range(L)])
        self.norm_f = nn.RMSNorm(d)
        self.lm_head = nn.Linear(d, V, bias=False)
        self.lm_head.weight = self.embedding.weight

    def forward(self, ids):
        x = self.embedding(ids)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm_f(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch_size", type=int, default=2)
    ap.add_argument("--seq_len", type=int, default=256)
    ap.add_argument("--d_model", type=int, default=256)
    ap.add_argument("--n_layer", type=int, default=4)
    ap.add_argument("--steps", type=int, default=2)
    a = ap.parse_args()
    V = 8000
    model = MambaLM(V, a.d_model, a.n_layer, 16).to("cuda")
    params = list(model.parameters())
    print("facts: d_model=%d d_inner=%d vocab=%d n_layer=%d micro_batch=%d seq_len=%d attention=none"
          % (a.d_model, 2 * a.d_model, V, a.n_layer, a.batch_size, a.seq_len), flush=True)
    opt = torch.optim.AdamW(params, lr=6e-4)
    for _ in range(a.steps):
        x = torch.randint(0, V, (a.batch_size, a.seq_len)).to("cuda")
        y = torch.randint(0, V, (a.batch_size, a.seq_len)).to("cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x).view(-1, V), y.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
