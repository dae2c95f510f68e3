"""own_optim.py — a SIMULATED small decoder LM trained with an optimizer written in the program:
--optimizer_name lion (Lion: one fp32 momentum per parameter, 4 B), adamw8bit (a blockwise 8-bit
AdamW of its own: two uint8 states and an fp32 scale per 256 elements) or sam (SAM over
torch.optim.SGD with momentum: two forward/backward passes per step, SAM keeping a copy of every
weight beside SGD's momentum). The classes are defined here (`class Lion(Optimizer):` ...), none
of them the library's. bf16 autocast. Prints its own facts first: "FACTS params=N
construction_line=L class_line=L" (the line that constructs the optimizer, the line that defines
class AdamW8bit), and after its first step "STATE optimizer=B" (the bytes of its optimizer's own
state: SAM's copy and SGD's momentum together); an out-of-memory error prints "OOM in PHASE" and
exits 1. Used by tests/integration/own_optim.sh."""
import argparse
import inspect
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from simtorch.optim.optimizer import Optimizer  # noqa: E402


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.n1, self.n2 = nn.RMSNorm(d), nn.RMSNorm(d)
        self.q, self.k = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
        self.v, self.o = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
        self.up, self.down = nn.Linear(d, 4 * d, bias=False), nn.Linear(4 * d, d, bias=False)
        self.h = heads

    def forward(self, x):
        B, T, C = x.size()
        y = self.n1(x)
        q, k, v = (m(y).view(B, T, self.h, C // self.h).transpose(1, 2) for m in (self.q, self.k, self.v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).contiguous().view(B, T, C))
        return x + self.down(F.gelu(self.up(self.n2(x))))


class LM(nn.Module):
    def __init__(self, vocab, d, layers):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList([Block(d, d // 64) for _ in range(layers)])
        self.norm, self.head = nn.RMSNorm(d), nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        x = self.emb(ids)
        for b in self.blocks:
            x = b(x)
        return self.head(self.norm(x))


class Lion(Optimizer):
    def __init__(self, params, lr=1e-4):
        super().__init__(params, dict(lr=lr))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                st = self.state.setdefault(p, {})
                if "exp_avg" not in st:
                    st["exp_avg"] = torch.zeros_like(p)
                update = torch.empty_like(p)  # sign(exp_avg * b1 + grad * (1 - b1))
                p.add_(update)
                del update


class AdamW8bit(Optimizer):
    def __init__(self, params, lr=1e-4):
        super().__init__(params, dict(lr=lr))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                st = self.state.setdefault(p, {})
                if "state1" not in st:
                    blocks = (p.numel() + 255) // 256
                    st["state1"] = torch.zeros(p.numel(), dtype=torch.uint8, device="cuda")
                    st["state2"] = torch.zeros(p.numel(), dtype=torch.uint8, device="cuda")
                    st["absmax1"] = torch.zeros(blocks, dtype=torch.float32, device="cuda")
                    st["absmax2"] = torch.zeros(blocks, dtype=torch.float32, device="cuda")


class SAM(Optimizer):
    def __init__(self, params, base_optimizer, **kw):
        super().__init__(params, dict(**kw))
        self.base_optimizer = base_optimizer(self.param_groups, **kw)

    @torch.no_grad()
    def first_step(self):
        for group in self.param_groups:
            for p in group["params"]:
                self.state.setdefault(p, {})["old_p"] = p.data.clone()
                p.add_(p.grad * 0.05)
        self.zero_grad()

    @torch.no_grad()
    def second_step(self):
        for group in self.param_groups:
            for p in group["params"]:
                p.data.copy_(self.state[p]["old_p"])
        self.base_optimizer.step()
        self.zero_grad()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--optimizer_name", choices=["lion", "adamw8bit", "sam"], default="lion")
    ap.add_argument("--batch_size", type=int, default=4)
    ap.add_argument("--block_size", type=int, default=512)
    ap.add_argument("--steps", type=int, default=2)
    a = ap.parse_args()
    V = 32000
    model = LM(V, 1024, 8).to("cuda")
    ps = list(model.parameters())
    here = inspect.currentframe().f_lineno
    opt = Lion(ps) if a.optimizer_name == "lion" else AdamW8bit(ps) if a.optimizer_name == "adamw8bit" else \
        SAM(ps, torch.optim.SGD, lr=0.1, momentum=0.9)
    print(f"FACTS params={sum(p.numel() for p in ps)} construction_line={here + 1} "
          f"class_line={inspect.getsourcelines(AdamW8bit)[1]}", flush=True)

    def loss_of(x, y):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return F.cross_entropy(model(x).float().view(-1, V), y.view(-1))

    phase = "forward"
    try:
        for it in range(a.steps):
            x = torch.randint(0, V, (a.batch_size, a.block_size)).to("cuda")
            y = torch.randint(0, V, (a.batch_size, a.block_size)).to("cuda")
            phase = "forward"
            loss = loss_of(x, y)
            phase = "backward"
            loss.backward()
            del loss
            phase = "optimizer"
            if a.optimizer_name == "sam":
                opt.first_step()
                phase = "forward"
                loss = loss_of(x, y)
                phase = "backward"
                loss.backward()
                del loss
                phase = "optimizer"
                opt.second_step()
                st = [v for s in opt.state.values() for v in s.values() if hasattr(v, "numel")]
                st += [v for s in opt.base_optimizer.state.values() for v in s.values()
                       if hasattr(v, "numel") and v.numel() > 1]
            else:
                opt.step()
                opt.zero_grad(set_to_none=True)
                st = [v for s in opt.state.values() for v in s.values() if hasattr(v, "numel")]
            if it == 0:
                print(f"STATE optimizer={sum(t.numel() * t.element_size() for t in st)}", flush=True)
            del x, y, st  # (the list would keep this step's copies alive into the next one's)
            print(f"step {it}", flush=True)
    except torch.OutOfMemoryError:
        print(f"OOM in {phase}", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
