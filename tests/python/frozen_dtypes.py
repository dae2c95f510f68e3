"""frozen_dtypes.py — a SIMULATED fine-tuning whose frozen weights are not the dtype of the trained
ones, in the program's own loop (no class vramtrace recognizes):
  --base nf4      a QLoRA-like decoder of Llama-2-7B's shape: each projection's frozen weight is a packed 4-bit uint8
                  Parameter (out*in/2 bytes: numel() half the weights) with an fp32 absmax buffer
                  per 64, dequantized to bf16 in every matmul (a custom Function); embedding, norms
                  and head bf16, frozen (frozen_bytes counts the absmax too); fp32 LoRA
                  adapters of rank 64 the only trained weights; no autocast; checkpointing; AdamW.
                  --llama_d, --llama_l, --llama_i, --rank make it smaller (Llama-2-7B's 4096, 32,
                  11008, 64 by default); --no_recompute keeps every block's activations.
  --base encoder  a frozen text encoder (--enc_d 512, --enc_l 8 blocks) cast to fp16 and
                  run under no_grad (diffusers' weight_dtype) beside a larger trained fp32
                  transformer (--trained_d 1024, --trained_l 12 blocks) under bf16 autocast (the
                  encoder may have more blocks than the trained model: a CLIP-L's 12 beside a
                  DiT's 6); --ema keeps an fp32 copy of
                  the trained weights (p.detach().clone() of parameters(), made right after
                  them, in another order than .to() made them); AdamW.
Prints its own facts before training ("FACTS trainable=N trainable_bytes=B frozen_bytes=B
frozen_elems=N ema_bytes=B param_bytes=B packed_elems=N", the last the 4-bit weights' elements,
2 a byte), after its first step "STATE grads=B optimizer=B" (the
bytes of the gradients and AdamW's state), and at the end "trained N steps at batch B, reserved at
most R"; an out-of-memory error prints "OOM in PHASE" and exits 1. Used by
tests/integration/frozen_dtypes.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from simtorch.autograd.function import Function  # noqa: E402
from simtorch.utils.checkpoint import checkpoint  # noqa: E402
from simtorch.nn.modules.linear import _cpu  # noqa: E402


def nbytes(ts):
    return sum(t.numel() * t.element_size() for t in ts)


class MatMul4Bit(Function):
    """bitsandbytes' matmul of a 4-bit weight: dequantized to bf16 for the matmul, again in backward."""

    @staticmethod
    def forward(ctx, x, packed, shape):
        W = torch.empty(*shape, dtype=torch.bfloat16, device="cuda")
        out = F.linear(x, W)
        del W
        ctx.shape, ctx.in_shape = shape, tuple(x.shape)
        return out

    @staticmethod
    def backward(ctx, g):
        W = torch.empty(*ctx.shape, dtype=torch.bfloat16, device="cuda")
        del W
        return torch.empty(*ctx.in_shape, dtype=torch.bfloat16, device="cuda"), None, None


class Linear4bitLoRA(nn.Module):
    def __init__(self, fin, fout, r):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(fout * fin // 2, 1, dtype=torch.uint8), requires_grad=False)
        self.register_buffer("absmax", torch.empty(fout * fin // 64, dtype=torch.float32))  # (per 64)
        self.shape = (fout, fin)
        self.lora_A, self.lora_B = nn.Linear(fin, r, bias=False), nn.Linear(r, fout, bias=False)

    def forward(self, x):
        return MatMul4Bit.apply(x, self.weight, self.shape) + self.lora_B(self.lora_A(x.float())).bfloat16()


class Layer4bit(nn.Module):
    """A Llama layer: RMSNorms, seven 4-bit projections with adapters, SwiGLU."""

    def __init__(self, d, heads, inner, r):
        super().__init__()
        self.n1, self.n2 = nn.RMSNorm(d), nn.RMSNorm(d)
        self.q, self.k, self.v, self.o = (Linear4bitLoRA(d, d, r) for _ in range(4))
        self.gate, self.up = Linear4bitLoRA(d, inner, r), Linear4bitLoRA(d, inner, r)
        self.down = Linear4bitLoRA(inner, d, r)
        self.h = heads

    def forward(self, x):
        B, T, C = x.size()
        y = self.n1(x)
        q, k, v = (m(y).view(B, T, self.h, C // self.h).transpose(1, 2) for m in (self.q, self.k, self.v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).contiguous().view(B, T, C))
        y = self.n2(x)
        return x + self.down(F.silu(self.gate(y)) * self.up(y))


class LM4bit(nn.Module):
    def __init__(self, vocab, d, layers, inner, r, ckpt):
        super().__init__()
        self.ckpt = ckpt
        self.emb = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList([Layer4bit(d, d // 128, inner, r) for _ in range(layers)])
        self.norm, self.head = nn.RMSNorm(d), nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        x = self.emb(ids)
        x.requires_grad_()  # (enable_input_require_grads: checkpointing with frozen embeddings)
        for b in self.blocks:
            x = checkpoint(b, x, use_reentrant=True) if self.ckpt else b(x)
        return self.head(self.norm(x))


class Block(nn.Module):
    def __init__(self, d, heads, causal):
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.q, self.k = nn.Linear(d, d), nn.Linear(d, d)
        self.v, self.o = nn.Linear(d, d), nn.Linear(d, d)
        self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.h, self.causal = heads, causal

    def forward(self, x, mem=None):
        B, T, C = x.size()
        y = self.n1(x)
        q, k, v = (m(y).view(B, T, self.h, C // self.h).transpose(1, 2) for m in (self.q, self.k, self.v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
        x = x + self.o(a.transpose(1, 2).contiguous().view(B, T, C))
        return x + self.down(F.gelu(self.up(self.n2(x))))


class Stack(nn.Module):
    def __init__(self, vocab, d, layers, causal):
        super().__init__()
        if vocab:  # (the trained one reads the encoder's states)
            self.emb = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList([Block(d, d // 64, causal) for _ in range(layers)])
        self.norm, self.out = nn.LayerNorm(d), nn.Linear(d, d)
        # a Parameter of its own: .to() moves it after the children, parameters() lists it first
        # (an EMA of clones of parameters() holds the model's sizes in another order)
        self.pos = nn.Parameter(_cpu(1, 512, d))

    def forward(self, x):
        x = x + self.pos
        for b in self.blocks:
            x = b(x)
        return self.out(self.norm(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", choices=["nf4", "encoder"], default="nf4")
    ap.add_argument("--batch_size", type=int, default=2)
    ap.add_argument("--ema", action="store_true")
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--llama_d", type=int, default=4096)
    ap.add_argument("--llama_l", type=int, default=32)
    ap.add_argument("--llama_i", type=int, default=11008)
    ap.add_argument("--rank", type=int, default=64)
    ap.add_argument("--no_recompute", action="store_true")
    ap.add_argument("--trained_d", type=int, default=1024)
    ap.add_argument("--trained_l", type=int, default=12)
    ap.add_argument("--enc_d", type=int, default=512)
    ap.add_argument("--enc_l", type=int, default=8)
    a = ap.parse_args()
    V, T = 32000, 512
    if a.base == "nf4":
        model = LM4bit(V, a.llama_d, a.llama_l, a.llama_i, a.rank, not a.no_recompute)
        model.requires_grad_(False)
        trained = []
        for m in model.modules():
            if isinstance(m, Linear4bitLoRA):
                trained += [m.lora_A.weight, m.lora_B.weight]
        for p in trained:
            p.requires_grad_(True)
        for name, m in model.named_modules():  # embedding, norms and head bf16; adapters fp32
            if isinstance(m, (nn.Embedding, nn.RMSNorm)) or name == "head":
                m.to(torch.bfloat16)
        model.to("cuda")
        frozen = [p for p in model.parameters() if not p.requires_grad] + list(model.buffers())
        elems = packed = sum(m.shape[0] * m.shape[1] for m in model.modules() if isinstance(m, Linear4bitLoRA))
        elems += sum(p.numel() for p in model.parameters() if not p.requires_grad and p.dtype != torch.uint8)
        ema = []
        params = list(model.parameters()) + list(model.buffers())
    else:
        encoder = Stack(V, a.enc_d, a.enc_l, causal=False)
        encoder.requires_grad_(False)
        encoder.to("cuda", dtype=torch.float16)
        model = Stack(0, a.trained_d, a.trained_l, causal=True).to("cuda")
        trained = list(model.parameters())
        ema = [p.detach().clone() for p in trained] if a.ema else []
        frozen = list(encoder.parameters())
        elems, packed = sum(p.numel() for p in frozen), 0
        params = trained + frozen
    print(f"FACTS trainable={sum(p.numel() for p in trained)} trainable_bytes={nbytes(trained)} "
          f"frozen_bytes={nbytes(frozen)} frozen_elems={elems} ema_bytes={nbytes(ema)} "
          f"param_bytes={nbytes(params)} packed_elems={packed}", flush=True)
    opt = torch.optim.AdamW(trained, lr=1e-4, fused=True)
    phase = "forward"
    try:
        for it in range(a.steps):
            ids = torch.randint(0, V, (a.batch_size, T)).to("cuda")
            phase = "forward"
            if a.base == "nf4":
                loss = F.cross_entropy(model(ids).float().view(-1, V), ids.view(-1))
            else:
                with torch.no_grad():
                    states = encoder(encoder.emb(ids)).float()
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    out = model(F.linear(states, torch.empty(a.trained_d, a.enc_d, device="cuda")))
                loss = F.mse_loss(out.float(), torch.zeros(a.batch_size, T, a.trained_d, device="cuda"))
                del out, states
            phase = "backward"
            loss.backward()
            del loss, ids
            phase = "optimizer"
            opt.step()
            if it == 0:
                grads = nbytes(p.grad for p in trained)
                state = nbytes(t for s in opt.state.values() for t in s.values() if hasattr(t, "numel"))
                print(f"STATE grads={grads} optimizer={state}", flush=True)
            opt.zero_grad(set_to_none=True)
            for e, p in zip(ema, trained):
                e.lerp_(p, 1e-4)
    except torch.OutOfMemoryError:
        print(f"OOM in {phase}", flush=True)
        return 1
    print(f"trained {a.steps} steps at batch {a.batch_size}, reserved at most "
          f"{torch.cuda.max_memory_reserved()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
