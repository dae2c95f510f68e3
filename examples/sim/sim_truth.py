"""examples/sim/sim_truth.py — what the SIMULATION programs (sim_hf.py, sim_vision.py) print as
their own truth at the end: bytes counted from the program's own objects (parameters, their
.grad, the optimizer's state) and the caching allocator's counters, as one line
`VRAMTRACE_TORCH_STATS {json}` (the same prefix as sim_train.py and the real programs)."""
import json
import os
import sys


def tensor_bytes(tensors):
    """Bytes of the distinct device storages among tensors (tied weights once)."""
    seen, n = set(), 0
    for t in tensors:
        if t is None or not t.is_cuda or id(t.untyped_storage()) in seen:
            continue
        seen.add(id(t.untyped_storage()))
        n += t.numel() * t.element_size()
    return n


def state_tensors(optimizer):
    return [v for s in optimizer.state.values() for v in s.values() if hasattr(v, "is_cuda")]


def factored_elements(params):
    """Adafactor's state elements for these parameters: rows + columns for 2+ dimensions (the
    leading dimensions kept), every element for 1-D ones."""
    n = 0
    for p in params:
        s = tuple(p.shape)
        lead = 1
        for d in s[:-2]:
            lead *= d
        n += (lead * s[-2] + lead * s[-1]) if len(s) > 1 else s[0]
    return n


def allocator_stats(torch):
    st = torch.cuda.memory_stats()
    return {
        "allocator_backend": torch.cuda.get_allocator_backend(),
        "max_memory_allocated": st["allocated_bytes.all.peak"],
        "requested_bytes_peak": st["requested_bytes.all.peak"],
        "max_memory_reserved": st["reserved_bytes.all.peak"],
        "num_device_alloc": st["num_device_alloc"],
        "num_alloc_retries": st["num_alloc_retries"],
        "num_ooms": st["num_ooms"],
        "device_name": torch.cuda.get_device_name(),
    }


def record_oom(truth, phase, e):
    """An out-of-memory error in the truth line (the phase it came in, its first line) and on
    stderr, as torch says it."""
    truth.update(oom=True, oom_phase=phase, oom_message=str(e).splitlines()[0])
    print(f"simtorch.OutOfMemoryError: {e}", file=sys.stderr, flush=True)


def finish(torch, truth):
    """The truth line printed; the program's exit code (1 after an out-of-memory error)."""
    print_truth(torch, truth)
    return 1 if truth["oom"] else 0


def print_truth(torch, truth):
    """Adds the allocator's counters and prints the line."""
    truth.update(allocator_stats(torch))
    # autocast's 16-bit copies of weights (trainable or frozen) made in one region (a forward
    # under autocast), the most of any region
    truth["autocast_copy_bytes"] = getattr(torch._C.tls, "copy_bytes_max", 0)
    truth.update({"simulation": True, "torch_version": "simtorch (simulation)", "pid": os.getpid(),
                  "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF")})
    print("VRAMTRACE_TORCH_STATS " + json.dumps(truth, sort_keys=True), flush=True)
