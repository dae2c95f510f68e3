"""ppo_flags.py — a SIMULATED loop whose batch flags are spelled as RL trainers spell them
(--rollout_batch_size, --mini_batch_size), neither a spelling vramtrace reads as the micro-batch:
each step scores a rollout of --rollout_batch_size sequences under no_grad, then trains on slices
of --mini_batch_size. Its model is tests/python/own_llama_nopos.py's Decoder (no position ids:
the trace tells no T, so no micro-batch either). Prints its truth
(VRAMTRACE_TORCH_STATS). Used by tests/integration/batch_flag_unplaced.sh."""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "sim"))
sys.path.insert(0, HERE)
import simtorch as torch  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from sim_truth import finish, record_oom, tensor_bytes  # noqa: E402
from own_llama_nopos import Decoder  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rollout_batch_size", type=int, default=8)
    ap.add_argument("--mini_batch_size", type=int, default=2)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--eval_batch_size", type=int, default=4)  # (no evaluation runs: a flag only)
    a = ap.parse_args()
    T, V = 256, 8192
    truth = {"rollout_batch_size": a.rollout_batch_size, "mini_batch_size": a.mini_batch_size,
             "seq_len": T, "steps": 0, "oom": False, "oom_phase": None}
    phase = "init"
    try:
        model = Decoder(V, 256, 4, 4, 704).to("cuda")
        truth["param_bytes"] = tensor_bytes(model.parameters())
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        for it in range(a.steps):
            phase = "rollout"
            x = torch.randint(0, V, (a.rollout_batch_size, T)).to("cuda")
            with torch.no_grad():
                old = model(x).float().log_softmax(-1)
            del old
            for i in range(0, a.rollout_batch_size, a.mini_batch_size):
                phase = "forward"
                xb = x[i:i + a.mini_batch_size]
                loss = F.cross_entropy(model(xb).float().view(-1, V), xb.reshape(-1))
                phase = "backward"
                loss.backward()
                del loss
            phase = "optimizer"
            opt.step()
            opt.zero_grad(set_to_none=True)
            truth["steps"] = it + 1
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
