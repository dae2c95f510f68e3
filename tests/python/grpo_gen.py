"""grpo_gen.py — a SIMULATED GRPO step for an LLM the way TRL's GRPOTrainer runs one (its
GRPOConfig flags: --per_device_train_batch_size (completions per device, a multiple of
--num_generations), --num_generations G, --max_prompt_length, --max_completion_length,
--gradient_accumulation_steps, --beta (KL weight), --temperature, --learning_rate, --bf16,
--lora_r / --lora_alpha (peft LoRA on q/k/v/o), --max_steps; --beta 0 loads no reference
model, as TRL's GRPOTrainer does not): each step the B/G prompts are
repeated G times and completed by the policy under no_grad with a KV cache (a prefill of the
prompts, then one token at a time, the cache growing by concatenation), the frozen bf16
reference model (a second copy of the base weights, eval, no gradients) scores the completions
under no_grad (its per-token log-probs), then the policy's forward with a gradient over prompt +
completion, its per-token log-probs of the completion tokens (logits / temperature,
log_softmax, gather), the loss -(ratio * advantage) + beta * KL averaged over the group's
completion tokens, backward into the LoRA adapters only, AdamW (fused) on them. The base
model is Llama-shaped (--layers, --hidden; SwiGLU 11/4 of the width, V 32000) in
bf16, LoRA adapters fp32 (peft's default), bf16 autocast.
Imitations: sampling is torch.randint; the gather of the chosen tokens' log-probs is a slice.
Small here (--layers, --hidden; a Llama of 4 layers of width 256 by default) for
tests/integration/grpo_gen.sh: its generation reads the KV cache it makes, so use_cache=False is
the training forward's alone."""
import argparse
import copy
import sys

import os

SIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim")
sys.path.insert(0, SIM)
sys.path.insert(1, os.path.join(SIM, "simmodels", "site-packages"))
import simtorch as torch  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
import transformers as tf  # noqa: E402
from transformers.cache_utils import DynamicCache  # noqa: E402
from peft import LoraConfig, get_peft_model  # noqa: E402
from sim_truth import finish, record_oom, tensor_bytes, state_tensors  # noqa: E402


def decode_step(llama, lm_head, ids, cache, start):
    h = llama.embed_tokens(ids)
    pos = torch.arange(start, start + ids.shape[1], device="cuda").unsqueeze(0)
    pe = llama.rotary_emb(h, pos)
    for layer in llama.layers:
        h = layer(h, position_embeddings=pe, past_key_values=cache)
    return lm_head(llama.norm(h[:, -1:]))


@torch.no_grad()
def generate(model, prompts, n_new):
    """model.generate(..., use_cache=True, do_sample=True): prefill, then n_new - 1 steps"""
    base = model.base_model.model
    llama, lm_head = base.model, base.lm_head
    cache = DynamicCache()
    logits = decode_step(llama, lm_head, prompts, cache, 0)
    out = [torch.randint(0, 32000, (prompts.shape[0], 1), device="cuda")]
    for t in range(1, n_new):
        logits = decode_step(llama, lm_head, out[-1], cache, prompts.shape[1] + t - 1)
        out.append(torch.randint(0, 32000, (prompts.shape[0], 1), device="cuda"))
        del logits
    completion = torch.cat(out, 1)
    del cache, out
    return torch.cat([prompts, completion], 1)


def per_token_logps(model_fn, ids, n_completion, temperature):
    logits = model_fn(ids).logits                              # (B, L, V)
    logits = logits[:, -n_completion - 1:-1, :] / temperature
    logps = F.log_softmax(logits.float(), dim=-1)              # selective_log_softmax
    return logps[:, :, 0]                                      # .gather(-1, ids) (imitated)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--per_device_train_batch_size", type=int, default=8)
    ap.add_argument("--num_generations", type=int, default=8)
    ap.add_argument("--max_prompt_length", type=int, default=64)
    ap.add_argument("--max_completion_length", type=int, default=32)
    ap.add_argument("--gradient_accumulation_steps", type=int, default=1)
    ap.add_argument("--beta", type=float, default=0.04)
    ap.add_argument("--temperature", type=float, default=0.9)
    ap.add_argument("--learning_rate", type=float, default=1e-5)
    ap.add_argument("--bf16", action="store_true", default=True)
    ap.add_argument("--lora_r", type=int, default=16)
    ap.add_argument("--lora_alpha", type=int, default=32)
    ap.add_argument("--max_steps", type=int, default=2)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=256)
    a = ap.parse_args()
    B, G = a.per_device_train_batch_size, a.num_generations
    assert B % G == 0, "per_device_train_batch_size must be a multiple of num_generations"
    cfg = tf.LlamaConfig(num_hidden_layers=a.layers, hidden_size=a.hidden, num_attention_heads=4,
                         num_key_value_heads=4, intermediate_size=a.hidden * 11 // 4, vocab_size=32000,
                         max_position_embeddings=2048)
    base = tf.LlamaForCausalLM(cfg)
    base.to(torch.bfloat16)
    ref = copy.deepcopy(base) if a.beta else None     # (beta 0: TRL loads no reference model)
    for p in ref.parameters() if ref is not None else []:
        p.requires_grad_(False)
    ref.eval() if ref is not None else None
    model = get_peft_model(base, LoraConfig(r=a.lora_r, lora_alpha=a.lora_alpha,
                                            target_modules=["q_proj", "k_proj", "v_proj", "o_proj"]))
    pol = list(model.parameters())
    trainable = [p for p in pol if p.requires_grad]
    refp = list(ref.parameters()) if ref is not None else []
    L = a.max_prompt_length + a.max_completion_length
    truth = {"program": "grpo_gen.py", "family": "grpo-llama-lora", "params": sum(p.numel() for p in pol + refp),
             "policy_params": sum(p.numel() for p in pol), "reference_params": sum(p.numel() for p in refp),
             "trainable_params": sum(p.numel() for p in trainable), "batch_size": B, "num_generations": G,
             "prompts_per_step": B // G, "seq_len": L, "prompt_len": a.max_prompt_length,
             "completion_len": a.max_completion_length, "grad_accum": a.gradient_accumulation_steps,
             "optimizer": "AdamW (fused) on LoRA", "amp": "bf16", "param_dtype": "bfloat16 (base, ref); float32 (LoRA)",
             "lora_rank": a.lora_r, "steps": 0, "oom": False, "oom_phase": None}
    print(f"trainable params: {truth['trainable_params']:,} || all params: {truth['policy_params']:,}", flush=True)
    phase = "init"
    try:
        model.to("cuda")
        ref.to("cuda") if ref is not None else None
        truth["param_bytes"] = tensor_bytes(pol + refp)
        truth["reference_bytes"] = tensor_bytes(refp)
        truth["frozen_policy_bytes"] = tensor_bytes(p for p in pol if not p.requires_grad)
        truth["trainable_param_bytes"] = tensor_bytes(trainable)
        opt = torch.optim.AdamW(trainable, lr=a.learning_rate, fused=True)
        for step in range(a.max_steps):
            for micro in range(a.gradient_accumulation_steps):
                phase = "generation"
                prompts = torch.randint(0, 32000, (B // G, a.max_prompt_length))
                prompts = torch.cat([prompts] * G, 0).to("cuda")       # repeat_interleave(G)
                model.eval()
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    ids = generate(model, prompts, a.max_completion_length)
                model.train()
                phase = "reference"
                with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                    ref_logps = (per_token_logps(ref, ids, a.max_completion_length, a.temperature)
                                 if ref is not None else None)
                advantages = torch.randn(B, 1).to("cuda")
                phase = "forward"
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logps = per_token_logps(model, ids, a.max_completion_length, a.temperature)
                    kl = torch.exp(ref_logps - logps) - (ref_logps - logps) - 1 if ref is not None else 0
                    ratio = torch.exp(logps - logps.detach())
                    loss = (-(ratio * advantages) + kl * a.beta).mean() / a.gradient_accumulation_steps
                phase = "backward"
                loss.backward()
                del loss, logps, kl, ratio, ref_logps, ids, prompts, advantages
            truth["grad_bytes"] = tensor_bytes(p.grad for p in trainable)
            phase = "optimizer step"
            opt.step()
            opt.zero_grad()
            truth["optim_state_bytes"] = tensor_bytes(state_tensors(opt))
            truth["steps"] += 1
            print(f"step {step}: (simulated)", flush=True)
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
