"""distill_frozen.py — a SIMULATED knowledge distillation in the program's own loop: a frozen
teacher LM written here (requires_grad False, eval, run under no_grad) and a smaller student LM of
the same class trained with KL over temperature-softened fp32 log-softmaxes plus cross-entropy,
bf16 autocast, fused AdamW on the student only (--student_layers blocks, 6 by default; the
teacher's 12); --teacher_last runs the teacher's forward after the student's (the student's first).
Neither model is one vramtrace recognizes.
Prints its own facts before training ("FACTS trainable=N teacher=N student_d=N student_layers=N
teacher_d=N teacher_layers=N vocab=N") and, after its first step,
"STATE grads=B optimizer=B" (the bytes of the student's gradients and AdamW state), and at the end
"trained N steps at batch B, reserved at most R" (torch.cuda.max_memory_reserved); an
out-of-memory error prints "OOM in PHASE" and exits 1. Used by tests/integration/distill_frozen.sh, distill_one_block.sh and distill_teacher_last.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.n1, self.n2 = nn.RMSNorm(d), nn.RMSNorm(d)
        self.q, self.k = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
        self.v, self.o = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
        self.up, self.down = nn.Linear(d, 4 * d, bias=False), nn.Linear(4 * d, d, bias=False)
        self.h = heads

    def forward(self, x):
        B, T, C = x.size()
        y = self.n1(x)
        q, k, v = (m(y).view(B, T, self.h, C // self.h).transpose(1, 2) for m in (self.q, self.k, self.v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).contiguous().view(B, T, C))
        return x + self.down(F.gelu(self.up(self.n2(x))))


class LM(nn.Module):
    def __init__(self, vocab, d, layers):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList([Block(d, d // 64) for _ in range(layers)])
        self.norm, self.head = nn.RMSNorm(d), nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        x = self.emb(ids)
        for b in self.blocks:
            x = b(x)
        return self.head(self.norm(x))


def count(ps):
    return sum(p.numel() for p in ps)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch_size", type=int, default=2)
    ap.add_argument("--block_size", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--student_layers", type=int, default=6)
    ap.add_argument("--teacher_last", action="store_true")
    a = ap.parse_args()
    V = 32000
    teacher = LM(V, 2048, 12).to("cuda")
    teacher.requires_grad_(False)
    teacher.eval()
    student = LM(V, 768, a.student_layers).to("cuda")
    sp = list(student.parameters())
    print(f"FACTS trainable={count(sp)} teacher={count(teacher.parameters())} student_d=768 "
          f"student_layers={a.student_layers} teacher_d=2048 teacher_layers=12 vocab={V}", flush=True)
    opt = torch.optim.AdamW(sp, lr=3e-4, fused=True)
    phase = "teacher forward"
    try:
        for it in range(a.steps):
            x = torch.randint(0, V, (a.batch_size, a.block_size)).to("cuda")
            y = torch.randint(0, V, (a.batch_size, a.block_size)).to("cuda")
            if a.teacher_last:
                phase = "student forward"
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    s_logits = student(x)
            phase = "teacher forward"
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                t_logits = teacher(x)
            t_lp = F.log_softmax(t_logits.float() / 2.0, dim=-1)
            del t_logits
            if not a.teacher_last:
                phase = "student forward"
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    s_logits = student(x)
            phase = "loss"
            s_lp = F.log_softmax(s_logits.float() / 2.0, dim=-1)
            kl = (t_lp.exp() * (t_lp - s_lp)).sum(dim=-1).mean()
            loss = kl * 2.0 + F.cross_entropy(s_logits.view(-1, V), y.view(-1)) * 0.5
            del s_logits
            phase = "backward"
            loss.backward()
            grads = sum(p.grad.numel() * p.grad.element_size() for p in sp if p.grad is not None)
            phase = "optimizer"
            opt.step()
            if it == 0:
                state = sum(t.numel() * t.element_size() for s in opt.state.values()
                            for t in s.values() if hasattr(t, "numel") and t.numel() > 1)
                print(f"STATE grads={grads} optimizer={state}", flush=True)
            opt.zero_grad(set_to_none=True)
            del x, y, t_lp, s_lp, kl, loss
    except torch.OutOfMemoryError:
        print(f"OOM in {phase}", flush=True)
        return 1
    print(f"trained {a.steps} steps at batch {a.batch_size}, reserved at most "
          f"{torch.cuda.max_memory_reserved()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
