"""rollout.py — a SIMULATED training loop (examples/sim/sim_train.py's GPT-2 124M, bf16 autocast,
fused AdamW) that collects rollouts before each step, as PPO or RLHF loops do: every
--rollout_every steps, model.eval(); with torch.no_grad(): a forward over 4 x --batch_size
sequences, whose outputs (the rollouts) it keeps; model.train(); then the step trains on a slice
of --batch_size of them (its loss reads the rollouts' logits). The no_grad block looks like an
inline evaluation, but its outputs feed the step. Prints its truth (VRAMTRACE_TORCH_STATS: steps,
rollouts, the phase of an out-of-memory error: "rollout" in that block). Used by
tests/integration/inline_eval.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import sim_train as st  # noqa: E402
import simtorch as torch  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from sim_truth import finish, record_oom  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch_size", type=int, default=2)
    ap.add_argument("--rollout_every", type=int, default=1)
    ap.add_argument("--steps", type=int, default=2)
    a = ap.parse_args()
    c = dict(st.DEFAULTS)
    c.update(n_layer=12, n_head=12, n_embd=768, block_size=1024, compile=False, dtype="bfloat16")
    truth = {"batch_size": a.batch_size, "rollout_batch": 4 * a.batch_size, "steps": 0, "rollouts": 0,
             "oom": False, "oom_phase": None}
    ctx = torch.amp.autocast(device_type="cuda", dtype=torch.bfloat16)
    phase = "init"
    try:
        model = st.GPT(c)
        model.to("cuda")
        opt = model.configure_optimizers(c)
        for step in range(a.steps):
            if step % a.rollout_every == 0:
                phase = "rollout"
                model.eval()
                with torch.no_grad():
                    d = torch.randint(c["vocab_size"], size=(4 * a.batch_size, c["block_size"] + 1))
                    xs, ys = d[:, :-1].to("cuda"), d[:, 1:].to("cuda")
                    with ctx:
                        old_logits, _ = model(xs, ys)
                model.train()
                truth["rollouts"] += 1
            phase = "forward"
            i = (step % 4) * a.batch_size
            x, y = xs[i:i + a.batch_size], ys[i:i + a.batch_size]
            with ctx:
                logits, loss = model(x, y)
            ref = old_logits[i:i + a.batch_size]
            loss = loss + F.mse_loss(logits.float(), ref.float())
            del logits
            phase = "backward"
            loss.backward()
            phase = "optimizer"
            opt.step()
            opt.zero_grad(set_to_none=True)
            truth["steps"] = step + 1
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
