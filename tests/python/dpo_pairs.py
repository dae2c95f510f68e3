"""dpo_pairs.py — a SIMULATED DPO step in the program's own loop: a policy and a frozen reference
(tests/python/own_llama_nopos.py's Decoder: no position ids, so nothing in the trace gives T), each
step --batch_size preference PAIRS, a chosen and a rejected sequence of --max_length tokens each,
joined into one token batch of 2 * batch_size sequences (torch.cat([chosen, rejected], dim=0), or
with --two_lines on a line of its own before the copy to the device), run through the reference
under no_grad and then through the policy; bf16 autocast over fp32 weights, AdamW on the policy.
Prints its own facts: "FACTS pairs=B sequences_per_forward=2B seq_len=T", and
VRAMTRACE_TORCH_STATS. Used by tests/integration/dpo_pairs.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from sim_truth import finish, record_oom  # noqa: E402
from own_llama_nopos import Decoder  # noqa: E402


def seq_logps(model, ids):
    logits = model(ids)
    return F.log_softmax(logits.float(), dim=-1).sum(dim=-1).sum(dim=-1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch_size", type=int, default=2, help="preference pairs per step")
    ap.add_argument("--max_length", type=int, default=256)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--two_lines", action="store_true")
    a = ap.parse_args()
    V, d, L, H = 32000, 512, 8, 8
    print(f"FACTS pairs={a.batch_size} sequences_per_forward={2 * a.batch_size} seq_len={a.max_length}",
          flush=True)
    truth = {"pairs": a.batch_size, "seq_len": a.max_length, "steps": 0, "oom": False, "oom_phase": None}
    phase = "init"
    try:
        policy = Decoder(V, d, L, H, 1408).to("cuda")
        ref = Decoder(V, d, L, H, 1408).to("cuda")
        ref.requires_grad_(False)
        ref.eval()
        opt = torch.optim.AdamW(list(policy.parameters()), lr=1e-6, fused=True)
        for it in range(a.steps):
            chosen = torch.randint(0, V, (a.batch_size, a.max_length))
            rejected = torch.randint(0, V, (a.batch_size, a.max_length))
            if a.two_lines:
                both = torch.cat([chosen, rejected])
                ids = both.to("cuda")
            else:
                ids = torch.cat([chosen, rejected], dim=0).to("cuda")
            phase = "forward"
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                ref_lp = seq_logps(ref, ids)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                pol_lp = seq_logps(policy, ids)
            loss = F.relu(pol_lp - ref_lp).mean()
            phase = "backward"
            loss.backward()
            phase = "optimizer"
            opt.step()
            opt.zero_grad(set_to_none=True)
            truth["steps"] = it + 1
            del ids, ref_lp, pol_lp, loss
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
