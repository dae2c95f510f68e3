"""examples/hf/hf_train.py — a plain Hugging Face training loop, the kind of program vramtrace
did not write: GPT2LMHeadModel or LlamaForCausalLM built from a config (no download), AdamW,
AMP (bf16, or fp16 with GradScaler), gradient accumulation, eager or torch.compile.

Flags are argparse's (dashes, no config file), unlike examples/gpt/train.py:

    python examples/hf/hf_train.py --model gpt2 --batch-size 4 --seq-len 1024 --compile

At the end, and on an out-of-memory error, it prints ONE line `VRAMTRACE_TORCH_STATS {json}`
with PyTorch's own memory figures and the ground truth of the categories (bytes of parameters,
gradients and optimizer state, counted from the tensors themselves), which
scripts/gpu-validate.sh compares with what vramtrace says.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

OutOfMemoryError = getattr(torch, "OutOfMemoryError", None) or torch.cuda.OutOfMemoryError

SIZES = {
    # name: (layers, hidden, heads, intermediate (llama), vocab)
    "gpt2": (12, 768, 12, None, 50257),
    "gpt2-medium": (24, 1024, 16, None, 50257),
    "llama-160m": (12, 768, 12, 2048, 32000),
    "llama-400m": (24, 1024, 16, 2816, 32000),
}


def build(model, seq):
    import transformers as tf
    layers, hidden, heads, inter, vocab = SIZES[model]
    if model.startswith("gpt2"):
        cfg = tf.GPT2Config(n_layer=layers, n_embd=hidden, n_head=heads, vocab_size=vocab,
                            n_positions=max(1024, seq), resid_pdrop=0.0, embd_pdrop=0.0,
                            attn_pdrop=0.0)
        return tf.GPT2LMHeadModel(cfg)
    cfg = tf.LlamaConfig(num_hidden_layers=layers, hidden_size=hidden, num_attention_heads=heads,
                         num_key_value_heads=heads, intermediate_size=inter, vocab_size=vocab,
                         max_position_embeddings=max(2048, seq))
    return tf.LlamaForCausalLM(cfg)


def tensor_bytes(ts):
    seen, n = set(), 0
    for t in ts:
        if t is None or not t.is_cuda or t.data_ptr() in seen:
            continue
        seen.add(t.data_ptr())
        n += t.numel() * t.element_size()
    return n


def truth(model, opt):
    """The categories' ground truth, counted from the tensors (not from vramtrace)."""
    params = list(model.parameters())
    state = [v for s in opt.state.values() for v in s.values() if torch.is_tensor(v)]
    return {"param_bytes": tensor_bytes(params),
            "grad_bytes": tensor_bytes(p.grad for p in params),
            "optim_state_bytes": tensor_bytes(state)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=sorted(SIZES), default="gpt2")
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument("--seq-len", type=int, default=1024)
    ap.add_argument("--grad-accum", type=int, default=2)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--amp", choices=["bf16", "fp16", "none"], default="bf16")
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--lr", type=float, default=3e-4)
    a = ap.parse_args()

    dev = "cuda"
    torch.manual_seed(0)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "none": None}[a.amp]
    stats = {"program": "hf_train.py", "args": vars(a), "oom": False, "iters": 0,
             "torch_version": torch.__version__, "cuda_version": torch.version.cuda}
    times, model, opt = [], None, None
    try:
        model = build(a.model, a.seq_len).to(dev)
        stats["params"] = sum(p.numel() for p in model.parameters())
        print(f"number of parameters: {stats['params'] / 1e6:.2f}M", flush=True)
        opt = torch.optim.AdamW(model.parameters(), lr=a.lr, fused=True)
        scaler = torch.amp.GradScaler("cuda", enabled=a.amp == "fp16")
        step_fn = torch.compile(model) if a.compile else model
        vocab = model.config.vocab_size
        for step in range(a.steps):
            t0 = time.perf_counter()
            for _ in range(a.grad_accum):
                x = torch.randint(0, vocab, (a.batch_size, a.seq_len), device=dev)
                with torch.autocast("cuda", dtype=dtype, enabled=dtype is not None):
                    loss = step_fn(input_ids=x, labels=x).loss / a.grad_accum
                scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            if step == 0:
                stats.update(truth(model, opt))
            opt.zero_grad(set_to_none=True)
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1000.0)
            stats["iters"] = step + 1
            print(f"step {step}: loss {loss.item() * a.grad_accum:.4f}, {times[-1]:.1f} ms", flush=True)
    except OutOfMemoryError as e:
        stats["oom"], stats["oom_message"] = True, (str(e).splitlines() or ["out of memory"])[0]
    except Exception as e:  # torch.compile wraps an OOM in its own error types
        if "out of memory" not in str(e):
            raise
        stats["oom"], stats["oom_message"] = True, str(e).splitlines()[0]
    skip = max(1, len(times) // 3) if len(times) > 1 else 0
    stats["ms_per_iter"] = round(statistics.median(times[skip:]), 3) if times else None
    ms = torch.cuda.memory_stats()
    stats.update({
        "allocator_backend": torch.cuda.get_allocator_backend(),
        "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF"),
        "max_memory_allocated": torch.cuda.max_memory_allocated(),
        "max_memory_reserved": torch.cuda.max_memory_reserved(),
        "num_device_alloc": ms.get("num_device_alloc"),
        "requested_bytes_peak": ms.get("requested_bytes.all.peak"),
        "num_ooms": ms.get("num_ooms"),
        "device_name": torch.cuda.get_device_name(),
    })
    print("VRAMTRACE_TORCH_STATS " + json.dumps(stats, sort_keys=True), flush=True)
    return 1 if stats["oom"] else 0


if __name__ == "__main__":
    sys.exit(main())
