"""dp_physical.py — SIMULATED differentially private training in the shape of Opacus's examples:
-b/--batch-size is the LOGICAL batch (a privacy parameter), --max-physical-batch-size the batch
each forward takes (BatchMemoryManager splits the logical batch into physical batches of at most
it), --max-sequence-length the tokens per sample. A small encoder classifier (embedding and norms
frozen, no position table; its head's weight is labels x d, after the blocks); every Linear is trained
through a grad sampler: a custom Function whose backward makes, besides .grad, the PER-SAMPLE
gradient (B x out x in), kept until the DP optimizer's zero_grad. The DP optimizer clips and sums
them per physical batch and frees every .grad; only on the last physical batch of a logical batch
does the wrapped optimizer (AdamW) step. With --sigma above 0 each weight's noise is made on the
host and copied to the device (randn(p.size()).to(device), as Opacus's add_noise), beside the sum
it is added to, and freed. Prints its truth (VRAMTRACE_TORCH_STATS): the logical
and physical batches, the physical batches per optimizer step, T, the optimizer steps and the
backward passes, the per-sample gradients' bytes (and those alive at an out-of-memory error), the
optimizer's state bytes.
Used by tests/integration/dp_physical.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from simtorch.autograd import Function  # noqa: E402
from sim_truth import finish, record_oom, state_tensors, tensor_bytes  # noqa: E402

GRAD_SAMPLE = {}  # p.grad_sample in Opacus (simtorch's Parameter has __slots__)


class LinearGradSample(Function):
    @staticmethod
    def forward(ctx, x, w, b):
        ctx.save_for_backward(x, w)
        ctx.params = (w, b)
        return F.linear(x, w, b)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        wp, bp = ctx.params
        gx = torch.matmul(g, w)
        gs = torch.matmul(g.transpose(1, 2), x)  # B x out x in: the per-sample gradients
        gsb = g.sum(1)
        GRAD_SAMPLE[id(wp)], GRAD_SAMPLE[id(bp)] = gs, gsb
        return gx, gs.sum(0), gsb.sum(0)


class DPLinear(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(cout, cin))
        self.bias = nn.Parameter(torch.zeros(cout))

    def forward(self, x):
        return LinearGradSample.apply(x, self.weight, self.bias)


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.n1 = nn.LayerNorm(d)
        self.fc, self.proj = DPLinear(d, 4 * d), DPLinear(4 * d, d)

    def forward(self, x):
        return x + self.proj(F.relu(self.fc(self.n1(x))))


class Classifier(nn.Module):
    def __init__(self, vocab, d, layers, labels=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList([Block(d) for _ in range(layers)])
        self.head = DPLinear(d, labels)

    def forward(self, ids):
        x = self.emb(ids)
        for b in self.blocks:
            x = b(x)
        return self.head(x).mean(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-b", "--batch-size", type=int, default=64)
    ap.add_argument("--max-physical-batch-size", type=int, default=16)
    ap.add_argument("--max-sequence-length", type=int, default=64)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--sigma", type=float, default=0.0)
    a = ap.parse_args()
    P, T = a.max_physical_batch_size, a.max_sequence_length
    n_phys = -(-a.batch_size // P)
    truth = {"logical_batch": a.batch_size, "physical_batch": P, "physical_batches_per_step": n_phys,
             "seq_len": T, "steps": 0, "backward_passes": 0, "oom": False, "oom_phase": None}
    phase = "init"
    try:
        model = Classifier(4000, 128, 2).to("cuda")
        model.emb.weight.requires_grad_(False)
        for b in model.blocks:  # (Opacus's tutorials freeze what no grad sampler trains)
            b.n1.requires_grad_(False)
        trainable = [p for p in model.parameters() if p.requires_grad]
        truth["trainable_params"] = sum(p.numel() for p in trainable)
        truth["grad_sample_bytes"] = 4 * P * truth["trainable_params"]
        opt = torch.optim.AdamW(trainable, lr=1e-3, foreach=True)
        summed = {}
        for it in range(a.steps):
            for i in range(n_phys):
                phase = "forward"
                ids = torch.randint(0, 4000, (P, T)).to("cuda")
                y = torch.randint(0, 2, (P,)).to("cuda")
                loss = F.cross_entropy(model(ids), y)
                phase = "backward"
                loss.backward()
                truth["backward_passes"] += 1
                phase = "optimizer"
                for p in trainable:  # DPOptimizer.pre_step: clip and sum (noise left out)
                    s = GRAD_SAMPLE[id(p)].sum(0)
                    summed[id(p)] = s if id(p) not in summed else summed[id(p)] + s
                if i == n_phys - 1:  # the last physical batch: the wrapped optimizer's step
                    for p in trainable:
                        if a.sigma > 0:  # DPOptimizer.add_noise: the noise copied from the host
                            noise = torch.randn(*p.size()).to("cuda")
                            p.grad = (summed.pop(id(p)) + noise) / a.batch_size
                            del noise
                        else:
                            p.grad = summed.pop(id(p)) / a.batch_size
                    opt.step()
                    truth["steps"] += 1
                    truth["optim_state_bytes"] = tensor_bytes(state_tensors(opt))
                for p in trainable:  # zero_grad: .grad and grad_sample freed
                    GRAD_SAMPLE[id(p)] = None
                    p.grad = None
                del ids, y, loss
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
        # (the per-sample gradients the backward had made and kept when it failed)
        truth["grad_sample_bytes_at_oom"] = tensor_bytes(GRAD_SAMPLE.values())
    truth["grad_bytes"] = 4 * truth["trainable_params"]
    truth["param_bytes"] = tensor_bytes(model.parameters())
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
