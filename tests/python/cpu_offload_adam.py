"""cpu_offload_adam.py — a SIMULATED Llama-like causal LM (transformers' LlamaForCausalLM,
simulated) with bf16 weights on the device (model.to(torch.bfloat16): pure bf16, no autocast),
trained by an optimizer of the program's own whose state lives on the HOST, the ZeRO-Offload way
(DeepSpeed's CPU Adam): after each backward every bf16 gradient is copied to the host
(p.grad.to("cpu")) and dropped on the device; the host keeps an fp32 master copy of every weight
and Adam's exp_avg / exp_avg_sq (fp32, 12 B per parameter, all on the host); the update runs on
host tensors, the new weights are cast to bf16 on the host and copied back into the device
weights in place (p.copy_(...): same type and layout, no device temporary). The device holds NO
optimizer state: its optimizer step allocates nothing there. main(make_optimizer) runs the same
loop with another optimizer (tests/python/cpu_offload_sgd.py: torch.optim.SGD). Flags as a plain
script: --model_size, --batch_size, --seq_len, --gradient_accumulation_steps, --max_steps, --lr.
Prints
VRAMTRACE_TORCH_STATS with its truth (device bytes of the parameters, gradients and optimizer
state; the host state's bytes beside). Used by tests/integration/cpu_offload_adam.sh."""
import argparse
import os
import sys

SIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim")
sys.path.insert(0, SIM)
sys.path.insert(0, os.path.join(SIM, "simmodels", "site-packages"))
import simtorch as torch  # noqa: E402
import transformers as tf  # noqa: E402
from simtorch.optim.optimizer import Optimizer  # noqa: E402
from sim_truth import finish, record_oom, tensor_bytes, state_tensors  # noqa: E402

SIZES = {"tiny": (4, 512, 8, 1408), "350m": (24, 1024, 16, 2816), "1b": (16, 2048, 16, 5632)}


class CPUOffloadAdam(Optimizer):
    """Adam whose master weights and moments are host tensors (deepspeed.ops.adam.DeepSpeedCPUAdam
    under ZeRO-Offload): the device keeps the bf16 weights and nothing else of the optimizer's."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state.setdefault(p, {})
                if not state:
                    state["step"] = 0
                    state["master"] = p.detach().to("cpu").float()    # fp32 master, on the host
                    state["exp_avg"] = torch.zeros(p.shape, dtype=torch.float32, device="cpu")
                    state["exp_avg_sq"] = torch.zeros(p.shape, dtype=torch.float32, device="cpu")
                grad = p.grad.to("cpu").float()                      # device -> host
                p.grad = None                                         # the device's gradient dropped
                state["step"] += 1
                # the Adam update on the host tensors (in place)
                state["exp_avg"].lerp_(grad, 1 - group["betas"][0])
                state["exp_avg_sq"].mul_(group["betas"][1]).addcmul_(grad, grad)
                state["master"].addcdiv_(state["exp_avg"], state["exp_avg_sq"].sqrt())
                p.copy_(state["master"].to(torch.bfloat16))          # host -> device, in place
                del grad


def host_bytes(optimizer):
    return sum(v.numel() * v.element_size() for v in state_tensors(optimizer) if not v.is_cuda)


def main(make_optimizer=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--model_size", choices=list(SIZES), default="tiny")
    ap.add_argument("--batch_size", type=int, default=2)
    ap.add_argument("--seq_len", type=int, default=512)
    ap.add_argument("--gradient_accumulation_steps", type=int, default=1)
    ap.add_argument("--max_steps", type=int, default=2)
    ap.add_argument("--lr", type=float, default=3e-4)
    a = ap.parse_args()
    L, d, H, inter = SIZES[a.model_size]
    truth = {"program": "cpu_offload_adam.py", "family": "llama", "batch_size": a.batch_size,
             "seq_len": a.seq_len, "hidden": d, "layers": L, "grad_accum": a.gradient_accumulation_steps,
             "optimizer": "cpu_offload_adam" if make_optimizer is None else "other",
             "optimizer_state_device": "cpu" if make_optimizer is None else "cuda", "amp": "none",
             "dtype": "bfloat16", "steps": 0, "oom": False, "oom_phase": None}
    phase = "init"
    try:
        cfg = tf.LlamaConfig(num_hidden_layers=L, hidden_size=d, num_attention_heads=H, intermediate_size=inter,
                             vocab_size=32000, max_position_embeddings=max(2048, a.seq_len), use_cache=False)
        model = tf.LlamaForCausalLM(cfg)
        model.to(torch.bfloat16)
        model.to("cuda")
        params = list(model.parameters())
        truth["params"] = sum(q.numel() for q in params)
        truth["param_bytes"] = tensor_bytes(params)
        truth["trainable_params"] = truth["params"]
        if make_optimizer is None:
            optimizer = CPUOffloadAdam(params, lr=a.lr)
        else:
            optimizer = make_optimizer(params, a.lr)
        for step in range(a.max_steps):
            for micro in range(a.gradient_accumulation_steps):
                phase = "forward"
                input_ids = torch.randint(0, 32000, (a.batch_size, a.seq_len)).to("cuda")
                out = model(input_ids=input_ids, labels=input_ids)
                loss = out.loss / a.gradient_accumulation_steps
                phase = "backward"
                loss.backward()
                del out, loss, input_ids
            if step == 0:
                truth["grad_bytes"] = tensor_bytes([q.grad for q in params])
            phase = "optimizer"
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            if step == 0:
                truth["optim_state_bytes"] = tensor_bytes(state_tensors(optimizer))  # the device's: 0
                truth["host_optim_state_bytes"] = host_bytes(optimizer)
            truth["steps"] = step + 1
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
