"""oom_retry.py — a SIMULATED training loop (examples/sim/sim_train.py's GPT-2 124M, bf16
autocast, fused AdamW) that catches out-of-memory errors and goes on: it tries the micro-batches
of $BS in turn, two optimizer steps each, and after an error frees what it can (zero_grad,
gc.collect, torch.cuda.empty_cache) and tries the next, as a batch-size search does. With
$FRAG=1 it then fills the device in 256 MiB blocks, frees every other one and asks for 1.5 GiB,
which the caching allocator gets only by releasing its cache (a failure it recovers from), and
trains one more step. With $EVAL=N it then evaluates (no_grad, in a function named evaluate) a
batch of N, skipping it when it runs out of memory, and trains one more step. Prints "OOM at B" /
"trained at B". With $TS it keeps the micro-batch $B (default 14) and tries the sequence lengths
of $TS in turn instead, printing "OOM at T t" / "trained at T t". Used by tests/integration/oom_caught.sh."""
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


def step(B, T=c["block_size"]):
    d = torch.randint(c["vocab_size"], size=(B, T + 1))
    x, y = d[:, :-1].to("cuda"), d[:, 1:].to("cuda")
    with ctx:
        logits, loss = model(x, y)
    loss.backward()
    del logits, loss, x, y
    opt.step()
    opt.zero_grad(set_to_none=True)


TS = [int(t) for t in os.environ["TS"].split(",")] if os.environ.get("TS") else None
for B in TS or [int(b) for b in os.environ.get("BS", "14,4").split(",")]:
    at = ("T %d" % B) if TS else B
    try:
        if TS:
            B, T = int(os.environ.get("B", "14")), B
            step(B, T)
            step(B, T)
        else:
            step(B)
            step(B)
        print("trained at", at, flush=True)
        break
    except torch.OutOfMemoryError:
        print("OOM at", at, flush=True)
    opt.zero_grad(set_to_none=True)
    gc.collect()
    torch.cuda.empty_cache()
else:
    B = None
if B is not None and os.environ.get("FRAG") == "1":
    keep = []
    while torch.cuda.mem_get_info()[0] >= 1228 << 20:
        keep.append(torch.empty((256 << 20,), dtype=torch.uint8, device="cuda"))
    del keep[::2]
    big = torch.empty((1536 << 20,), dtype=torch.uint8, device="cuda")
    del big, keep
    step(B)
    print("after the retry, trained at", B, flush=True)


def evaluate(n):
    with torch.no_grad():
        try:
            d = torch.randint(c["vocab_size"], size=(n, c["block_size"] + 1))
            x, y = d[:, :-1].to("cuda"), d[:, 1:].to("cuda")
            with ctx:
                logits, loss = model(x, y)
            del logits, loss, x, y
            print("evaluated", n, flush=True)
        except torch.OutOfMemoryError:
            print("evaluation OOM at", n, "skipped", flush=True)
    gc.collect()


if B is not None and os.environ.get("EVAL"):
    evaluate(int(os.environ["EVAL"]))
    step(B)
    print("after the evaluation, trained at", B, flush=True)
