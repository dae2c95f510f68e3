"""ppo_gen.py — a SIMULATED PPO-style loop of the program's own (the shape of an RLHF loop), its
batch flag named for generation: each iteration, under model.eval() and no_grad, --gen_batch_size
prompts of --prompt_len tokens grow by --gen_len tokens sampled one at a time (the whole prefix
run again for each, the last position's logits kept: no KV cache; the token batch is made by
torch.cat inside that block), then the old log-probs over the whole sequences; model.train(), and
updates over that rollout in mini-batches of --mini_batch_size sequences sliced from it (a forward,
a loss reading the old log-probs, backward, a fused AdamW step). The policy is
tests/python/own_llama_nopos.py's Decoder (its own class: 8 heads of d 512, V 32000, no position
ids); bf16 autocast over fp32 weights. Prints FACTS (heads, batches, T) and VRAMTRACE_TORCH_STATS
(steps, rollouts, the phase of an out-of-memory error: "rollout" in that block). Used by
tests/integration/ppo_gen.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from sim_truth import finish, record_oom  # noqa: E402
from own_llama_nopos import Decoder  # noqa: E402


def last_logits(model, ids):
    """the logits at the last position only (a generation step's)"""
    x = model.emb(ids)
    for b in model.blocks:
        x = b(x)
    return model.head(model.norm(x[:, -1]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gen_batch_size", type=int, default=16)
    ap.add_argument("--mini_batch_size", type=int, default=4)
    ap.add_argument("--prompt_len", type=int, default=96)
    ap.add_argument("--gen_len", type=int, default=32)
    ap.add_argument("--iterations", type=int, default=2)
    a = ap.parse_args()
    V, d, L, H = 32000, 512, 8, 8
    T = a.prompt_len + a.gen_len
    print(f"FACTS n_head={H} n_embd={d} seq_len={T} gen_batch={a.gen_batch_size} "
          f"mini_batch={a.mini_batch_size}", flush=True)
    truth = {"gen_batch": a.gen_batch_size, "mini_batch": a.mini_batch_size, "n_head": H, "seq_len": T,
             "steps": 0, "rollouts": 0, "oom": False, "oom_phase": None}
    phase = "init"
    try:
        model = Decoder(V, d, L, H, 1408).to("cuda")
        opt = torch.optim.AdamW(list(model.parameters()), lr=1e-6, fused=True)
        for it in range(a.iterations):
            phase = "rollout"
            model.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                ids = torch.randint(0, V, (a.gen_batch_size, a.prompt_len)).to("cuda")
                for t in range(a.gen_len):
                    nxt = last_logits(model, ids)
                    tok = torch.randint(0, V, (a.gen_batch_size, 1)).to("cuda")
                    ids = torch.cat([ids, tok], dim=1)
                    del nxt, tok
                old_lp = F.log_softmax(model(ids).float(), dim=-1).sum(dim=-1)
            truth["rollouts"] += 1
            model.train()
            for m in range(a.gen_batch_size // a.mini_batch_size):
                phase = "forward"
                i = m * a.mini_batch_size
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits = model(ids[i:i + a.mini_batch_size])
                lp = F.log_softmax(logits.float(), dim=-1).sum(dim=-1)
                del logits
                loss = -(lp - old_lp[i:i + a.mini_batch_size]).exp().mean()
                phase = "backward"
                loss.backward()
                phase = "optimizer"
                opt.step()
                opt.zero_grad(set_to_none=True)
                truth["steps"] += 1
                del lp, loss
            del ids, old_lp
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
