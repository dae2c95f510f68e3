"""mae_masked.py — a SIMULATED masked autoencoder in the shape of facebookresearch/mae's
models_mae.py, written in the program: a ViT encoder (a 16x16 patch embedding, a class token, a
position embedding of every patch) that sees only the patches left unmasked (1 - --mask_ratio of
them, plus the class token), and a narrower decoder with more heads over every patch (mask tokens
put back by index). bf16 autocast, fused AdamW, --accum_iter micro-batches a step. Prints its own
facts before it trains: "facts: encoder_tokens=T encoder_heads=H encoder_width=D
decoder_tokens=T2 decoder_heads=H2 decoder_width=D2", then "trained N steps, reserved at most R"
(R from the allocator's own counter), or "OOM in forward". Used by
tests/integration/mae_masked.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402


class Attn(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.qkv, self.o = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.h = heads

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.h, C // self.h).transpose(1, 2)
        k = k.view(B, T, self.h, C // self.h).transpose(1, 2)
        v = v.view(B, T, self.h, C // self.h).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v)
        return self.o(y.transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1, self.attn = nn.LayerNorm(d), Attn(d, heads)
        self.ln2, self.fc, self.act, self.proj = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.proj(self.act(self.fc(self.ln2(x))))


class MAE(nn.Module):
    def __init__(self, img=128, p=16, d=384, L=6, H=6, dd=256, dL=4, dH=8):
        super().__init__()
        self.n, self.d, self.dd = (img // p) ** 2, d, dd
        self.patch_embed = nn.Conv2d(3, d, p, stride=p)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, d))
        self.pos_embed = nn.Parameter(torch.zeros(1, self.n + 1, d))
        self.blocks = nn.ModuleList([Block(d, H) for _ in range(L)])
        self.norm = nn.LayerNorm(d)
        self.decoder_embed = nn.Linear(d, dd)
        self.mask_token = nn.Parameter(torch.zeros(1, 1, dd))
        self.decoder_pos_embed = nn.Parameter(torch.zeros(1, self.n + 1, dd))
        self.decoder_blocks = nn.ModuleList([Block(dd, dH) for _ in range(dL)])
        self.decoder_norm = nn.LayerNorm(dd)
        self.decoder_pred = nn.Linear(dd, p * p * 3)

    def forward(self, imgs, keep):
        B = imgs.size()[0]
        x = self.patch_embed(imgs).flatten(2).transpose(1, 2) + self.pos_embed[:, 1:, :]
        ids_keep = torch.randint(0, B * self.n, (B * keep,)).to("cuda")  # the unmasked patches
        x = x.reshape(B * self.n, self.d)[ids_keep].view(B, keep, self.d)
        cls = (self.cls_token + self.pos_embed[:, :1, :]).expand(B, 1, self.d)
        x = torch.cat([cls, x], dim=1)
        for blk in self.blocks:
            x = blk(x)
        x = self.decoder_embed(self.norm(x))
        x_ = torch.cat([x[:, 1:, :], self.mask_token.expand(B, self.n - keep, self.dd)], dim=1)
        ids_restore = torch.randint(0, B * self.n, (B * self.n,)).to("cuda")
        x_ = x_.reshape(B * self.n, self.dd)[ids_restore].view(B, self.n, self.dd)
        x = torch.cat([x[:, :1, :], x_], dim=1) + self.decoder_pos_embed
        for blk in self.decoder_blocks:
            x = blk(x)
        return self.decoder_pred(self.decoder_norm(x))[:, 1:, :]


ap = argparse.ArgumentParser()
ap.add_argument("--batch_size", type=int, default=64)
ap.add_argument("--accum_iter", type=int, default=1)
ap.add_argument("--mask_ratio", type=float, default=0.75)
a = ap.parse_args()
torch.cuda.init()
model = MAE().to("cuda")
keep = int(model.n * (1 - a.mask_ratio))
print("facts: encoder_tokens=%d encoder_heads=%d encoder_width=%d decoder_tokens=%d decoder_heads=%d "
      "decoder_width=%d" % (keep + 1, model.blocks[0].attn.h, model.d, model.n + 1,
                            model.decoder_blocks[0].attn.h, model.dd), flush=True)
params = list(model.parameters())
opt = torch.optim.AdamW(params, lr=1e-4, betas=(0.9, 0.95), fused=True)
phase = "forward"
try:
    for _ in range(2):
        for _ in range(a.accum_iter):
            phase = "forward"
            imgs = torch.randn(a.batch_size, 3, 128, 128).to("cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                pred = model(imgs, keep)
            target = imgs.view(a.batch_size, 3, model.n, 256).permute(0, 2, 3, 1).reshape(a.batch_size, model.n, 768)
            loss = ((pred.float() - target) ** 2).mean()
            del pred, target
            phase = "backward"
            (loss / a.accum_iter).backward()
            del imgs, loss
        phase = "optimizer"
        opt.step()
        opt.zero_grad(set_to_none=True)
except torch.cuda.OutOfMemoryError:
    print("OOM in " + phase, flush=True)
    sys.exit(1)
print("trained 2 steps, reserved at most %d" % torch.cuda.max_memory_reserved(), flush=True)
