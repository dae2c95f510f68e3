"""es_population.py — SIMULATED evolution strategies (OpenAI's evolution-strategies-starter, the
population batched on one device): the policy's weights are ONE flat fp32 vector theta (no
nn.Parameter, nothing requires a gradient), applied by the program's own function policy(theta, x)
(no nn.Module forward). Each generation draws the noise of the whole population on the device
(population_size/2 antithetic pairs x num_params fp32) and keeps it through the generation; every
member's perturbed weights are scored by a forward under torch.no_grad(); an Adam written in the
program (m and v made at construction) updates theta. No backward anywhere. Memory follows
--population_size x num_params; --batch_size (the examples each member is scored on) sizes only
the forwards' small tensors. Prints its truth (VRAMTRACE_TORCH_STATS): the weights', the state's and
the noise's bytes, the forwards and updates run; an out-of-memory error says where (oom_phase
"noise": drawing a generation's noise). Used by tests/integration/es_population.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
from sim_truth import finish, record_oom, tensor_bytes  # noqa: E402


class Adam:
    """optimizers.py's Adam over the flat theta: m and v made at construction."""

    def __init__(self, theta, stepsize):
        self.theta, self.stepsize = theta, stepsize
        self.m = torch.zeros(theta.numel(), device="cuda")
        self.v = torch.zeros(theta.numel(), device="cuda")

    def update(self, g):
        self.m.mul_(0.9).add_(g)
        self.v.mul_(0.999).addcmul_(g, g)
        step = self.m * (1.0 / (self.v.sqrt() + 1e-8))
        self.theta.add_(step)


def policy(theta, x, sizes):
    off, h = 0, x
    for i, (fi, fo) in enumerate(sizes):
        W = theta[off:off + fi * fo].view(fi, fo)
        off += fi * fo
        b = theta[off:off + fo]
        off += fo
        h = torch.matmul(h, W) + b
        if i < len(sizes) - 1:
            h = h.tanh()
    return h


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--population_size", type=int, default=64)
    ap.add_argument("--noise_stdev", type=float, default=0.02)
    ap.add_argument("--batch_size", type=int, default=64)
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--generations", type=int, default=2)
    ap.add_argument("--draw", default="direct", choices=["direct", "shape"])  # (its size's names)
    ap.add_argument("--gpu", type=int, default=0)
    a = ap.parse_args()
    sizes = [(784, a.hidden), (a.hidden, a.hidden), (a.hidden, 10)]
    n = sum(fi * fo + fo for fi, fo in sizes)
    theta = torch.randn(n).to("cuda")
    opt = Adam(theta, 0.01)
    half = a.population_size // 2
    device = a.gpu  # (the draw's device= is a keyword's name, not this one)
    shape = (half, n)
    truth = {"population_size": a.population_size, "batch_size": a.batch_size, "num_params": n,
             "param_bytes": tensor_bytes([theta]), "nn_parameters": 0, "backward_passes": 0,
             "optim_state_bytes": tensor_bytes([opt.m, opt.v]), "noise_bytes": half * n * 4,
             "hidden": a.hidden, "forwards": 0, "updates": 0, "oom": False, "oom_phase": None}
    for it in range(a.generations):
        try:
            x = torch.randn(a.batch_size, 784).to("cuda")
            if a.draw == "shape":  # (three names from the flag: dims, shape, half)
                dims = list(shape)
                noise = torch.randn(*dims, device="cuda")
            else:
                noise = torch.randn(half, n, device="cuda")
        except torch.OutOfMemoryError as e:
            record_oom(truth, "noise", e)
            return finish(torch, truth)
        returns = torch.zeros(a.population_size, device="cuda")
        with torch.no_grad():
            for i in range(half):
                for sign in (1.0, -1.0):
                    w = theta + noise[i] * (sign * a.noise_stdev)
                    out = policy(w, x, sizes)
                    truth["forwards"] += 1
                    del w, out
            g = torch.matmul(returns[:half].view(1, half), noise).view(n)
            opt.update(g + theta * 0.005)
            truth["updates"] += 1
        del x, noise, returns, g
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
