"""cpu_offload_sgd.py — tests/python/cpu_offload_adam.py's loop (a SIMULATED bf16 Llama) with
torch.optim.SGD(params, lr) on the device instead of its host-side Adam: plain SGD, no momentum,
no state anywhere. Prints the same VRAMTRACE_TORCH_STATS truth line (optimizer "other", its
state's device bytes: 0). Used by tests/integration/cpu_offload_adam.sh."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpu_offload_adam  # noqa: E402
import simtorch as torch  # noqa: E402 — (cpu_offload_adam put simtorch on the path)

if __name__ == "__main__":
    sys.exit(cpu_offload_adam.main(lambda params, lr: torch.optim.SGD(params, lr=lr)))
