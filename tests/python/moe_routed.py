"""moe_routed.py — a SIMULATED Mixture-of-Experts GPT (nanoMoE's shape: nanoGPT's model and loop
with every MLP replaced by --n_exp experts and a linear router, top --top_k routing in Mixtral's
way: per expert the tokens routed to it gathered, its MLP run on them, the output weighted and
index_add_-ed back; a load-balancing loss). An imbalanced router: layer 0's last expert gets no
token in the first --empty_steps optimizer steps (every step by default), and is skipped then
(`if top_x.shape[0] == 0: continue`, Mixtral's older code), so its weights get no gradient in
those steps, though every weight requires one and is in the optimizer. --bias puts biases on every
Linear (nanoGPT's --bias: qkv's 3d, the MLP's 4d, the output projections' d); --bias_out on the
output projections alone (the attention's and each expert's c_proj); the LayerNorms keep their
own weight and bias whatever the flags. bf16 autocast, AdamW fused, gradient accumulation, tied
wte / lm_head. simtorch lacks topk / where / index_add_: the top-k values are a copy of k columns
of the probs, the indices int64 tensors of the routed counts, index_add_ a custom Function.
Prints VRAMTRACE_TORCH_STATS with its truth: every parameter's count (all train), those that had
no gradient at the first step's end and those that had none in any step, the flags. Adapted from
audit 41's moe_train.py; used by tests/integration/moe_routed.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from simtorch.autograd import Function  # noqa: E402
from sim_truth import finish, record_oom, tensor_bytes, state_tensors  # noqa: E402

COUNTS = {}  # (layer, call) -> per-expert token counts
STEP = [0]  # the optimizer steps taken


def routed_counts(ntok, n_exp, top_k, layer, call, empty_expert):
    """An imbalanced router's per-expert counts, summing to ntok * top_k (deterministic)."""
    w = [(3 + ((layer * 5 + call * 3 + e * 7) % 11)) for e in range(n_exp)]
    if empty_expert and layer == 0:
        w[n_exp - 1] = 0
    tot = sum(w)
    c = [ntok * top_k * x // tot for x in w]
    c[0] += ntok * top_k - sum(c)
    return c


class IndexAdd(Function):
    @staticmethod
    def forward(ctx, final, current, top_x):
        ctx.n = current.size()[0]
        return final.new_empty(final.size())  # (index_add_ is in place; its result the same size)

    @staticmethod
    def backward(ctx, g):
        return g.new_empty(g.size()), g.new_empty((ctx.n, g.size()[1])), None


class CausalSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_attn = nn.Linear(c.n_embd, 3 * c.n_embd, bias=c.bias)
        self.c_proj = nn.Linear(c.n_embd, c.n_embd, bias=c.bias or c.bias_out)
        self.n_head, self.n_embd = c.n_head, c.n_embd

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class MLPExperts(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_fc = nn.Linear(c.n_embd, 4 * c.n_embd, bias=c.bias)
        self.c_proj = nn.Linear(4 * c.n_embd, c.n_embd, bias=c.bias or c.bias_out)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x)))


class MOELayer(nn.Module):
    def __init__(self, c, layer):
        super().__init__()
        self.router = nn.Linear(c.n_embd, c.n_exp, bias=False)
        self.experts = nn.ModuleList([MLPExperts(c) for _ in range(c.n_exp)])
        self.n_exp, self.top_k, self.layer, self.c = c.n_exp, c.top_k, layer, c
        self.calls = 0

    def forward(self, x):
        B, T, C = x.size()
        hidden_states = x.view(-1, C)
        N = hidden_states.size()[0]
        router_logits = self.router(hidden_states)
        routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float32)
        routing_weights = routing_weights[:, :self.top_k].contiguous()  # torch.topk's values
        selected = torch.zeros(N, self.top_k, dtype=torch.int64, device="cuda")  # topk's indices
        routing_weights = routing_weights / routing_weights.sum(dim=-1, keepdim=True)
        routing_weights = routing_weights.to(hidden_states.dtype)
        final = torch.zeros(N, C, dtype=hidden_states.dtype, device="cuda")
        counts = routed_counts(N, self.n_exp, self.top_k, self.layer, self.calls, STEP[0] < self.c.empty_steps)
        COUNTS[(self.layer, self.calls)] = counts
        self.calls += 1
        for e, expert in enumerate(self.experts):
            if counts[e] == 0:
                continue
            top_x = torch.zeros(counts[e], dtype=torch.int64, device="cuda")  # torch.where(expert_mask[e])
            current_state = hidden_states[top_x]
            w = routing_weights.view(-1)[top_x].view(counts[e], 1)
            current_hidden = expert(current_state) * w
            final = IndexAdd.apply(final, current_hidden, top_x)
        # load balancing: f_i (fraction routed), P_i (mean router prob)
        P = F.softmax(router_logits, dim=1, dtype=torch.float32).mean(dim=0)
        aux = (P * P).sum() * self.n_exp
        return final.view(B, T, C), aux


class Block(nn.Module):
    def __init__(self, c, layer):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(c.n_embd), nn.LayerNorm(c.n_embd)
        self.attn, self.mlp = CausalSelfAttention(c), MOELayer(c, layer)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        m, aux = self.mlp(self.ln_2(x))
        return x + m, aux


class MoEGPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(c.vocab_size, c.n_embd), nn.Embedding(c.block_size, c.n_embd)
        self.h = nn.ModuleList([Block(c, i) for i in range(c.n_layer)])
        self.ln_f = nn.LayerNorm(c.n_embd)
        self.lm_head = nn.Linear(c.n_embd, c.vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight
        self.c = c

    def forward(self, idx, targets):
        b, t = idx.size()
        pos = torch.arange(0, t, device="cuda")
        x = self.wte(idx) + self.wpe(pos)
        aux_total = 0
        for block in self.h:
            x, aux = block(x)
            aux_total = aux_total + aux
        logits = self.lm_head(self.ln_f(x))
        loss = F.cross_entropy(logits.view(-1, logits.size()[-1]), targets.view(-1))
        return logits, loss + aux_total * self.c.aux_loss_weight


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n_layer", type=int, default=4)
    p.add_argument("--n_head", type=int, default=4)
    p.add_argument("--n_embd", type=int, default=256)
    p.add_argument("--block_size", type=int, default=256)
    p.add_argument("--vocab_size", type=int, default=8192)
    p.add_argument("--bias", action="store_true")
    p.add_argument("--bias_out", action="store_true", help="biases on the output projections alone")
    p.add_argument("--n_exp", type=int, default=8)
    p.add_argument("--top_k", type=int, default=2)
    p.add_argument("--aux_loss_weight", type=float, default=0.01)
    p.add_argument("--batch_size", type=int, default=4)
    p.add_argument("--gradient_accumulation_steps", type=int, default=2)
    p.add_argument("--max_iters", type=int, default=2)
    p.add_argument("--learning_rate", type=float, default=6e-4)
    p.add_argument("--grad_clip", type=float, default=1.0)
    p.add_argument("--empty_steps", type=int, default=1 << 30,
                   help="(simulation) layer 0's last expert gets no token in this many first steps")
    c = p.parse_args()
    truth = {"program": "moe_train.py", "family": "moe-gpt", "batch_size": c.batch_size, "seq_len": c.block_size,
             "n_embd": c.n_embd, "n_layer": c.n_layer, "n_exp": c.n_exp, "top_k": c.top_k,
             "grad_accum": c.gradient_accumulation_steps, "optimizer": "adamw (fused)", "amp": "bf16",
             "dtype": "float32", "steps": 0, "oom": False, "oom_phase": None, "bias": c.bias,
             "bias_out": c.bias_out, "empty_steps": min(c.empty_steps, c.max_iters)}
    phase = "init"
    try:
        model = MoEGPT(c).to("cuda")
        params = list({id(q): q for q in model.parameters()}.values())
        truth["params"] = sum(q.numel() for q in params)
        expert_params = sum(q.numel() for b in model.h for e in b.mlp.experts for q in e.parameters())
        truth["expert_params"] = expert_params
        truth["active_params_per_token"] = truth["params"] - expert_params + expert_params * c.top_k // c.n_exp
        truth["param_bytes"] = tensor_bytes(params)
        truth["trainable_params"] = truth["params"]
        got = set()  # the parameters that had a gradient at a step's end
        optimizer = torch.optim.AdamW(params, lr=c.learning_rate, betas=(0.9, 0.95), weight_decay=0.1, fused=True)
        ctx = torch.autocast("cuda", dtype=torch.bfloat16)
        for it in range(c.max_iters):
            for micro_step in range(c.gradient_accumulation_steps):
                phase = "forward"
                X = torch.randint(0, c.vocab_size, (c.batch_size, c.block_size)).to("cuda")
                Y = torch.randint(0, c.vocab_size, (c.batch_size, c.block_size)).to("cuda")
                with ctx:
                    logits, loss = model(X, Y)
                    loss = loss / c.gradient_accumulation_steps
                phase = "backward"
                loss.backward()
                del logits, loss, X, Y
            if it == 0:
                truth["grad_bytes"] = tensor_bytes([q.grad for q in params])
                truth["params_without_grad"] = sum(q.numel() for q in params if q.grad is None)
            got.update(id(q) for q in params if q.grad is not None)
            truth["params_never_grad"] = sum(q.numel() for q in params if id(q) not in got)
            torch.nn.utils.clip_grad_norm_(params, c.grad_clip)
            phase = "optimizer"
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            if it == 0:
                truth["optim_state_bytes"] = tensor_bytes(state_tensors(optimizer))
            truth["steps"] = STEP[0] = it + 1
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    truth["expert_token_counts_first"] = COUNTS.get((0, 0))
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
