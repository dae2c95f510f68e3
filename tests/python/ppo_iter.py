"""ppo_iter.py — a SIMULATED PPO-style loop (examples/sim/sim_train.py's GPT-2 124M: 12 heads,
n_embd 768, T 1024; bf16 autocast, fused AdamW). Each iteration, in one loop body: model.eval();
with torch.no_grad(): a rollout of --rollout_batch_size sequences and their old logits (a batch
of its own); model.train(); then updates over that rollout in mini-batches of --mini_batch_size
sequences, each a forward on a slice of the rollout, a loss that reads the old logits, backward
and an optimizer step. The rollout's no_grad block and the updates share the iteration's block
(the backward comes after the block, in the block around it), as PPO/RLHF loops write them.
With --own the policy is tests/python/own_llama_nopos.py's Decoder (the program's own class, 16
heads of d 1024, V 32000, T 512) and the rollout first generates a token from the last position's
logits alone (no B·T×V logits in that pass), as a PPO rollout samples. Prints FACTS (its heads,
batches, T) and VRAMTRACE_TORCH_STATS (steps, rollouts, and the phase of an out-of-memory error:
"rollout" in that block). Used by tests/integration/ppo_rollout.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import sim_train as st  # noqa: E402
import simtorch as torch  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from sim_truth import finish, record_oom  # noqa: E402
from own_llama_nopos import Decoder  # noqa: E402


def last_logits(model, ids):
    """the own decoder's logits at the last position only (a generation step's)"""
    x = model.emb(ids)
    for b in model.blocks:
        x = b(x)
    return model.head(model.norm(x[:, -1]))


def rollout_batch(c, n):
    d = torch.randint(c["vocab_size"], size=(n, c["block_size"] + 1))
    return d[:, :-1].to("cuda"), d[:, 1:].to("cuda")


def logits_of(model, x, y, own):
    return model(x) if own else model(x, y)[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rollout_batch_size", type=int, default=8)
    ap.add_argument("--mini_batch_size", type=int, default=2)
    ap.add_argument("--iterations", type=int, default=2)
    ap.add_argument("--own", action="store_true")
    ap.add_argument("--gen_tokens", type=int, default=0)
    a = ap.parse_args()
    c = dict(st.DEFAULTS)
    c.update(n_layer=12, n_head=12, n_embd=768, block_size=1024, compile=False, dtype="bfloat16")
    if a.own:
        c.update(n_layer=8, n_head=16, n_embd=1024, block_size=512, vocab_size=32000)
    print("FACTS " + f"n_head={c['n_head']} n_embd={c['n_embd']} seq_len={c['block_size']} "
          f"rollout_batch={a.rollout_batch_size} mini_batch={a.mini_batch_size}", flush=True)
    truth = {"rollout_batch": a.rollout_batch_size, "mini_batch": a.mini_batch_size, "n_head": c["n_head"],
             "steps": 0, "rollouts": 0, "oom": False, "oom_phase": None}
    ctx = torch.amp.autocast(device_type="cuda", dtype=torch.bfloat16)
    phase = "init"
    try:
        if a.own:
            model = Decoder(c["vocab_size"], c["n_embd"], c["n_layer"], c["n_head"], 2816).to("cuda")
            opt = torch.optim.AdamW(list(model.parameters()), lr=1e-5, fused=True)
        else:
            model = st.GPT(c)
            model.to("cuda")
            opt = model.configure_optimizers(c)
        for it in range(a.iterations):
            phase = "rollout"
            model.eval()
            if a.own:  # (its prompts made before the no_grad block, as RL loops often do)
                xs, ys = rollout_batch(c, a.rollout_batch_size)
            with torch.no_grad():
                if not a.own:
                    d = torch.randint(c["vocab_size"], size=(a.rollout_batch_size, c["block_size"] + 1))
                    xs, ys = d[:, :-1].to("cuda"), d[:, 1:].to("cuda")
                with ctx:
                    for t in range(a.gen_tokens if a.own else 0):
                        nxt = last_logits(model, xs)  # a token sampled, appended
                        tok = torch.randint(c["vocab_size"], size=(a.rollout_batch_size, 1)).to("cuda")
                        xs = torch.cat([xs, tok], dim=1)
                        del nxt, tok
                    old_logits = logits_of(model, xs, ys, a.own)
            truth["rollouts"] += 1
            model.train()
            for m in range(a.rollout_batch_size // a.mini_batch_size):
                phase = "forward"
                i = m * a.mini_batch_size
                x, y = xs[i:i + a.mini_batch_size], ys[i:i + a.mini_batch_size]
                with ctx:
                    logits = logits_of(model, x, y, a.own)
                loss = F.mse_loss(logits.float(), old_logits[i:i + a.mini_batch_size].float())
                del logits
                phase = "backward"
                loss.backward()
                phase = "optimizer"
                opt.step()
                opt.zero_grad(set_to_none=True)
                truth["steps"] += 1
            del xs, ys, old_logits
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
