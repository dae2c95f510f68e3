"""patchtst.py — a SIMULATED PatchTST (yuqinie98/PatchTST's supervised run_longExp.py, model
PatchTST): a batch of --batch_size series of --seq_len time steps and --enc_in channels
(batch_x, B x L x C fp32, with batch_y and the time marks, put on the device by the loop). The model
is channel-independent: RevIN normalises each channel, ReplicationPad1d((0, --stride)) pads the
end, unfold cuts each channel's series into patches of --patch_len every --stride steps
(336 / 16 / 8: 42 + 1 = 43 patches), a Linear embeds each patch into --d_model, a learned position
embedding of the 43 patches is added, and the encoder (--e_layers post-norm layers: residual
attention written out as matmul / softmax over the patches, --n_heads heads; BatchNorm1d; a GELU
feed-forward of --d_ff) runs over B*C sequences of 43 patch tokens each: no tensor of the encoder
is --seq_len long. A flatten head maps d_model x 43 to --pred_len; MSE; Adam (simtorch's AdamW,
weight decay 0: the same memory, as torch's Adam). Prints its truth (VRAMTRACE_TORCH_STATS):
batch_size (the flag's B), channels, sequences (B*C, the encoder's batch), patches (its tokens
per sequence), seq_len, d_model, n_heads, e_layers, params. Used by
tests/integration/patchtst.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from sim_truth import finish, record_oom  # noqa: E402


class RevIN(nn.Module):
    def __init__(self, num_features, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.affine_weight = nn.Parameter(torch.ones(num_features))
        self.affine_bias = nn.Parameter(torch.zeros(num_features))

    def forward(self, x, mode):
        if mode == "norm":
            self.mean = torch.mean(x, dim=1, keepdim=True).detach()
            self.stdev = torch.sqrt(torch.var(x, dim=1, keepdim=True, unbiased=False) + self.eps).detach()
            x = (x - self.mean) / self.stdev
            return x * self.affine_weight + self.affine_bias
        x = (x - self.affine_bias) / (self.affine_weight + self.eps * self.eps)
        return x * self.stdev + self.mean


class Transpose(nn.Module):
    def forward(self, x):
        return x.transpose(1, 2)


class Attention(nn.Module):
    """_MultiheadAttention with _ScaledDotProductAttention (res_attention: the scores go on)."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        self.h, self.dk = n_heads, d_model // n_heads
        self.W_Q, self.W_K, self.W_V = (nn.Linear(d_model, d_model) for _ in range(3))
        self.to_out = nn.Linear(d_model, d_model)

    def forward(self, x, prev):
        bs = x.size()[0]
        q = self.W_Q(x).view(bs, -1, self.h, self.dk).transpose(1, 2)
        k = self.W_K(x).view(bs, -1, self.h, self.dk).permute(0, 2, 3, 1)
        v = self.W_V(x).view(bs, -1, self.h, self.dk).transpose(1, 2)
        scores = torch.matmul(q, k) * (self.dk ** -0.5)
        if prev is not None:
            scores = scores + prev
        out = torch.matmul(F.softmax(scores, dim=-1), v)
        return self.to_out(out.transpose(1, 2).contiguous().view(bs, -1, self.h * self.dk)), scores


class EncoderLayer(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, dropout):
        super().__init__()
        self.self_attn = Attention(d_model, n_heads)
        self.dropout_attn, self.dropout_ffn = nn.Dropout(dropout), nn.Dropout(dropout)
        self.norm_attn = nn.Sequential(Transpose(), nn.BatchNorm1d(d_model), Transpose())
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Dropout(dropout), nn.Linear(d_ff, d_model))
        self.norm_ffn = nn.Sequential(Transpose(), nn.BatchNorm1d(d_model), Transpose())

    def forward(self, src, prev):
        src2, scores = self.self_attn(src, prev)
        src = self.norm_attn(src + self.dropout_attn(src2))
        return self.norm_ffn(src + self.dropout_ffn(self.ff(src))), scores


class PatchTST(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.patch_len, self.stride = a.patch_len, a.stride
        self.patch_num = (a.seq_len - a.patch_len) // a.stride + 1 + 1  # padding_patch 'end'
        self.revin_layer = RevIN(a.enc_in)
        self.padding_patch_layer = nn.ReplicationPad1d((0, a.stride))
        self.W_P = nn.Linear(a.patch_len, a.d_model)
        self.W_pos = nn.Parameter(torch.empty(self.patch_num, a.d_model))
        self.dropout = nn.Dropout(a.dropout)
        self.layers = nn.ModuleList([EncoderLayer(a.d_model, a.n_heads, a.d_ff, a.dropout)
                                     for _ in range(a.e_layers)])
        self.head = nn.Sequential(nn.Flatten(start_dim=-2), nn.Linear(a.d_model * self.patch_num, a.pred_len))

    def forward(self, x):  # x: [bs x seq_len x nvars]
        z = self.revin_layer(x, "norm").permute(0, 2, 1)  # [bs x nvars x seq_len]
        z = self.padding_patch_layer(z)
        z = z.unfold(dimension=-1, size=self.patch_len, step=self.stride)  # [bs x nvars x patch_num x patch_len]
        n_vars = z.size()[1]
        z = self.W_P(z)  # [bs x nvars x patch_num x d_model]
        u = torch.reshape(z, (z.size()[0] * z.size()[1], z.size()[2], z.size()[3]))
        u = self.dropout(u + self.W_pos)  # [bs*nvars x patch_num x d_model]: the encoder's input
        scores = None
        for layer in self.layers:
            u, scores = layer(u, scores)
        z = torch.reshape(u, (-1, n_vars, u.size()[-2], u.size()[-1])).permute(0, 1, 3, 2)
        z = self.head(z)  # [bs x nvars x pred_len]
        return self.revin_layer(z.permute(0, 2, 1), "denorm")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="PatchTST")
    ap.add_argument("--seq_len", type=int, default=336)
    ap.add_argument("--label_len", type=int, default=48)
    ap.add_argument("--pred_len", type=int, default=96)
    ap.add_argument("--enc_in", type=int, default=321)
    ap.add_argument("--e_layers", type=int, default=3)
    ap.add_argument("--n_heads", type=int, default=16)
    ap.add_argument("--d_model", type=int, default=128)
    ap.add_argument("--d_ff", type=int, default=256)
    ap.add_argument("--dropout", type=float, default=0.2)
    ap.add_argument("--patch_len", type=int, default=16)
    ap.add_argument("--stride", type=int, default=8)
    ap.add_argument("--batch_size", type=int, default=32)
    ap.add_argument("--learning_rate", type=float, default=0.0001)
    ap.add_argument("--train_steps", type=int, default=2)  # (the simulation's: not an epoch)
    a = ap.parse_args()
    B, C = a.batch_size, a.enc_in
    truth = {"batch_size": B, "channels": C, "sequences": 0, "patches": 0, "seq_len": a.seq_len,
             "d_model": a.d_model, "n_heads": a.n_heads, "e_layers": a.e_layers, "params": 0,
             "steps": 0, "oom": False, "oom_phase": None}
    phase = "init"
    try:
        model = PatchTST(a).to("cuda")
        params = list(model.parameters())
        truth.update(sequences=B * C, patches=model.patch_num, params=sum(p.numel() for p in params))
        model_optim = torch.optim.AdamW(params, lr=a.learning_rate, weight_decay=0.0)
        criterion = nn.MSELoss()
        for it in range(a.train_steps):
            phase = "forward"
            model_optim.zero_grad()
            batch_x = torch.randn(B, a.seq_len, C).float().to("cuda")
            batch_y = torch.randn(B, a.label_len + a.pred_len, C).float().to("cuda")
            batch_x_mark = torch.randn(B, a.seq_len, 4).float().to("cuda")
            batch_y_mark = torch.randn(B, a.label_len + a.pred_len, 4).float().to("cuda")
            dec_inp = torch.zeros_like(batch_y[:, -a.pred_len:, :]).float()
            dec_inp = torch.cat([batch_y[:, :a.label_len, :], dec_inp], dim=1).float().to("cuda")
            outputs = model(batch_x)[:, -a.pred_len:, 0:]
            batch_y = batch_y[:, -a.pred_len:, 0:].to("cuda")
            loss = criterion(outputs, batch_y)
            phase = "backward"
            loss.backward()
            phase = "optimizer"
            model_optim.step()
            truth["steps"] = it + 1
            del batch_x, batch_y, batch_x_mark, batch_y_mark, dec_inp, outputs, loss
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
