"""examples/sim/sim_train.py — a SIMULATION of a nanoGPT training run's GPU allocations, for
vramtrace's no-GPU demo: examples/gpt/train.py's model, knobs and loop, written against simtorch
(sizes only, nothing computed), whose caching allocator is the fake libc10_cuda.so on the
project's fake CUDA runtime: vramtrace captures it as a real run (mode tensor+segment).

    python3 examples/sim/sim_train.py examples/gpt/config/gpt2-124m-12gb.py --batch_size=8
"""
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "gpt"))
from configurator import parse_config  # noqa: E402

import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402

DEFAULTS = dict(
    batch_size=12, block_size=1024, gradient_accumulation_steps=1, n_layer=12, n_head=12,
    n_embd=768, dropout=0.0, bias=False, vocab_size=50304, dtype="float16", compile=True,
    learning_rate=6e-4, weight_decay=1e-1, beta1=0.9, beta2=0.95, grad_clip=1.0,
    eval_interval=2000, eval_iters=200, max_iters=20, log_interval=1, device="cuda", seed=1337,
    allocator="auto",  # caching | async | auto (async when PYTORCH_CUDA_ALLOC_CONF says so)
)


class LayerNorm(nn.Module):
    """LayerNorm with an optional bias."""

    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_attn = nn.Linear(c["n_embd"], 3 * c["n_embd"], bias=c["bias"])
        self.c_proj = nn.Linear(c["n_embd"], c["n_embd"], bias=c["bias"])
        self.resid_dropout = nn.Dropout(c["dropout"])
        self.n_head = c["n_head"]
        self.dropout = c["dropout"]

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                           dropout_p=self.dropout if self.training else 0.0)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
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
        self.ln_1 = LayerNorm(c["n_embd"], c["bias"])
        self.attn = CausalSelfAttention(c)
        self.ln_2 = LayerNorm(c["n_embd"], c["bias"])
        self.mlp = MLP(c)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(c["vocab_size"], c["n_embd"]),
            wpe=nn.Embedding(c["block_size"], c["n_embd"]),
            drop=nn.Dropout(c["dropout"]),
            h=nn.ModuleList([Block(c) for _ in range(c["n_layer"])]),
            ln_f=LayerNorm(c["n_embd"], c["bias"]),
        ))
        self.lm_head = nn.Linear(c["n_embd"], c["vocab_size"], bias=False)
        self.transformer["wte"].weight = self.lm_head.weight  # weight tying

    def num_params(self):
        return sum(p.numel() for p in self.parameters())

    def forward(self, idx, targets=None):
        b, t = idx.size()
        tr = self.transformer
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = tr["drop"](tr["wte"](idx) + tr["wpe"](pos))
        for block in tr["h"]:
            x = block(x)
        x = tr["ln_f"](x)
        logits = self.lm_head(x)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                   ignore_index=-1)
        return logits, loss

    def configure_optimizers(self, c):
        params = [p for p in self.parameters() if p.requires_grad]
        groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": c["weight_decay"]},
                  {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
        return torch.optim.AdamW(groups, lr=c["learning_rate"], betas=(c["beta1"], c["beta2"]),
                                 fused=True)


class Trainer:
    def __init__(self, c):
        self.c = c
        self.iter_times = []
        self.iters = 0

    def get_batch(self, split):
        """A micro-batch (x, y) of int64 token ids, made on the host, pinned, copied over."""
        d = torch.randint(self.c["vocab_size"], size=(self.c["batch_size"], self.c["block_size"] + 1))
        x, y = d[:, :-1], d[:, 1:]
        x, y = x.pin_memory(), y.pin_memory()
        return x.to(self.c["device"]), y.to(self.c["device"])

    @torch.no_grad()
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
                    loss = loss / A
                X, Y = self.get_batch("train")  # prefetch, as train.py does
                scaler.scale(loss).backward()
            if c["grad_clip"] != 0.0:
                scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(model.parameters(), c["grad_clip"])
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


def tensor_bytes(ts):
    seen, n = set(), 0
    for t in ts:
        if t is None or not t.is_cuda or id(t.untyped_storage()) in seen:
            continue
        seen.add(id(t.untyped_storage()))
        n += t.numel() * t.element_size()
    return n


def main(argv):
    c, _ = parse_config(argv, DEFAULTS, "sim_train.py")
    allocator = c["allocator"]
    if allocator == "auto":
        allocator = "async" if any("backend:cudamallocasync" in v.lower().replace(" ", "")
                                   for v in alloc_conf().values()) else "caching"
    if allocator not in ("caching", "async"):
        print(f"sim_train.py: --allocator={allocator}: expected caching, async or auto", file=sys.stderr)
        return 2
    if allocator == "async" and not alloc_conf():
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "backend:cudaMallocAsync"  # read when CUDA starts
    print(f"sim_train.py: {torch.SIMULATION}; allocator={allocator}"
          + ("; compile=True is simulated as eager" if c["compile"] else ""), flush=True)
    torch.cuda.init()
    ptdtype = {"float16": torch.float16, "bfloat16": torch.bfloat16}.get(c["dtype"])
    ctx = torch.amp.autocast(device_type="cuda", dtype=ptdtype, enabled=ptdtype is not None)
    trainer, nparams, oom, message, model, optimizer = Trainer(c), None, False, None, None, None
    grad_bytes = None
    try:
        model = GPT(c)
        nparams = model.num_params()
        print(f"number of parameters: {nparams / 1e6:.2f}M (simulated)", flush=True)
        model.to(c["device"])
        scaler = torch.amp.GradScaler("cuda", enabled=c["dtype"] == "float16")
        optimizer = model.configure_optimizers(c)
        trainer.train(model, optimizer, scaler, ctx)
    except torch.OutOfMemoryError as e:
        oom, message = True, str(e)
        print(f"simtorch.OutOfMemoryError: {message}", file=sys.stderr, flush=True)
    st = torch.cuda.memory_stats()
    free, total = torch.cuda.mem_get_info()
    params = list(model.parameters()) if model is not None else []
    state = [v for s in optimizer.state.values() for v in s.values()] if optimizer else []
    stats = {
        "simulation": True, "torch_version": "simtorch (simulation)", "cuda_version": None,
        "device": "cuda", "device_name": torch.cuda.get_device_name(), "oom": oom,
        "iters": trainer.iters, "ms_per_iter": trainer.ms_per_iter(), "params": nparams,
        "alloc_conf": alloc_conf(), "allocator_backend": torch.cuda.get_allocator_backend(),
        "config": c, "pid": os.getpid(),
        "max_memory_allocated": st["allocated_bytes.all.peak"],
        "requested_bytes_peak": st["requested_bytes.all.peak"],
        "max_memory_reserved": st["reserved_bytes.all.peak"],
        "memory_allocated": st["allocated_bytes.all.current"],
        "memory_reserved": st["reserved_bytes.all.current"],
        "num_device_alloc": st["num_device_alloc"], "num_device_free": st["num_device_free"],
        "num_alloc_retries": st["num_alloc_retries"], "num_ooms": st["num_ooms"],
        "mem_get_info_free": free, "mem_get_info_total": total,
        "param_bytes": tensor_bytes(params), "grad_bytes": grad_bytes,
        "optim_state_bytes": tensor_bytes(state) if state else (0 if optimizer else None),
    }
    if message:
        stats["oom_message"] = message
    print("VRAMTRACE_TORCH_STATS " + json.dumps(stats, sort_keys=True), flush=True)
    return 1 if oom else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
