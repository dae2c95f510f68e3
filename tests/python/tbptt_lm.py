"""tbptt_lm.py — a SIMULATED LSTM language model trained with truncated backpropagation through
time, as PyTorch's word language model does: --batch_size is the number of streams the corpus is
cut into, and each stream's hidden state is carried from one batch to the next, detached (the
cells written in the program: gates = x W_ih + h W_hh, stepped over --bptt tokens; no attention;
a decoder tied to the embedding). fp32, AdamW, clipping. Accumulating smaller micro-batches is not
this run: a stream split otherwise, and a state kept for each micro-batch. Prints its truth
(VRAMTRACE_TORCH_STATS: streams, steps, carried_state). Used by
tests/integration/tbptt_accum.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from sim_truth import finish, record_oom  # noqa: E402


class Cell(nn.Module):
    def __init__(self, nin, nhid):
        super().__init__()
        self.ih = nn.Linear(nin, 4 * nhid)
        self.hh = nn.Linear(nhid, 4 * nhid, bias=False)

    def forward(self, xs, state):
        h, c = state
        outs = []
        for x in xs:
            i, f, g, o = (self.ih(x) + self.hh(h)).chunk(4, dim=-1)
            c = f.tanh() * c + i.tanh() * g.tanh()  # (tanh for sigmoid: the same sizes)
            h = o.tanh() * c.tanh()
            outs.append(h)
        return outs, (h, c)


class RNNModel(nn.Module):
    def __init__(self, vocab, nhid, nlayers):
        super().__init__()
        self.encoder = nn.Embedding(vocab, nhid)
        self.rnns = nn.ModuleList([Cell(nhid, nhid) for _ in range(nlayers)])
        self.decoder = nn.Linear(nhid, vocab)
        self.decoder.weight = self.encoder.weight

    def forward(self, ids, hidden):
        xs = self.encoder(ids).unbind(0)
        new = []
        for rnn, st in zip(self.rnns, hidden):
            xs, st = rnn(xs, st)
            new.append(st)
        return self.decoder(torch.stack(xs, dim=0)), new


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch_size", type=int, default=20)
    ap.add_argument("--bptt", type=int, default=35)
    ap.add_argument("--nhid", type=int, default=1024)
    ap.add_argument("--nlayers", type=int, default=2)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--batches", type=int, default=2)
    a = ap.parse_args()
    truth = {"streams": a.batch_size, "bptt": a.bptt, "steps": 0, "carried_state": "hidden",
             "grad_accum": 1, "oom": False, "oom_phase": None}
    phase = "init"
    try:
        model = RNNModel(a.vocab, a.nhid, a.nlayers).to("cuda")
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
        hidden = [(torch.zeros(a.batch_size, a.nhid, device="cuda"),
                   torch.zeros(a.batch_size, a.nhid, device="cuda")) for _ in range(a.nlayers)]
        for it in range(a.batches):
            phase = "forward"
            data = torch.randint(0, a.vocab, (a.bptt, a.batch_size)).to("cuda")
            target = torch.randint(0, a.vocab, (a.bptt * a.batch_size,)).to("cuda")
            hidden = [(h.detach(), c.detach()) for h, c in hidden]
            out, hidden = model(data, hidden)
            loss = F.cross_entropy(out.view(-1, a.vocab), target)
            del out
            phase = "backward"
            loss.backward()
            torch.nn.utils.clip_grad_norm_(list(model.parameters()), 0.25)
            phase = "optimizer"
            opt.step()
            opt.zero_grad(set_to_none=True)
            truth["steps"] = it + 1
            del data, target, loss
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
