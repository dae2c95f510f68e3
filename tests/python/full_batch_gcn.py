"""full_batch_gcn.py — a SIMULATED full-batch GCN (OGB's products/gnn.py shape: --num_layers,
--hidden_channels, --dropout, --epochs): the whole graph on the device (node features, labels,
the train index and a CSR adjacency copied from the host), GCNConv = Linear then a sparse-dense
matmul (a custom Function) plus a bias, ReLU and dropout between layers, the loss over the train
nodes, Adam (simtorch's AdamW, weight decay 0), ONE optimizer step per epoch. There is no batch:
each forward takes every node. Prints its truth (VRAMTRACE_TORCH_STATS): the nodes, the hidden
width, the graph's and the weights' bytes, the steps; an out-of-memory error in the forward says
so. Used by tests/integration/full_batch_gcn.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from simtorch.autograd import Function  # noqa: E402
from sim_truth import finish, record_oom, tensor_bytes  # noqa: E402


class SpMM(Function):
    @staticmethod
    def forward(ctx, h, rowptr, col, value):
        ctx.n = rowptr.size()[0] - 1
        return h.new_empty((ctx.n, h.size()[1]))

    @staticmethod
    def backward(ctx, g):
        return g.new_empty((ctx.n, g.size()[1])), None, None, None


class GCNConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.lin = nn.Linear(cin, cout, bias=False)
        self.bias = nn.Parameter(torch.zeros(cout))

    def forward(self, x, adj):
        return SpMM.apply(self.lin(x), *adj) + self.bias


class GCN(nn.Module):
    def __init__(self, cin, hidden, cout, num_layers, dropout):
        super().__init__()
        self.convs = nn.ModuleList([GCNConv(cin, hidden)] + [GCNConv(hidden, hidden) for _ in range(num_layers - 2)]
                                   + [GCNConv(hidden, cout)])
        self.dropout = dropout

    def forward(self, x, adj):
        for conv in self.convs[:-1]:
            x = F.dropout(F.relu(conv(x, adj)), p=self.dropout, training=self.training)
        return self.convs[-1](x, adj)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--num_layers", type=int, default=3)
    ap.add_argument("--hidden_channels", type=int, default=256)
    ap.add_argument("--dropout", type=float, default=0.5)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--num_nodes", type=int, default=200000)
    ap.add_argument("--num_edges", type=int, default=2000000)
    a = ap.parse_args()
    N, E = a.num_nodes, a.num_edges + a.num_nodes
    truth = {"num_nodes": N, "hidden_channels": a.hidden_channels, "num_layers": a.num_layers,
             "steps": 0, "oom": False, "oom_phase": None}
    phase = "init"
    try:
        x = torch.randn(N, 100).to("cuda")
        y = torch.randint(0, 47, (N,)).to("cuda")
        train_idx = torch.randint(0, N, (N // 10,)).to("cuda")
        adj = (torch.zeros(N + 1, dtype=torch.int64).to("cuda"), torch.zeros(E, dtype=torch.int64).to("cuda"),
               torch.zeros(E).to("cuda"))
        truth["graph_bytes"] = tensor_bytes([x, y, train_idx, *adj])
        model = GCN(100, a.hidden_channels, 47, a.num_layers, a.dropout).to("cuda")
        params = list(model.parameters())
        truth["param_bytes"] = tensor_bytes(params)
        opt = torch.optim.AdamW(params, lr=0.01, weight_decay=0.0, foreach=True)
        for it in range(a.epochs):
            phase = "forward"
            opt.zero_grad()
            out = model(x, adj)[train_idx]
            loss = F.cross_entropy(out, y[train_idx])
            phase = "backward"
            loss.backward()
            phase = "optimizer"
            opt.step()
            truth["steps"] = it + 1
            del out, loss
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
