"""adam8bit_own.py — a SIMULATED Llama-like causal LM (transformers' LlamaForCausalLM, simulated)
with bf16 weights (model.to(torch.bfloat16): pure bf16 training, no autocast) trained by an
optimizer the program writes itself (--optim):
  adam8bit  an 8-bit Adam written the bitsandbytes way (bnb.optim.Adam8bit's Optimizer2State):
            per parameter of >= 4096 elements two uint8 states (state1, state2: one byte per
            element each) and fp32 absmax1 / absmax2 of 2048-element blocks; smaller ones (the
            RMSNorm weights) fp32 state1 / state2 (min_8bit_size=4096); the quantization maps
            qmap1 / qmap2 (256 fp32 each) made on the device once and shared;
  packed8bit the same two 8-bit states packed in one uint8 tensor per parameter (2 B per element,
            the bf16 weight's own bytes), its absmax1 / absmax2 beside it: as one bf16 state's
            tensor in size, the scales beside it aside;
  rmsprop16 one state per parameter in the parameters' bf16 (square_avg, zeros_like(p)): 2 B per
            parameter too.
The update kernels work in place. Flags as a plain script: --batch_size, --seq_len,
--gradient_accumulation_steps, --max_steps, --lr, --optim. Prints VRAMTRACE_TORCH_STATS with its
truth: the state's bytes, how many states per parameter and their bytes per element. Adapted
from audit 41's llama_adam8bit.py; used by tests/integration/adam8bit_own.sh."""
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


class Adam8bit(Optimizer):
    """bitsandbytes.optim.Adam8bit (Optimizer2State, optim_bits=8, block_wise=True)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, min_8bit_size=4096,
                 block_wise=True):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))
        self.min_8bit_size = min_8bit_size
        self.name2qmap = {}
        self.initialized = False

    def fill_qmap(self):
        self.name2qmap["dynamic"] = torch.zeros(256)          # F.create_dynamic_map(signed=True)
        self.name2qmap["udynamic"] = torch.zeros(256)         # F.create_dynamic_map(signed=False)

    def init_state(self, group, p, gindex, pindex):
        state = self.state.setdefault(p, {})
        state["step"] = 0
        n = p.numel()
        if n < self.min_8bit_size:
            state["state1"] = torch.zeros_like(p, dtype=torch.float32)
            state["state2"] = torch.zeros_like(p, dtype=torch.float32)
            return
        self.name2qmap["dynamic"] = self.name2qmap["dynamic"].to(p.device)
        self.name2qmap["udynamic"] = self.name2qmap["udynamic"].to(p.device)
        state["state1"] = torch.zeros(n, dtype=torch.uint8, device=p.device)
        state["qmap1"] = self.name2qmap["dynamic"]
        state["state2"] = torch.zeros(n, dtype=torch.uint8, device=p.device)
        state["qmap2"] = self.name2qmap["udynamic"]
        blocks = (n + 2047) // 2048
        state["absmax1"] = torch.zeros(blocks, dtype=torch.float32, device=p.device)
        state["absmax2"] = torch.zeros(blocks, dtype=torch.float32, device=p.device)

    @torch.no_grad()
    def step(self, closure=None):
        if not self.initialized:
            self.fill_qmap()
            self.initialized = True
        for gindex, group in enumerate(self.param_groups):
            for pindex, p in enumerate(group["params"]):
                if p.grad is None:
                    continue
                if p not in self.state or not self.state[p]:
                    self.init_state(group, p, gindex, pindex)
                self.state[p]["step"] += 1
                # F.optimizer_update_8bit_blockwise(...): in place


class Packed8bit(Adam8bit):
    """Adam8bit's two 8-bit states packed in one uint8 tensor per parameter (state1 its first
    half, state2 its second: views), their fp32 absmax beside it as Adam8bit keeps them."""

    def init_state(self, group, p, gindex, pindex):
        n = p.numel()
        if n < self.min_8bit_size:
            return super().init_state(group, p, gindex, pindex)
        state = self.state.setdefault(p, {})
        state["step"] = 0
        state["packed"] = torch.zeros(2 * n, dtype=torch.uint8, device=p.device)
        blocks = (n + 2047) // 2048
        state["absmax1"] = torch.zeros(blocks, dtype=torch.float32, device=p.device)
        state["absmax2"] = torch.zeros(blocks, dtype=torch.float32, device=p.device)


class RMSprop16(Optimizer):
    """RMSprop's square_avg in the parameters' own dtype (bf16): one state per parameter."""

    def __init__(self, params, lr=1e-3):
        super().__init__(params, dict(lr=lr))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state.setdefault(p, {})
                if not st:
                    st["step"] = 0
                    st["square_avg"] = torch.zeros_like(p)
                st["step"] += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model_size", choices=list(SIZES), default="tiny")
    ap.add_argument("--batch_size", type=int, default=2)
    ap.add_argument("--seq_len", type=int, default=512)
    ap.add_argument("--optim", choices=["adam8bit", "packed8bit", "rmsprop16"], default="adam8bit")
    ap.add_argument("--gradient_accumulation_steps", type=int, default=1)
    ap.add_argument("--max_steps", type=int, default=2)
    ap.add_argument("--lr", type=float, default=3e-4)
    a = ap.parse_args()
    L, d, H, inter = SIZES[a.model_size]
    truth = {"program": "llama_adam8bit.py", "family": "llama", "batch_size": a.batch_size, "seq_len": a.seq_len,
             "hidden": d, "layers": L, "grad_accum": a.gradient_accumulation_steps, "optimizer": a.optim,
             "states_per_param": 1 if a.optim == "rmsprop16" else 2,
             "state_bytes_per_element": 2 if a.optim == "rmsprop16" else 1,
             "amp": "none", "dtype": "bfloat16", "steps": 0, "oom": False, "oom_phase": None}
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
        optimizer = {"adam8bit": Adam8bit, "packed8bit": Packed8bit, "rmsprop16": RMSprop16}[a.optim](params, lr=a.lr)
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
                truth["optim_state_bytes"] = tensor_bytes(state_tensors(optimizer))
            truth["steps"] = step + 1
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
