"""ppo_next.py — a SIMULATED PPO-style loop (examples/sim/sim_train.py's GPT-2 124M: 12 heads,
n_embd 768, T 1024; bf16 autocast, fused AdamW) whose rollout is collected at the END of the loop
body, for the next iteration's updates: each iteration first trains on the rollout the one before
it collected (mini-batches of --mini_batch_size sequences sliced from it, each a forward, a loss
that reads the old logits, backward and an optimizer step), then, under model.eval() and
no_grad, collects the next rollout of --rollout_batch_size sequences and their old logits (a
batch of its own). The first iteration only collects. tests/python/ppo_iter.py writes the same
loop with the rollout first. Prints FACTS (its heads, batches, T) and VRAMTRACE_TORCH_STATS
(steps, rollouts, and the phase of an out-of-memory error: "rollout" in that block). Used by
tests/integration/ppo_next.sh."""
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
    ap.add_argument("--rollout_batch_size", type=int, default=8)
    ap.add_argument("--mini_batch_size", type=int, default=2)
    ap.add_argument("--iterations", type=int, default=2)
    a = ap.parse_args()
    c = dict(st.DEFAULTS)
    c.update(n_layer=12, n_head=12, n_embd=768, block_size=1024, compile=False, dtype="bfloat16")
    print("FACTS " + f"n_head={c['n_head']} n_embd={c['n_embd']} seq_len={c['block_size']} "
          f"rollout_batch={a.rollout_batch_size} mini_batch={a.mini_batch_size}", flush=True)
    truth = {"rollout_batch": a.rollout_batch_size, "mini_batch": a.mini_batch_size, "n_head": c["n_head"],
             "steps": 0, "rollouts": 0, "oom": False, "oom_phase": None}
    ctx = torch.amp.autocast(device_type="cuda", dtype=torch.bfloat16)
    phase = "init"
    try:
        model = st.GPT(c)
        model.to("cuda")
        opt = model.configure_optimizers(c)
        xs = ys = old_logits = None
        for it in range(a.iterations + 1):
            if old_logits is not None:  # the updates, over the rollout collected before
                model.train()
                for m in range(a.rollout_batch_size // a.mini_batch_size):
                    phase = "forward"
                    i = m * a.mini_batch_size
                    x, y = xs[i:i + a.mini_batch_size], ys[i:i + a.mini_batch_size]
                    with ctx:
                        logits = model(x, y)[0]
                    loss = F.mse_loss(logits.float(), old_logits[i:i + a.mini_batch_size].float())
                    del logits
                    phase = "backward"
                    loss.backward()
                    phase = "optimizer"
                    opt.step()
                    opt.zero_grad(set_to_none=True)
                    truth["steps"] += 1
                del xs, ys, old_logits
            if it == a.iterations:
                break
            phase = "rollout"  # the next iteration's rollout, collected last
            model.eval()
            with torch.no_grad():
                d = torch.randint(c["vocab_size"], size=(a.rollout_batch_size, c["block_size"] + 1))
                xs, ys = d[:, :-1].to("cuda"), d[:, 1:].to("cuda")
                with ctx:
                    old_logits = model(xs, ys)[0]
            truth["rollouts"] += 1
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
