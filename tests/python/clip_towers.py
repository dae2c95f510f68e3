"""clip_towers.py — a SIMULATED CLIP-like two-tower model written in the program: an image tower
(a 16x16 patch embedding, its one Conv2d, then pre-norm attention blocks) and a text tower
(causal attention blocks over token ids), a contrastive loss over the B x B similarity matrix,
bf16 autocast, fused AdamW. Almost all of its weights are in the attention blocks, none of which
holds a convolution. Prints its own facts: "facts: conv_params=N params=M conv_callers=ImageTower
blocks=K". Used by tests/integration/clip_towers.sh. Arguments: [batch size]."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402


class Attn(nn.Module):
    def __init__(self, d, heads, causal):
        super().__init__()
        self.qkv, self.o = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.h, self.causal = heads, causal

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.h, C // self.h).transpose(1, 2)
        k = k.view(B, T, self.h, C // self.h).transpose(1, 2)
        v = v.view(B, T, self.h, C // self.h).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
        return self.o(y.transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    def __init__(self, d, heads, causal):
        super().__init__()
        self.ln1, self.attn = nn.LayerNorm(d), Attn(d, heads, causal)
        self.ln2, self.fc, self.act, self.proj = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.proj(self.act(self.fc(self.ln2(x))))


class ImageTower(nn.Module):
    def __init__(self, img, patch, d, layers, heads, out):
        super().__init__()
        self.patch = nn.Conv2d(3, d, patch, stride=patch)
        self.pos = nn.Parameter(torch.zeros(1, (img // patch) ** 2, d))
        self.blocks = nn.ModuleList([Block(d, heads, False) for _ in range(layers)])
        self.ln, self.proj = nn.LayerNorm(d), nn.Linear(d, out, bias=False)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2) + self.pos
        for b in self.blocks:
            x = b(x)
        return self.proj(self.ln(x).mean(dim=1))


class TextTower(nn.Module):
    def __init__(self, vocab, ctx, d, layers, heads, out):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Parameter(torch.zeros(1, ctx, d))
        self.blocks = nn.ModuleList([Block(d, heads, True) for _ in range(layers)])
        self.ln, self.proj = nn.LayerNorm(d), nn.Linear(d, out, bias=False)

    def forward(self, ids):
        x = self.tok(ids) + self.pos
        for b in self.blocks:
            x = b(x)
        return self.proj(self.ln(x)[:, -1])


class CLIP(nn.Module):
    def __init__(self):
        super().__init__()
        self.visual = ImageTower(128, 16, 384, 4, 6, 256)
        self.text = TextTower(8192, 32, 256, 4, 4, 256)
        self.scale = nn.Parameter(torch.zeros(()))

    def forward(self, img, ids):
        i, t = self.visual(img), self.text(ids)
        i = i / i.norm(dim=-1, keepdim=True)
        t = t / t.norm(dim=-1, keepdim=True)
        return (i @ t.transpose(0, 1)) * self.scale.exp()


B = int(sys.argv[1]) if len(sys.argv) > 1 else 32
torch.cuda.init()
model = CLIP().to("cuda")
params = list(model.parameters())
print("facts: conv_params=%d params=%d conv_callers=ImageTower blocks=%d"
      % (sum(p.numel() for p in model.visual.patch.parameters()), sum(p.numel() for p in params),
         len(model.visual.blocks) + len(model.text.blocks)), flush=True)
opt = torch.optim.AdamW(params, lr=1e-4, fused=True)
for _ in range(2):
    img = torch.randn(B, 3, 128, 128).to("cuda")
    ids = torch.randint(0, 8192, (B, 32)).to("cuda")
    labels = torch.arange(0, B, device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(img, ids)
    loss = (F.cross_entropy(logits.float(), labels) + F.cross_entropy(logits.transpose(0, 1).float(), labels)) * 0.5
    del logits
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    del img, ids, labels, loss
print("trained 2 steps", flush=True)
