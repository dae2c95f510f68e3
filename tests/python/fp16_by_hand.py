"""fp16_by_hand.py — a SIMULATED training loop (examples/sim/sim_train.py's GPT-2 124M, fused
AdamW) under fp16 autocast with its loss scaled by hand, no GradScaler (Megatron's, fairseq's
way): its dtype is float16, which the trace's 16-bit weight copies cannot tell from bfloat16.
Prints "autocast float16, trained N steps". Used by tests/integration/fp16_by_hand.sh."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import sim_train as st  # noqa: E402
import simtorch as torch  # noqa: E402

c = dict(st.DEFAULTS)
c.update(n_layer=4, n_head=12, n_embd=768, block_size=256, compile=False, dtype="float16")
torch.cuda.init()
model = st.GPT(c)
model.to("cuda")
opt = model.configure_optimizers(c)
steps = 2
for _ in range(steps):
    d = torch.randint(c["vocab_size"], size=(4, c["block_size"] + 1))
    x, y = d[:, :-1].to("cuda"), d[:, 1:].to("cuda")
    with torch.autocast("cuda", dtype=torch.float16):
        logits, loss = model(x, y)
    (loss * 1024.0).backward()  # the loss scaled by hand
    del logits, loss, x, y
    opt.step()
    opt.zero_grad(set_to_none=True)
print("autocast float16, trained", steps, "steps", flush=True)
