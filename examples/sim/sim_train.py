"""examples/sim/sim_train.py — a SIMULATION of a nanoGPT training run's GPU allocations, for
vramtrace's no-GPU demo: the same script structure and knobs as examples/gpt/train.py, on
simtorch (sizes only, nothing computed) and the project's fake CUDA runtime. Its numbers are
what the formulas in docs say PyTorch would allocate, not measurements of a real GPU.

    python3 examples/sim/sim_train.py ../gpt/config/gpt2-124m-12gb.py --batch_size=8
"""
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "gpt"))
from configurator import parse_config  # noqa: E402

import simtorch  # noqa: E402
import simtorch.functional as F  # noqa: E402
import simtorch.nn as nn  # noqa: E402
from simtorch.amp import GradScaler  # noqa: E402
from simtorch.optim import AdamW  # noqa: E402

DEFAULTS = dict(
    batch_size=12, block_size=1024, gradient_accumulation_steps=1, n_layer=12, n_head=12,
    n_embd=768, dropout=0.0, bias=False, vocab_size=50304, dtype="float16", compile=True,
    learning_rate=6e-4, weight_decay=1e-1, beta1=0.9, beta2=0.95, grad_clip=1.0,
    eval_interval=2000, eval_iters=200, max_iters=20, log_interval=1, device="cuda", seed=1337,
    allocator="auto",  # caching | async | auto (async when PYTORCH_CUDA_ALLOC_CONF says so)
)


class CausalSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_attn = nn.Linear(c["n_embd"], 3 * c["n_embd"], bias=c["bias"])
        self.c_proj = nn.Linear(c["n_embd"], c["n_embd"], bias=c["bias"])
        self.resid_dropout = nn.Dropout(c["dropout"])
        self.n_head = c["n_head"]

    def forward(self, x):
        qkv = self.c_attn(x)  # q, k, v are views of it
        y = F.scaled_dot_product_attention(qkv, self.n_head)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_fc = nn.Linear(c["n_embd"], 4 * c["n_embd"], bias=c["bias"])
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * c["n_embd"], c["n_embd"], bias=c["bias"])
        self.dropout = nn.Dropout(c["dropout"])

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1 = nn.LayerNorm(c["n_embd"], c["bias"])
        self.attn = CausalSelfAttention(c)
        self.ln_2 = nn.LayerNorm(c["n_embd"], c["bias"])
        self.mlp = MLP(c)

    def forward(self, x):
        x = F.add(x, self.attn(self.ln_1(x)))
        x = F.add(x, self.mlp(self.ln_2(x)))
        return x


class GPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wte = nn.Embedding(c["vocab_size"], c["n_embd"])
        self.wpe = nn.Embedding(c["block_size"], c["n_embd"])
        self.drop = nn.Dropout(c["dropout"])
        self.h = nn.ModuleList([Block(c) for _ in range(c["n_layer"])])
        self.ln_f = nn.LayerNorm(c["n_embd"], c["bias"])
        self.lm_head = nn.Linear(c["n_embd"], c["vocab_size"], bias=False)
        self.wte.weight = self.lm_head.weight  # weight tying

    def forward(self, idx, targets=None):
        b, t = idx.shape
        pos = F.arange(t)
        x = self.drop(F.add(self.wte(idx), self.wpe(pos)))
        del pos
        for block in self.h:
            x = block(x)
        x = self.ln_f(x)
        logits = self.lm_head(x)
        del x
        loss = F.cross_entropy(logits, targets) if targets is not None else None
        return logits, loss

    def configure_optimizers(self, c):
        params = self.parameters()
        groups = [{"params": [p for p in params if len(p.shape) >= 2], "weight_decay": c["weight_decay"]},
                  {"params": [p for p in params if len(p.shape) < 2], "weight_decay": 0.0}]
        return AdamW(groups, lr=c["learning_rate"], betas=(c["beta1"], c["beta2"]), fused=True)


class Trainer:
    def __init__(self, c):
        self.c = c
        self.pinned = {}  # PyTorch's caching host allocator: pinned blocks are reused
        self.iter_times = []
        self.iters = 0

    def get_batch(self, split):
        """A micro-batch (x, y) of int64 token ids, through pinned host memory to the device."""
        B, T = self.c["batch_size"], self.c["block_size"]
        nbytes = 1 << (8 * B * T - 1).bit_length()
        for key in ("x", "y"):
            if (key, nbytes) not in self.pinned:
                self.pinned[(key, nbytes)] = simtorch.host_alloc(nbytes)
        return simtorch.Tensor((B, T), "int64"), simtorch.Tensor((B, T), "int64")

    @simtorch.no_grad()
    def estimate_loss(self, model, ctx):
        out = {}
        model.eval()
        for split in ("train", "val"):
            for k in range(self.c["eval_iters"]):
                X, Y = self.get_batch(split)
                with ctx:
                    logits, loss = model(X, Y)
            out[split] = 0.0
        model.train()
        return out

    def train(self, model, optimizer, scaler, ctx):
        c = self.c
        A = c["gradient_accumulation_steps"]
        X, Y = self.get_batch("train")
        for iter_num in range(c["max_iters"]):
            if c["eval_iters"] > 0 and c["eval_interval"] > 0 and iter_num % c["eval_interval"] == 0:
                self.estimate_loss(model, ctx)
                print(f"step {iter_num}: (simulated) evaluation of {c['eval_iters']} batches per split",
                      flush=True)
            t0 = time.perf_counter()
            for micro_step in range(A):
                with ctx:
                    logits, loss = model(X, Y)
                    loss = F.scalar_op(loss)  # loss / gradient_accumulation_steps
                X, Y = self.get_batch("train")
                scaler.scale(loss).backward()
            if c["grad_clip"] != 0.0:
                scaler.unscale_(optimizer)
                nn.clip_grad_norm_(model.parameters(), c["grad_clip"])
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
            dt = (time.perf_counter() - t0) * 1000.0
            self.iter_times.append(dt)
            self.iters = iter_num + 1
            if c["log_interval"] > 0 and iter_num % c["log_interval"] == 0:
                print(f"iter {iter_num}: (simulated) {dt:.1f}ms of simulation time", flush=True)

    def ms_per_iter(self):
        t = self.iter_times
        if not t:
            return None
        return round(statistics.median(t[max(1, len(t) // 3) if len(t) > 1 else 0:]), 3)


def alloc_conf():
    return {k: os.environ[k] for k in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF") if k in os.environ}


def main(argv):
    c, _ = parse_config(argv, DEFAULTS, "sim_train.py")
    allocator = c["allocator"]
    if allocator == "auto":
        allocator = "async" if any("backend:cudamallocasync" in v.lower().replace(" ", "")
                                   for v in alloc_conf().values()) else "caching"
    if allocator not in ("caching", "async"):
        print(f"sim_train.py: --allocator={allocator}: expected caching, async or auto", file=sys.stderr)
        return 2
    print(f"sim_train.py: {simtorch.SIMULATION}; allocator={allocator}"
          + ("; compile=True is simulated as eager" if c["compile"] else ""), flush=True)
    simtorch.init(allocator)
    ctx = simtorch.autocast(c["dtype"]) if c["dtype"] in ("float16", "bfloat16") else _Null()
    trainer, nparams, oom, message = Trainer(c), None, False, None
    try:
        model = GPT(c)
        nparams = sum(p.numel() for p in model.parameters())
        print(f"number of parameters: {nparams / 1e6:.2f}M (simulated)", flush=True)
        model.to(c["device"])
        scaler = GradScaler(enabled=c["dtype"] == "float16")
        optimizer = model.configure_optimizers(c)
        trainer.train(model, optimizer, scaler, ctx)
    except simtorch.OutOfMemoryError as e:
        oom, message = True, str(e)
        print(f"simtorch.OutOfMemoryError: {message}", file=sys.stderr, flush=True)
    st = simtorch.memory_stats()
    free, total = simtorch.mem_get_info()
    stats = {
        "simulation": True, "torch_version": "simtorch (simulation)", "cuda_version": None,
        "device": "cuda", "device_name": "simulated (fake CUDA runtime)", "oom": oom,
        "iters": trainer.iters, "ms_per_iter": trainer.ms_per_iter(), "params": nparams,
        "alloc_conf": alloc_conf(), "allocator_backend": "native" if allocator == "caching" else "cudaMallocAsync",
        "config": c, "pid": os.getpid(),
        "max_memory_allocated": st["allocated_bytes.all.peak"],
        "max_memory_reserved": st["reserved_bytes.all.peak"],
        "memory_allocated": st["allocated_bytes.all.current"],
        "memory_reserved": st["reserved_bytes.all.current"],
        "num_device_alloc": st["num_device_alloc"] if allocator == "caching" else 0,
        "num_device_free": st["num_device_free"], "num_alloc_retries": st["num_alloc_retries"],
        "num_ooms": st["num_ooms"], "mem_get_info_free": free, "mem_get_info_total": total,
    }
    if message:
        stats["oom_message"] = message
    print("VRAMTRACE_TORCH_STATS " + json.dumps(stats, sort_keys=True), flush=True)
    return 1 if oom else 0


class _Null:
    """No autocast (dtype float32)."""

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
