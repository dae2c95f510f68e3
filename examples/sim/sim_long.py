"""examples/sim/sim_long.py — a SIMULATION of long training runs and what goes wrong in them
after the first steps, for vramtrace's bounded traces, growth report and watch (no GPU): the
nanoGPT model and loop of sim_train.py (simtorch on the fake CUDA runtime), small by default so
that thousands of steps take seconds, with one scenario:

  --scenario=leak      each step also computes a validation loss with gradients on and keeps it
                       in a Python list (`losses.append(loss)`, or with --leak=sum the classic
                       `total_loss += loss` without .item()): every kept loss keeps its whole
                       graph, the forward's saved activations, alive
  --scenario=cache     a cache that never empties: every --cache_every steps a new buffer of
                       --cache_kib KiB for a sequence length not seen before
  --scenario=late_oom  trains normally, then at step --eval_at evaluates with a batch
                       --eval_scale times longer, which runs out of memory on the card
  --scenario=steady    plain training (a long run rolls a bounded trace's window)

--step_sleep=S sleeps S seconds after each step (a run slow enough to watch while it runs);
with --sleep_at=backward, between each step's backward pass and its optimizer step instead (a
step in flight when it is read).

    python3 examples/sim/sim_long.py --scenario=leak --max_iters=60

Its last line is `VRAMTRACE_TORCH_STATS {json}` with "simulation": true and the scenario's own
truth: the bytes its leak or cache holds at the end, and per step how many bytes it added.
"""
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "gpt"))
from configurator import parse_config  # noqa: E402

import simtorch as torch  # noqa: E402
from sim_train import GPT, Trainer  # noqa: E402

DEFAULTS = dict(
    batch_size=4, block_size=64, gradient_accumulation_steps=1, n_layer=2, n_head=2,
    n_embd=128, dropout=0.0, bias=False, vocab_size=1024, dtype="float16", compile=False,
    learning_rate=6e-4, weight_decay=1e-1, beta1=0.9, beta2=0.95, grad_clip=1.0,
    eval_interval=0, eval_iters=0, max_iters=60, log_interval=0, device="cuda", seed=1337,
    allocator="caching", scenario="leak", leak="list", cache_every=5, cache_kib=1024,
    eval_at=40, eval_scale=64, step_sleep=0.0, sleep_at="end",
)


class LongTrainer(Trainer):
    """sim_train.py's loop, one step at a time, with the scenario's mistake in it."""

    def __init__(self, c):
        super().__init__(c)
        self.kept = []          # leak=list: the validation losses, each with its graph
        self.total_loss = None  # leak=sum: total_loss += loss
        self.cache = {}         # cache: never emptied
        self.held_bytes = 0     # what the mistake holds now (its truth)

    def step(self, model, optimizer, scaler, ctx, X, Y):
        with ctx:
            logits, loss = model(X, Y)
        scaler.scale(loss).backward()
        if self.c["step_sleep"] > 0 and self.c["sleep_at"] == "backward":
            time.sleep(self.c["step_sleep"])  # a step in flight: its backward done, its end not
        scaler.unscale_(optimizer)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)

    def validation_loss(self, model, ctx):
        """The mistake of --scenario=leak: a loss computed with gradients on and kept."""
        Xv, Yv = self.get_batch("val")
        with ctx:
            _, loss = model(Xv, Yv)
        if self.c["leak"] == "sum":
            self.total_loss = loss if self.total_loss is None else self.total_loss + loss
        else:
            self.kept.append(loss)

    def late_eval(self, model, ctx):
        """--scenario=late_oom: an evaluation with a longer batch, as a late eval pass makes."""
        c = dict(self.c)
        saved = self.c
        self.c = dict(c, batch_size=c["batch_size"] * c["eval_scale"])
        try:
            model.eval()
            X, Y = self.get_batch("val")
            with ctx:
                model(X, Y)  # no torch.no_grad(): the activations are saved for a backward
        finally:
            self.c = saved
            model.train()

    def run(self, model, optimizer, scaler, ctx):
        c = self.c
        X, Y = self.get_batch("train")
        for it in range(c["max_iters"]):
            if c["scenario"] == "late_oom" and it == c["eval_at"]:
                print(f"step {it}: (simulated) evaluation with a batch of "
                      f"{c['batch_size'] * c['eval_scale']}", flush=True)
                self.late_eval(model, ctx)
            self.step(model, optimizer, scaler, ctx, X, Y)
            X, Y = self.get_batch("train")
            if c["scenario"] == "leak":
                self.validation_loss(model, ctx)
            elif c["scenario"] == "cache" and it % c["cache_every"] == 0:
                n = c["cache_kib"] * 1024
                self.cache[it] = torch.empty(n, dtype=torch.uint8, device=c["device"])
                self.held_bytes += n
            self.iters = it + 1
            if c["step_sleep"] > 0 and c["sleep_at"] == "end":  # a slower run, to be watched live
                time.sleep(c["step_sleep"])


def main(argv):
    c, _ = parse_config(argv, DEFAULTS, "sim_long.py")
    if (c["scenario"] not in ("leak", "cache", "late_oom", "steady") or c["leak"] not in ("list", "sum")
            or c["sleep_at"] not in ("end", "backward")):
        print("sim_long.py: --scenario=leak|cache|late_oom|steady, --leak=list|sum, "
              "--sleep_at=end|backward", file=sys.stderr)
        return 2
    print(f"sim_long.py: {torch.SIMULATION}; scenario={c['scenario']}", flush=True)
    torch.cuda.init()
    ptdtype = {"float16": torch.float16, "bfloat16": torch.bfloat16}.get(c["dtype"])
    ctx = torch.amp.autocast(device_type="cuda", dtype=ptdtype, enabled=ptdtype is not None)
    trainer, oom, message = LongTrainer(c), False, None
    try:
        model = GPT(c)
        model.to(c["device"])
        scaler = torch.amp.GradScaler("cuda", enabled=c["dtype"] == "float16")
        optimizer = model.configure_optimizers(c)
        trainer.run(model, optimizer, scaler, ctx)
    except torch.OutOfMemoryError as e:
        oom, message = True, str(e)
        print(f"simtorch.OutOfMemoryError: {message}", file=sys.stderr, flush=True)
    st = torch.cuda.memory_stats()
    stats = {
        "simulation": True, "scenario": c["scenario"], "iters": trainer.iters, "oom": oom,
        "config": c, "pid": os.getpid(),
        "max_memory_allocated": st["allocated_bytes.all.peak"],
        "memory_allocated": st["allocated_bytes.all.current"],
        "max_memory_reserved": st["reserved_bytes.all.peak"],
        "cache_bytes": trainer.held_bytes if c["scenario"] == "cache" else None,
        "cache_bytes_per_step": (c["cache_kib"] * 1024 / c["cache_every"]
                                 if c["scenario"] == "cache" else None),
        "kept_losses": len(trainer.kept) if c["scenario"] == "leak" else None,
    }
    if message:
        stats["oom_message"] = message
    print("VRAMTRACE_TORCH_STATS " + json.dumps(stats, sort_keys=True), flush=True)
    return 1 if oom else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
