"""mingpt_train.py — a SIMULATED training script in minGPT's layout (simtorch, examples/sim/): its
model class GPT comes from mingpt/model.py (minGPT's, not nanoGPT's: no configurator, none of
nanoGPT's classes), trained fp32 with AdamW. Used by tests/integration/own_parts.sh."""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "sim"))
sys.path.insert(0, HERE)
import simtorch as torch  # noqa: E402
from mingpt.model import GPT  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch_size", type=int, default=4)
    ap.add_argument("--steps", type=int, default=2)
    a = ap.parse_args()
    V, T, d = 4096, 128, 128
    model = GPT(V, T, d, 2, 4)
    model.to("cuda")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(a.steps):
        x = torch.randint(0, V, (a.batch_size, T)).to("cuda")
        y = torch.randint(0, V, (a.batch_size, T)).to("cuda")
        _, loss = model(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        print("step %d" % step, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
