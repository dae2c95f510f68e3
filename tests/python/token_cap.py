"""token_cap.py — a SIMULATED speech encoder in the shape of fairseq's speech_to_text, written in
the program: 80-dim filterbank frames -> a stride-2 3x3 Conv2d (2x subsampling) -> Linear ->
--encoder-layers Transformer encoder blocks
(LayerNorm, bidirectional attention, GELU MLP) of width --encoder-embed-dim -> a frame classifier
(cross-entropy over 500 units). Its flags are fairseq's spelling, none of them a name vramtrace
places on a key: batches are made by a TOKEN BUDGET, --max-tokens (frames per batch), from length
buckets: a step's batch holds max_tokens // T utterances of T frames, so B and T change from step
to step; --update-freq is fairseq's gradient accumulation. fp32, AdamW. Prints its own facts:
"facts: max_tokens=M update_freq=U encoder_layers=L encoder_embed_dim=d batches=BxT,BxT,BxT".
Used by tests/integration/flags_unplaced.sh and conv_stem.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402

LENGTHS = [400, 1000, 200]  # frames of each step's bucket


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.n1, self.qkv, self.o = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.n2, self.up, self.down = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.h = heads

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(self.n1(x)).split(C, dim=2)
        q = q.view(B, T, self.h, C // self.h).transpose(1, 2)
        k = k.view(B, T, self.h, C // self.h).transpose(1, 2)
        v = v.view(B, T, self.h, C // self.h).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v)
        x = x + self.o(y.transpose(1, 2).contiguous().view(B, T, C))
        return x + self.down(F.gelu(self.up(self.n2(x))))


class Encoder(nn.Module):
    def __init__(self, d, layers, units):
        super().__init__()
        self.conv = nn.Conv2d(1, 16, 3, stride=2, padding=1)
        self.proj = nn.Linear(16 * 40, d)
        self.layers = nn.ModuleList([Block(d, 4) for _ in range(layers)])
        self.norm, self.head = nn.LayerNorm(d), nn.Linear(d, units)

    def forward(self, fbank):
        x = F.relu(self.conv(fbank))  # (B, 16, T/2, 40)
        B, C, T2, F2 = x.size()
        x = self.proj(x.permute(0, 2, 1, 3).contiguous().view(B, T2, C * F2))
        for b in self.layers:
            x = b(x)
        return self.head(self.norm(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-tokens", type=int, default=4000)
    ap.add_argument("--update-freq", type=int, default=1)
    ap.add_argument("--encoder-layers", type=int, default=2)
    ap.add_argument("--encoder-embed-dim", type=int, default=256)
    a = ap.parse_args()
    units = 500
    torch.cuda.init()
    batches = [(a.max_tokens // T, T) for T in LENGTHS]
    model = Encoder(a.encoder_embed_dim, a.encoder_layers, units).to("cuda")
    params = list(model.parameters())
    print("facts: max_tokens=%d update_freq=%d encoder_layers=%d encoder_embed_dim=%d batches=%s"
          % (a.max_tokens, a.update_freq, a.encoder_layers, a.encoder_embed_dim,
             ",".join("%dx%d" % bt for bt in batches)), flush=True)
    opt = torch.optim.AdamW(params, lr=1e-3)
    for it in range(len(batches)):
        for micro in range(a.update_freq):
            B, T = batches[(it * a.update_freq + micro) % len(batches)]
            fb = torch.randn(B, 1, T, 80).to("cuda")
            y = torch.randint(0, units, (B, T // 2)).to("cuda")
            logits = model(fb)
            loss = F.cross_entropy(logits.view(-1, units), y.view(-1))
            del logits
            (loss / a.update_freq).backward()
            del fb, y, loss
        opt.step()
        opt.zero_grad(set_to_none=True)
    print("trained %d steps" % len(batches), flush=True)


if __name__ == "__main__":
    main()
