"""oom_retry.py — a SIMULATED training loop (examples/sim/sim_train.py's GPT-2 124M, bf16
autocast, fused AdamW) that catches out-of-memory errors and goes on: it tries the micro-batches
of $BS in turn, two optimizer steps each, and after an error frees what it can (zero_grad,
gc.collect, torch.cuda.empty_cache) and tries the next, as a batch-size search does. Prints
"OOM at B" / "trained at B". Used by tests/integration/oom_caught.sh."""
import gc
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import sim_train as st  # noqa: E402
import simtorch as torch  # noqa: E402

c = dict(st.DEFAULTS)
c.update(n_layer=12, n_head=12, n_embd=768, block_size=1024, compile=False, dtype="bfloat16")
torch.cuda.init()
ctx = torch.amp.autocast(device_type="cuda", dtype=torch.bfloat16)
model = st.GPT(c)
model.to("cuda")
opt = model.configure_optimizers(c)


def step(B):
    d = torch.randint(c["vocab_size"], size=(B, c["block_size"] + 1))
    x, y = d[:, :-1].to("cuda"), d[:, 1:].to("cuda")
    with ctx:
        logits, loss = model(x, y)
    loss.backward()
    del logits, loss, x, y
    opt.step()
    opt.zero_grad(set_to_none=True)


for B in [int(b) for b in os.environ.get("BS", "14,4").split(",")]:
    try:
        step(B)
        step(B)
        print("trained at", B, flush=True)
        break
    except torch.OutOfMemoryError:
        print("OOM at", B, flush=True)
    opt.zero_grad(set_to_none=True)
    gc.collect()
    torch.cuda.empty_cache()
