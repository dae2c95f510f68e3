"""examples/gpt/train.py — a small, readable GPT trainer: vramtrace's real workload on a GPU.

nanoGPT's knobs and spelling (batch_size, block_size, gradient_accumulation_steps, n_layer, ...),
config files of `key = value` lines plus `--key=value` overrides, synthetic token data (no
download). At the end, and on torch.OutOfMemoryError, it prints ONE line
`VRAMTRACE_TORCH_STATS {json}` with PyTorch's own memory figures, which scripts/gpu-validate.sh
compares with what vramtrace measured. Without CUDA it runs a tiny CPU smoke test.

    python examples/gpt/train.py examples/gpt/config/gpt2-124m-12gb.py --batch_size=8
"""
import contextlib
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from configurator import parse_config

# torch.OutOfMemoryError is new in 2.5; older versions only have the CUDA one
OutOfMemoryError = getattr(torch, "OutOfMemoryError", None) or torch.cuda.OutOfMemoryError

# ---- configuration: every knob, with nanoGPT's name --------------------------------------
DEFAULTS = dict(
    batch_size=12,  # micro-batch (sequences per forward)
    block_size=1024,  # T, tokens per sequence
    gradient_accumulation_steps=1,  # A, micro-steps per optimizer step
    n_layer=12,
    n_head=12,
    n_embd=768,
    dropout=0.0,
    bias=False,
    vocab_size=50304,  # GPT-2's 50257 padded to a multiple of 64, as nanoGPT does
    dtype="float16",  # float16 (AMP + GradScaler), bfloat16 (autocast), float32
    compile=True,
    # torch.compile mode: default, reduce-overhead (CUDA graphs: use gradient_accumulation_steps=1,
    # graph replays overwrite the .grad buffers that accumulation reads), max-autotune, ...
    compile_mode="default",
    learning_rate=6e-4,
    weight_decay=1e-1,
    beta1=0.9,
    beta2=0.95,
    grad_clip=1.0,
    eval_interval=2000,  # evaluate at iterations that are multiples of this (0 included)
    eval_iters=200,  # batches per split in estimate_loss (0: no evaluation)
    max_iters=20,  # optimizer steps to run
    log_interval=1,
    num_workers=0,  # >0: batches come from a DataLoader with that many (forked) workers
    device="cuda",
    seed=1337,
)
# what a run without CUDA uses for the keys not given on the command line (smoke test)
CPU_SMOKE = dict(batch_size=2, block_size=32, n_layer=2, n_head=2, n_embd=32, vocab_size=256,
                 max_iters=2, eval_iters=1, eval_interval=1, compile=False, dtype="float32")


# ---- the model: pre-LN GPT with fused attention and tied weights --------------------------
class LayerNorm(nn.Module):
    """LayerNorm with an optional bias (PyTorch's has no bias=False before 2.1)."""

    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        assert c["n_embd"] % c["n_head"] == 0, "n_embd must be a multiple of n_head"
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
        y = causal_attention(q, k, v, self.dropout if self.training else 0.0)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


def causal_attention(q, k, v, dropout_p):
    """Fused attention (F.scaled_dot_product_attention, PyTorch >= 2.0); the explicit form on
    older releases (the CPU smoke test runs on Debian's PyTorch 1.13)."""
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=None, is_causal=True,
                                              dropout_p=dropout_p)
    T = q.size(-2)
    att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
    causal = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()
    att = F.softmax(att.masked_fill(~causal, float("-inf")), dim=-1)
    return F.dropout(att, p=dropout_p) @ v


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
        self.block_size = c["block_size"]
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(c["vocab_size"], c["n_embd"]),
            wpe=nn.Embedding(c["block_size"], c["n_embd"]),
            drop=nn.Dropout(c["dropout"]),
            h=nn.ModuleList([Block(c) for _ in range(c["n_layer"])]),
            ln_f=LayerNorm(c["n_embd"], c["bias"]),
        ))
        self.lm_head = nn.Linear(c["n_embd"], c["vocab_size"], bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying
        self.apply(self._init_weights)
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * c["n_layer"]))

    def _init_weights(self, module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def num_params(self):
        return sum(p.numel() for p in self.parameters())

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        logits = self.lm_head(x)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1),
                                   ignore_index=-1)
        return logits, loss

    def configure_optimizers(self, c, device_type):
        """AdamW with weight decay on >= 2-D weights only; fused on CUDA."""
        params = [p for p in self.parameters() if p.requires_grad]
        groups = [
            {"params": [p for p in params if p.dim() >= 2], "weight_decay": c["weight_decay"]},
            {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
        ]
        extra = {"fused": True} if device_type == "cuda" else {}
        return torch.optim.AdamW(groups, lr=c["learning_rate"], betas=(c["beta1"], c["beta2"]),
                                 **extra)


# ---- data: synthetic tokens ----------------------------------------------------------------
class RandomTokens(torch.utils.data.IterableDataset):
    """Endless (x, y) batches of uniform random token ids, for the DataLoader variant."""

    def __init__(self, c):
        self.shape = (c["batch_size"], c["block_size"] + 1)
        self.vocab = c["vocab_size"]

    def __iter__(self):
        g = torch.Generator().manual_seed(torch.initial_seed() % (2 ** 31))
        while True:
            d = torch.randint(self.vocab, self.shape, generator=g)
            yield d[:, :-1], d[:, 1:]


# ---- the run ---------------------------------------------------------------------------------
class Trainer:
    def __init__(self, c, device):
        self.c = c
        self.device = device
        self.device_type = "cuda" if device.startswith("cuda") else "cpu"
        self.gen = torch.Generator().manual_seed(c["seed"])
        self.loader = None
        if c["num_workers"] > 0:
            self.loader = iter(torch.utils.data.DataLoader(
                RandomTokens(c), batch_size=None, num_workers=c["num_workers"],
                pin_memory=self.device_type == "cuda"))
        self.iter_times = []
        self.iters = 0

    def get_batch(self, split):
        """One micro-batch (x, y) of token ids on the device (split only names it)."""
        if self.loader is not None:
            x, y = next(self.loader)
        else:
            d = torch.randint(self.c["vocab_size"], (self.c["batch_size"], self.c["block_size"] + 1),
                              generator=self.gen)
            x, y = d[:, :-1], d[:, 1:]
            if self.device_type == "cuda":
                x, y = x.pin_memory(), y.pin_memory()
        return (x.to(self.device, non_blocking=True), y.to(self.device, non_blocking=True))

    @torch.no_grad()
    def estimate_loss(self, model, ctx):
        out = {}
        model.eval()
        for split in ("train", "val"):
            losses = torch.zeros(self.c["eval_iters"])
            for k in range(self.c["eval_iters"]):
                X, Y = self.get_batch(split)
                self.mark_step()
                with ctx:
                    logits, loss = model(X, Y)
                losses[k] = loss.item()
            out[split] = losses.mean().item()
        model.train()
        return out

    def mark_step(self):
        if self.c["compile"] and self.c["compile_mode"] == "reduce-overhead":
            torch.compiler.cudagraph_mark_step_begin()

    def sync(self):
        if self.device_type == "cuda":
            torch.cuda.synchronize()

    def train(self, model, raw_model, optimizer, scaler, ctx, master):
        c = self.c
        A = c["gradient_accumulation_steps"]
        X, Y = self.get_batch("train")
        for iter_num in range(c["max_iters"]):
            if c["eval_iters"] > 0 and c["eval_interval"] > 0 and iter_num % c["eval_interval"] == 0:
                losses = self.estimate_loss(model, ctx)
                if master:
                    print(f"step {iter_num}: train loss {losses['train']:.4f}, "
                          f"val loss {losses['val']:.4f}", flush=True)
            self.sync()
            t0 = time.perf_counter()
            for micro_step in range(A):
                if hasattr(model, "require_backward_grad_sync"):
                    model.require_backward_grad_sync = micro_step == A - 1
                self.mark_step()
                with ctx:
                    logits, loss = model(X, Y)
                    loss = loss / A
                X, Y = self.get_batch("train")  # prefetch while the GPU works
                scaler.scale(loss).backward()
            if c["grad_clip"] != 0.0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(raw_model.parameters(), c["grad_clip"])
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
            lossf = loss.item() * A  # synchronizes
            self.sync()
            dt = time.perf_counter() - t0
            self.iter_times.append(dt * 1000.0)
            self.iters = iter_num + 1
            if master and c["log_interval"] > 0 and iter_num % c["log_interval"] == 0:
                print(f"iter {iter_num}: loss {lossf:.4f}, time {dt * 1000:.2f}ms", flush=True)

    def ms_per_iter(self):
        """Median step time over the iterations after warm-up (the first third, at least
        one iteration, is warm-up: compile, cuBLAS autotuning, Adam state)."""
        t = self.iter_times
        if not t:
            return None
        skip = max(1, len(t) // 3) if len(t) > 1 else 0
        return round(statistics.median(t[skip:]), 3)


def torch_stats(c, trainer, device, oom, message, nparams):
    """PyTorch's own figures as a dict (what VRAMTRACE_TORCH_STATS carries)."""
    s = {
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda,
        "device": device,
        "oom": oom,
        "iters": trainer.iters if trainer else 0,
        "ms_per_iter": trainer.ms_per_iter() if trainer else None,
        "params": nparams,
        "alloc_conf": {k: os.environ[k] for k in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF")
                       if k in os.environ},
        "allocator_backend": None,
        "config": c,
        "pid": os.getpid(),
    }
    if message:
        s["oom_message"] = message
    if device.startswith("cuda") and torch.cuda.is_available():
        ms = torch.cuda.memory_stats()
        s.update({
            "allocator_backend": torch.cuda.get_allocator_backend(),
            "max_memory_allocated": torch.cuda.max_memory_allocated(),
            "max_memory_reserved": torch.cuda.max_memory_reserved(),
            "memory_allocated": torch.cuda.memory_allocated(),
            "memory_reserved": torch.cuda.memory_reserved(),
            "num_device_alloc": ms.get("num_device_alloc"),
            # the allocator tracker reports requested sizes: its allocated peak is this one
            "requested_bytes_peak": ms.get("requested_bytes.all.peak"),
            "num_device_free": ms.get("num_device_free"),
            "num_alloc_retries": ms.get("num_alloc_retries"),
            "num_ooms": ms.get("num_ooms"),
            "device_name": torch.cuda.get_device_name(),
        })
        try:
            free, total = torch.cuda.mem_get_info()
            s["mem_get_info_free"], s["mem_get_info_total"] = free, total
        except RuntimeError as e:  # a broken context after a hard failure
            s["mem_get_info_error"] = str(e)
    return s


def truth(model, optimizer):
    """The categories' ground truth, counted from the tensors: parameter bytes, the gradient
    bytes they imply (one per trainable parameter, same dtype), optimizer state bytes."""
    if model is None:
        return {}
    params = [p for p in model.parameters() if p.is_cuda]
    state = [] if optimizer is None else [
        v for s in optimizer.state.values() for v in s.values() if torch.is_tensor(v) and v.is_cuda]
    size = lambda ts: sum(t.numel() * t.element_size() for t in ts)
    return {"param_bytes": size(params),
            "grad_bytes": size(p for p in params if p.requires_grad),
            "optim_state_bytes": size(state)}


def main(argv):
    c, given = parse_config(argv, DEFAULTS, "train.py")
    ddp = int(os.environ.get("RANK", -1)) != -1
    device = c["device"]
    if device.startswith("cuda") and not torch.cuda.is_available():
        print("train.py: CUDA is not available: using the CPU", flush=True)
        device = c["device"] = "cpu"
        ddp = False
    if device == "cpu":  # the smoke test: tiny shapes for every knob not given explicitly
        smoke = {k: v for k, v in CPU_SMOKE.items() if k not in given}
        print("train.py: CPU smoke test (" + ", ".join(f"{k}={v}" for k, v in smoke.items()) + ")",
              flush=True)
        c.update(smoke)
    master = True
    if ddp:
        import torch.distributed as dist
        dist.init_process_group(backend="nccl")
        local_rank = int(os.environ["LOCAL_RANK"])
        device = f"cuda:{local_rank}"
        master = int(os.environ["RANK"]) == 0
        assert c["gradient_accumulation_steps"] % dist.get_world_size() == 0
        c["gradient_accumulation_steps"] //= dist.get_world_size()
    if device.startswith("cuda"):
        if ":" in device:
            torch.cuda.set_device(device)
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    torch.manual_seed(c["seed"])
    device_type = "cuda" if device.startswith("cuda") else "cpu"
    ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16,
               "float16": torch.float16}[c["dtype"]]
    ctx = (contextlib.nullcontext() if device_type == "cpu" or c["dtype"] == "float32"
           else torch.amp.autocast(device_type=device_type, dtype=ptdtype))

    trainer, nparams, oom, message = None, None, False, None
    model = optimizer = None
    try:
        trainer = Trainer(c, device)
        model = GPT(c)
        nparams = model.num_params()
        if master:
            print(f"number of parameters: {nparams / 1e6:.2f}M", flush=True)
        model.to(device)
        fp16 = c["dtype"] == "float16" and device_type == "cuda"
        scaler = (torch.amp.GradScaler(device_type, enabled=fp16)
                  if hasattr(torch.amp, "GradScaler")  # PyTorch >= 2.3
                  else torch.cuda.amp.GradScaler(enabled=fp16))
        optimizer = model.configure_optimizers(c, device_type)
        raw_model = model
        if c["compile"]:
            model = torch.compile(model, mode=None if c["compile_mode"] == "default"
                                  else c["compile_mode"])
        if ddp:
            from torch.nn.parallel import DistributedDataParallel as DDP
            model = DDP(model, device_ids=[int(device.split(":")[1])])
        trainer.train(model, raw_model, optimizer, scaler, ctx, master)
    except OutOfMemoryError as e:
        oom, message = True, str(e).splitlines()[0] if str(e) else "out of memory"
    except Exception as e:  # torch.compile wraps an OOM in its own error types
        if "out of memory" not in str(e):
            raise
        oom, message = True, str(e).splitlines()[0]
    if master:
        stats = torch_stats(c, trainer, device, oom, message, nparams)
        stats.update(truth(model, optimizer))
        print("VRAMTRACE_TORCH_STATS " + json.dumps(stats, sort_keys=True), flush=True)
    if ddp:
        import torch.distributed as dist
        dist.destroy_process_group()
    return 1 if oom else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
