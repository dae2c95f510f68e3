"""qlora_4bit.py — a SIMULATED QLoRA fine-tune the way bitsandbytes + peft make it (the simulated
transformers' LlamaForCausalLM and peft's get_peft_model; bitsandbytes' classes written here, no
bitsandbytes on the stacks): a Llama-like decoder (Llama-2-7B's shape by default) whose frozen base
projections (q, k, v, o, gate, up, down) are bnb's Linear4bit: the weight a uint8 Params4bit of
out*in/2 bytes (numel() half the weight's elements, requires_grad False), its quantization state
beside it (NF4 with double quantization: a uint8 absmax per 64-element block, an fp32 absmax of
those per 256 blocks, the 16-entry fp32 NF4 code, an fp32 offset scalar; one 256-entry fp32 dynamic
map shared by all); every forward dequantizes the weight to a temporary bf16 (out, in) tensor for
the matmul and frees it right after (dequantize_4bit's torch.empty), again in the backward for the
input's gradient. peft's LoRA adapters (lora_A r x in, lora_B out x r) on the attention projections,
cast to bf16 as qlora.py does (its LoraLayer modules .to(torch.bfloat16)), are the only trained
weights; embedding, norms and lm_head bf16, frozen; gradient checkpointing
(prepare_model_for_kbit_training's, reentrant, the embedding's output made to require grad); torch
AdamW over the adapters (--optim adamw: its state in the adapters' bf16) or an fp32-state AdamW
(--optim adamw32, bnb's PagedAdamW32bit's state on the device). Flags: --batch_size, --seq_len,
--max_steps, --rank, --hidden, --layers, --inter, --no_checkpointing, --fp32_adapters (no cast: the
adapters stay fp32 as peft makes them, AdamW's state fp32 with them). Prints VRAMTRACE_TORCH_STATS
with its truth: the model's shape (hidden, layers, vocab), trainable_params and their bytes, frozen_params (the weights' own element count,
4-bit ones at their logical size) and frozen bytes (packed weights, their quantization state, bf16
weights), gradient and optimizer state bytes, oom, steps. Used by tests/integration/qlora_4bit.sh."""
import argparse
import os
import sys

SIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim")
sys.path.insert(0, SIM)
sys.path.insert(0, os.path.join(SIM, "simmodels", "site-packages"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from simtorch.autograd.function import Function  # noqa: E402
from simtorch.optim.optimizer import Optimizer  # noqa: E402
import transformers as tf  # noqa: E402
import peft  # noqa: E402
from peft.tuners.lora.layer import LoraLayer  # noqa: E402
from sim_truth import finish, record_oom, tensor_bytes, state_tensors  # noqa: E402


QMAP = {}


def dequantize_4bit(qs):
    """bnb.functional.dequantize_4bit: out = torch.empty(shape, dtype); the kernel fills it."""
    return torch.empty(*qs["shape"], dtype=torch.bfloat16, device="cuda")


class MatMul4Bit(Function):
    """bnb.autograd._functions.MatMul4Bit: the weight dequantized for the matmul, freed after;
    again in backward for the input's gradient (the weight takes none)."""

    @staticmethod
    def forward(ctx, x, packed, qs):
        W = dequantize_4bit(qs)
        out = F.linear(x, W)
        del W
        ctx.qs = qs
        return out

    @staticmethod
    def backward(ctx, g):
        W = dequantize_4bit(ctx.qs)
        gx = torch.matmul(g, W)
        del W
        return gx, None, None


class Linear4bit(nn.Linear):
    """bnb.nn.Linear4bit (quant_type nf4, compress_statistics=True, compute_dtype bf16): an
    nn.Linear whose weight becomes a Params4bit (uint8, out*in/2 elements, shape (n/2, 1))."""

    def __init__(self, fin, fout, bias=False):
        super().__init__(fin, fout, bias=bias)
        n = fin * fout
        self.weight = nn.Parameter(torch.empty(n // 2, 1, dtype=torch.uint8), requires_grad=False)
        self.qs = {"shape": (fout, fin), "n": n}

    def quantize(self):
        """Params4bit._quantize on .cuda(): the packed weight's QuantState on the device."""
        n = self.qs["n"]
        self.qs["absmax"] = torch.empty(n // 64, dtype=torch.uint8, device="cuda")
        self.qs["absmax2"] = torch.empty((n // 64 + 255) // 256, dtype=torch.float32, device="cuda")
        self.qs["code"] = torch.empty(16, dtype=torch.float32, device="cuda")  # get_4bit_type("nf4")
        self.qs["offset"] = torch.empty((), dtype=torch.float32, device="cuda")  # absmax.mean()
        if "dynamic" not in QMAP:  # (quantize_blockwise's name2qmap["dynamic"], made once)
            QMAP["dynamic"] = torch.empty(256, dtype=torch.float32, device="cuda")
        self.qs["code2"] = QMAP["dynamic"]

    def quant_tensors(self):
        return [self.qs[k] for k in ("absmax", "absmax2", "code", "offset", "code2")]

    def forward(self, x):
        return MatMul4Bit.apply(x, self.weight, self.qs)


def replace_with_bnb_linear(model):
    """transformers.integrations.bitsandbytes: every nn.Linear but lm_head becomes a Linear4bit."""
    for name, m in list(model.named_modules()):
        for child, sub in list(m._modules.items()):
            if type(sub) is nn.Linear and child != "lm_head":
                setattr(m, child, Linear4bit(sub.in_features, sub.out_features, sub.bias is not None))


class AdamW32(Optimizer):
    """An AdamW whose two states are fp32 whatever the parameters' dtype (bnb's
    PagedAdamW32bit's state1 / state2, here on the device); the update is in place."""

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
                    st["state1"] = torch.zeros_like(p, dtype=torch.float32)
                    st["state2"] = torch.zeros_like(p, dtype=torch.float32)
                st["step"] += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch_size", type=int, default=1)
    ap.add_argument("--seq_len", type=int, default=512)
    ap.add_argument("--max_steps", type=int, default=2)
    ap.add_argument("--rank", type=int, default=16)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--layers", type=int, default=32)
    ap.add_argument("--inter", type=int, default=11008)
    ap.add_argument("--optim", choices=["adamw", "adamw32"], default="adamw")
    ap.add_argument("--no_checkpointing", action="store_true")
    ap.add_argument("--fp32_adapters", action="store_true")  # (no cast: peft's fp32 adapters)
    a = ap.parse_args()
    V, d = 32000, a.hidden
    truth = {"program": "qlora_4bit.py", "family": "llama", "batch_size": a.batch_size, "seq_len": a.seq_len,
             "hidden": d, "layers": a.layers, "vocab": V, "grad_accum": 1, "optimizer": a.optim, "rank": a.rank,
             "fp32_adapters": a.fp32_adapters,
             "amp": "none", "dtype": "bfloat16", "quant": "nf4", "steps": 0, "oom": False, "oom_phase": None}
    phase = "init"
    try:
        cfg = tf.LlamaConfig(num_hidden_layers=a.layers, hidden_size=d, num_attention_heads=d // 128,
                             intermediate_size=a.inter, vocab_size=V, max_position_embeddings=max(4096, a.seq_len),
                             use_cache=False)
        model = tf.LlamaForCausalLM(cfg)
        replace_with_bnb_linear(model)
        model.to(torch.bfloat16)  # (torch_dtype=torch.bfloat16: the uint8 packed weights keep theirs)
        model.to("cuda")
        base = [m for m in model.modules() if isinstance(m, Linear4bit)]
        for m in base:
            m.quantize()
        # prepare_model_for_kbit_training: everything frozen, gradient checkpointing
        model.requires_grad_(False)
        if not a.no_checkpointing:
            model.gradient_checkpointing_enable()
        model = peft.get_peft_model(model, peft.LoraConfig(r=a.rank, lora_alpha=2 * a.rank, lora_dropout=0.0,
                                                           target_modules=["q_proj", "k_proj", "v_proj", "o_proj"]))
        for name, m in model.named_modules():  # (qlora.py: the LoRA layers to bf16 with --bf16)
            if isinstance(m, LoraLayer) and not a.fp32_adapters:
                m.to(torch.bfloat16)
        params = list(model.parameters())
        trained = [p for p in params if p.requires_grad]
        frozen = [p for p in params if not p.requires_grad]
        quant = [t for m in base for t in m.quant_tensors()]
        truth["trainable_params"] = sum(p.numel() for p in trained)
        truth["trainable_bytes"] = tensor_bytes(trained)
        truth["trainable_dtype"] = str(trained[0].dtype)
        truth["frozen_params"] = (sum(m.qs["n"] for m in base) +
                                  sum(p.numel() for p in frozen if p.dtype != torch.uint8))
        truth["packed_4bit_bytes"] = tensor_bytes([m.weight for m in base])
        truth["quant_state_bytes"] = tensor_bytes(quant)
        truth["frozen_bytes"] = tensor_bytes(frozen) + truth["quant_state_bytes"]
        truth["param_bytes"] = tensor_bytes(params)
        truth["weight_bytes"] = truth["param_bytes"] + truth["quant_state_bytes"]
        if a.optim == "adamw":
            optimizer = torch.optim.AdamW(trained, lr=2e-4)  # (state like the parameters: bf16)
        else:
            optimizer = AdamW32(trained, lr=2e-4)
        for step in range(a.max_steps):
            phase = "forward"
            ids = torch.randint(0, V, (a.batch_size, a.seq_len)).to("cuda")
            loss = model(input_ids=ids, labels=ids).loss
            phase = "backward"
            loss.backward()
            del loss, ids
            if step == 0:
                truth["grad_bytes"] = tensor_bytes([p.grad for p in trained])
            phase = "optimizer"
            optimizer.step()
            if step == 0:
                truth["optim_state_bytes"] = tensor_bytes(state_tensors(optimizer))
            optimizer.zero_grad(set_to_none=True)
            truth["steps"] = step + 1
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
