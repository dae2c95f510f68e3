"""kge_adagrad.py — a SIMULATED knowledge-graph embedding (TransE, L2 distance) in DGL-KE's
train.py shape (its flags: --batch_size, --neg_sample_size, --hidden_dim, --max_step): entity
and relation embedding tables (nn.Embedding, fp32, dense gradients), chunked negative sampling
(B / neg_sample_size chunks, each chunk's positives scored against neg_sample_size corrupted
tails), backward, an Adagrad step. Adagrad makes its state AT CONSTRUCTION, before any step:
--optim own is a class of the program's own (no torch.optim base) whose __init__ makes one fp32
state_sum per parameter element, as torch.optim.Adagrad.__init__ does; --optim torch is
simtorch's torch.optim.Adagrad; --optim subclass a torch.optim.Optimizer subclass of a name of its
own (KGEUpdate) that makes the same sums in its __init__. Every way 4 B of state per trainable parameter, made and kept
from the optimizer's construction. Every parameter trains. The dense embedding backward makes
table-sized buffers, whatever the batch. Prints its truth (VRAMTRACE_TORCH_STATS): the weights',
gradients' and state's bytes, the trainable count, the steps; an out-of-memory error says where
(oom_phase "init", "forward", "backward", "optimizer"). Used by tests/integration/kge_adagrad.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
from sim_truth import finish, record_oom, state_tensors, tensor_bytes  # noqa: E402


class Adagrad:
    """torch.optim.Adagrad's state, written by the program: state_sum per parameter, made here."""

    def __init__(self, params, lr):
        self.params, self.lr = list(params), lr
        self.state = {p: {"sum": torch.zeros_like(p.data)} for p in self.params}

    def zero_grad(self, set_to_none=True):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for p in self.params:
            if p.grad is None:
                continue
            s = self.state[p]["sum"]
            s.addcmul_(p.grad, p.grad)
            std = s.sqrt()
            p.data.addcdiv_(p.grad, std)
            del std


class KGEUpdate(torch.optim.Optimizer):
    """The same update as a torch.optim.Optimizer subclass of a name of its own, its sums made in
    its __init__ after the base's."""

    def __init__(self, params, lr):
        super().__init__(params, dict(lr=lr))
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p] = {"sum": torch.zeros_like(p.data)}

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    std = self.state[p]["sum"].sqrt()
                    del std


class TransE(nn.Module):
    def __init__(self, n_entities, n_relations, dim):
        super().__init__()
        self.entity_emb = nn.Embedding(n_entities, dim)
        self.relation_emb = nn.Embedding(n_relations, dim)

    def forward(self, h, r, t, neg_t, neg):
        hv, rv, tv = self.entity_emb(h), self.relation_emb(r), self.entity_emb(t)
        d = hv + rv - tv
        pos = (d * d).sum(dim=-1)
        nv = self.entity_emb(neg_t).view(-1, 1, neg, hv.size()[-1])
        hr = (hv + rv).view(-1, neg, 1, hv.size()[-1])
        dn = hr - nv
        return pos, (dn * dn).sum(dim=-1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch_size", type=int, default=256)
    ap.add_argument("--neg_sample_size", type=int, default=64)
    ap.add_argument("--hidden_dim", type=int, default=64)
    ap.add_argument("--max_step", type=int, default=2)
    ap.add_argument("--n_entities", type=int, default=1000000)
    ap.add_argument("--n_relations", type=int, default=800)
    ap.add_argument("--optim", choices=("own", "torch", "subclass"), default="own")
    a = ap.parse_args()
    truth = {"batch_size": a.batch_size, "hidden_dim": a.hidden_dim, "n_entities": a.n_entities, "steps": 0, "oom": False,
             "oom_phase": None, "optimizer": a.optim}
    try:
        model = TransE(a.n_entities, a.n_relations, a.hidden_dim).to("cuda")
        params = list(model.parameters())
        truth.update(param_bytes=tensor_bytes(params), trainable_params=sum(p.numel() for p in params))
        truth["planned_state_bytes"] = truth["param_bytes"]
        if a.optim == "own":
            opt = Adagrad(params, 0.25)
            truth["optim_state_bytes"] = tensor_bytes(s["sum"] for s in opt.state.values())
        elif a.optim == "subclass":
            opt = KGEUpdate(params, 0.25)
            truth["optim_state_bytes"] = tensor_bytes(state_tensors(opt))
        else:
            opt = torch.optim.Adagrad(params, lr=0.25)
            truth["optim_state_bytes"] = tensor_bytes(state_tensors(opt))
    except torch.OutOfMemoryError as e:
        record_oom(truth, "init", e)
        return finish(torch, truth)
    neg = a.neg_sample_size
    try:
        for it in range(a.max_step):
            truth["phase"] = "forward"
            h = torch.randint(0, a.n_entities, (a.batch_size,)).to("cuda")
            r = torch.randint(0, a.n_relations, (a.batch_size,)).to("cuda")
            t = torch.randint(0, a.n_entities, (a.batch_size,)).to("cuda")
            neg_t = torch.randint(0, a.n_entities, (a.batch_size // neg * neg,)).to("cuda")
            pos, negs = model(h, r, t, neg_t, neg)
            loss = (pos.mean() + negs.mean()) * 0.5
            del pos, negs
            truth["phase"] = "backward"
            opt.zero_grad()
            loss.backward()
            truth["grad_bytes"] = tensor_bytes(p.grad for p in params)
            truth["phase"] = "optimizer"
            opt.step()
            truth["steps"] += 1
            del h, r, t, neg_t, loss
    except torch.OutOfMemoryError as e:
        record_oom(truth, truth["phase"], e)
    truth.pop("phase", None)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
