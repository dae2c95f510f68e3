"""sample_pass.py — a SIMULATED training loop (examples/sim/sim_train.py's GPT-2 124M, bf16
autocast, fused AdamW) that samples during training: after every --sample_every steps it calls
sample(), a function decorated @torch.no_grad() (no model.eval()) that runs the model on a batch of
--sample_batch sequences, its own batch. Prints its truth (VRAMTRACE_TORCH_STATS: steps, samplings,
the phase of an out-of-memory error). Used by tests/integration/sample_pass.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import sim_train as st  # noqa: E402
import simtorch as torch  # noqa: E402
from sim_truth import finish, record_oom  # noqa: E402


@torch.no_grad()
def sample(model, c, n, ctx):
    d = torch.randint(c["vocab_size"], size=(n, c["block_size"] + 1))
    xs, ys = d[:, :-1].to("cuda"), d[:, 1:].to("cuda")
    with ctx:
        logits, loss = model(xs, ys)
    del logits, loss, xs, ys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch_size", type=int, default=4)
    ap.add_argument("--sample_batch", type=int, default=8)
    ap.add_argument("--sample_every", type=int, default=2)
    ap.add_argument("--steps", type=int, default=2)
    a = ap.parse_args()
    c = dict(st.DEFAULTS)
    c.update(n_layer=12, n_head=12, n_embd=768, block_size=1024, compile=False, dtype="bfloat16")
    truth = {"batch_size": a.batch_size, "sample_batch": a.sample_batch, "steps": 0,
             "samplings": 0, "oom": False, "oom_phase": None}
    ctx = torch.amp.autocast(device_type="cuda", dtype=torch.bfloat16)
    phase = "init"
    try:
        model = st.GPT(c)
        model.to("cuda")
        opt = model.configure_optimizers(c)
        for step in range(a.steps):
            phase = "forward"
            d = torch.randint(c["vocab_size"], size=(a.batch_size, c["block_size"] + 1))
            x, y = d[:, :-1].to("cuda"), d[:, 1:].to("cuda")
            with ctx:
                logits, loss = model(x, y)
            del logits
            phase = "backward"
            loss.backward()
            phase = "optimizer"
            opt.step()
            opt.zero_grad(set_to_none=True)
            truth["steps"] = step + 1
            if (step + 1) % a.sample_every == 0:
                phase = "sampling"
                sample(model, c, a.sample_batch, ctx)
                truth["samplings"] += 1
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
