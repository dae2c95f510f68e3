"""examples/hf/train_truth.py — the truth line of the REAL training programs (hf_train.py,
examples/vision/vision_train.py, examples/lightning/lit_train.py): bytes counted from the program's
own objects and PyTorch's allocator counters, printed as ONE line `VRAMTRACE_TORCH_STATS {json}`
with the fields of the simulated programs (examples/sim/sim_truth.py), so one test reads both."""
import json
import os
import sys

try:
    import torch
except ImportError:  # `--help` works without PyTorch (tests/integration/gpu_programs.sh)
    torch = None

# An error whose text says memory ran out, from a library that wraps PyTorch's OutOfMemoryError
# (torch.compile, Lightning) or a CUDA library that could not get its workspace.
OOM_WORDS = ("out of memory", "CUBLAS_STATUS_ALLOC_FAILED", "CUDNN_STATUS_ALLOC_FAILED",
             "CUDNN_STATUS_NOT_ENOUGH_WORKSPACE")


def need_torch():
    if torch is None:
        sys.exit(f"{os.path.basename(sys.argv[0])}: needs PyTorch with CUDA (no module named torch)")
    if not torch.cuda.is_available():
        sys.exit(f"{os.path.basename(sys.argv[0])}: needs a CUDA device (torch.cuda.is_available() "
                 "is False)")


def tensor_bytes(tensors):
    """Bytes of the distinct device storages among tensors (tied weights, views once)."""
    seen, n = set(), 0
    for t in tensors:
        if t is None or not t.is_cuda:
            continue
        key = t.untyped_storage().data_ptr()
        if key in seen:
            continue
        seen.add(key)
        n += t.numel() * t.element_size()
    return n


def state_tensors(optimizer):
    """The optimizer's own state: every tensor in optimizer.state (moments, momentum buffers,
    Adafactor's row / column variances, fused AdamW's device step counters)."""
    return [v for st in optimizer.state.values() for v in st.values() if torch.is_tensor(v)]


def factored_elements(params):
    """Adafactor's state elements for these parameters: rows + columns for 2+ dimensions (the
    leading dimensions kept), every element for 1-D ones (as examples/sim/sim_truth.py)."""
    n = 0
    for p in params:
        s = tuple(p.shape)
        lead = 1
        for d in s[:-2]:
            lead *= d
        n += (lead * s[-2] + lead * s[-1]) if len(s) > 1 else (s[0] if s else 1)
    return n


def model_truth(model, truth):
    """Parameter counts and bytes (call once the model is on the device)."""
    params = list(model.parameters())
    trainable = [p for p in params if p.requires_grad]
    truth.update(params=sum(p.numel() for p in params),
                 trainable_params=sum(p.numel() for p in trainable),
                 trainable_tensors=len(trainable),
                 factored_elements=factored_elements(trainable),
                 param_bytes=tensor_bytes(params),
                 trainable_param_bytes=tensor_bytes(trainable))
    return trainable


def is_oom(exc):
    if isinstance(exc, getattr(torch, "OutOfMemoryError", torch.cuda.OutOfMemoryError)):
        return True
    return any(w in str(exc) for w in OOM_WORDS)


def record_failure(truth, exc, phase):
    """An out-of-memory error (oom, oom_phase, oom_message), or any other error (error): the
    program still prints its truth line; returns the exit code (1 OOM, 2 other)."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:500]
    if is_oom(exc):
        truth.update(oom=True, oom_phase=phase, oom_message=first)
        print(f"{type(exc).__name__}: {first}", file=sys.stderr, flush=True)
        return 1
    import traceback
    traceback.print_exc()
    truth.update(error=f"{type(exc).__name__}: {first}", error_phase=phase)
    return 2


def versions(*names):
    """The versions of the libraries the program used (absent ones: None)."""
    out = {}
    for name in names:
        mod = sys.modules.get(name)
        out[name.replace(".", "_") + "_version"] = getattr(mod, "__version__", None) if mod else None
    return out


def _sim_tls():
    """simtorch's per-thread autocast state (None on PyTorch)"""
    return getattr(getattr(torch, "_C", None), "tls", None) if getattr(torch, "SIMULATION", False) \
        else None


def print_truth(truth):
    """Adds the allocator's counters and prints the line."""
    st = torch.cuda.memory_stats()
    truth.update({
        "allocator_backend": torch.cuda.get_allocator_backend(),
        "max_memory_allocated": torch.cuda.max_memory_allocated(),
        "requested_bytes_peak": st.get("requested_bytes.all.peak"),
        "max_memory_reserved": torch.cuda.max_memory_reserved(),
        "num_device_alloc": st.get("num_device_alloc"),
        "num_alloc_retries": st.get("num_alloc_retries"),
        "num_ooms": st.get("num_ooms"),
        "device_name": torch.cuda.get_device_name(),
        "simulation": bool(getattr(torch, "SIMULATION", False)),  # tests/realonsim
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda,
        "pid": os.getpid(),
        "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF"),
        # autocast's 16-bit weight copies in one region: PyTorch keeps no count of its cache
        # (null); the simulation does (tests/realonsim runs this on it)
        "autocast_copy_bytes": getattr(_sim_tls(), "copy_bytes_max", 0) if _sim_tls() else None,
    })
    print("VRAMTRACE_TORCH_STATS " + json.dumps(truth, sort_keys=True, default=str), flush=True)
