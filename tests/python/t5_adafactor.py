"""t5_adafactor.py — a SIMULATED T5 fine-tune written in the program, in the shape of Hugging Face's
modeling_t5.py: one shared token embedding, --layers encoder blocks (self-attention, a ReLU
feed-forward) and --layers decoder blocks (causal self-attention, cross-attention over the
encoder's output, the feed-forward), each sub-layer behind an RMS-style T5LayerNorm (fp32 variance,
no mean, no bias), a relative position bias (an embedding of --buckets buckets per head, the first
block's of each stack, added to the scores of every block's self-attention), unscaled eager
attention (scores in 16 bits, softmax in fp32, dropout), the head tied to the embedding
(d**-0.5; --untied_head: a V x d head of its own, T5 v1.1's lm_head, made after the decoder).
The encoder sees --src_len tokens, the decoder --tgt_len. bf16 autocast (--amp none: fp32),
torch.optim.Adafactor. Prints "facts: ..." before it trains and, at the end (after an
out-of-memory error too), its own truth: VRAMTRACE_TORCH_STATS {json} (batch, lengths, steps, oom
and the phase and the stack and block the forward had reached, parameters, gradients before the
first step, the optimizer's state, the allocator's counters). Used by
tests/integration/t5_decoder.sh."""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from sim_truth import tensor_bytes, state_tensors, factored_elements, print_truth, record_oom  # noqa: E402

WHERE = {"stack": None, "block": None}  # how far the forward had got (the truth's oom_at)


class T5LayerNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        variance = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(variance + self.eps)
        return self.weight * x.to(torch.bfloat16 if AMP else torch.float32)


class T5Attention(nn.Module):
    def __init__(self, d, heads, d_kv, buckets, dropout, has_bias):
        super().__init__()
        self.h, self.d_kv = heads, d_kv
        inner = heads * d_kv
        self.q, self.k = nn.Linear(d, inner, bias=False), nn.Linear(d, inner, bias=False)
        self.v, self.o = nn.Linear(d, inner, bias=False), nn.Linear(inner, d, bias=False)
        self.buckets, self.p = buckets, dropout
        self.relative_attention_bias = nn.Embedding(buckets, heads) if has_bias else None

    def compute_bias(self, qlen, klen):
        # the (qlen, klen) relative positions' buckets: an int64 tensor on the device
        rel = torch.randint(0, self.buckets, (qlen, klen)).to("cuda")
        values = self.relative_attention_bias(rel)  # (qlen, klen, H)
        return values.permute(2, 0, 1).unsqueeze(0)  # (1, H, qlen, klen)

    def forward(self, x, kv=None, position_bias=None, mask=None):
        B, T, _ = x.size()
        src = x if kv is None else kv
        S = src.size()[1]
        q = self.q(x).view(B, T, self.h, self.d_kv).transpose(1, 2)
        k = self.k(src).view(B, S, self.h, self.d_kv).transpose(1, 2)
        v = self.v(src).view(B, S, self.h, self.d_kv).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(3, 2))
        if position_bias is None:
            if self.relative_attention_bias is not None:
                position_bias = self.compute_bias(T, S)
            else:  # (cross-attention: no bias, zeros)
                position_bias = torch.zeros(1, self.h, T, S, device="cuda")
            if mask is not None:
                position_bias = position_bias + mask  # (B, H, T, S) in fp32, kept by the stack
        scores += position_bias
        attn = F.softmax(scores.float(), dim=-1).type_as(scores)
        attn = F.dropout(attn, p=self.p, training=self.training)
        y = torch.matmul(attn, v).transpose(1, 2).contiguous().view(B, T, self.h * self.d_kv)
        return self.o(y), position_bias


class T5LayerSelfAttention(nn.Module):
    def __init__(self, d, heads, d_kv, buckets, dropout, has_bias):
        super().__init__()
        self.SelfAttention = T5Attention(d, heads, d_kv, buckets, dropout, has_bias)
        self.layer_norm, self.dropout = T5LayerNorm(d), nn.Dropout(dropout)

    def forward(self, x, position_bias, mask):
        y, position_bias = self.SelfAttention(self.layer_norm(x), position_bias=position_bias, mask=mask)
        return x + self.dropout(y), position_bias


class T5LayerCrossAttention(nn.Module):
    def __init__(self, d, heads, d_kv, buckets, dropout):
        super().__init__()
        self.EncDecAttention = T5Attention(d, heads, d_kv, buckets, dropout, False)
        self.layer_norm, self.dropout = T5LayerNorm(d), nn.Dropout(dropout)

    def forward(self, x, enc, position_bias, mask):
        y, position_bias = self.EncDecAttention(self.layer_norm(x), kv=enc, position_bias=position_bias,
                                                mask=mask)
        return x + self.dropout(y), position_bias


class T5LayerFF(nn.Module):
    def __init__(self, d, d_ff, dropout):
        super().__init__()
        self.wi, self.wo = nn.Linear(d, d_ff, bias=False), nn.Linear(d_ff, d, bias=False)
        self.layer_norm, self.dropout, self.p = T5LayerNorm(d), nn.Dropout(dropout), dropout

    def forward(self, x):
        h = F.dropout(F.relu(self.wi(self.layer_norm(x))), p=self.p, training=self.training)
        return x + self.dropout(self.wo(h))


class T5Block(nn.Module):
    def __init__(self, d, heads, d_kv, d_ff, buckets, dropout, is_decoder, has_bias):
        super().__init__()
        layer = [T5LayerSelfAttention(d, heads, d_kv, buckets, dropout, has_bias)]
        if is_decoder:
            layer.append(T5LayerCrossAttention(d, heads, d_kv, buckets, dropout))
        self.layer = nn.ModuleList(layer + [T5LayerFF(d, d_ff, dropout)])

    def forward(self, x, position_bias, mask, enc=None, enc_bias=None, enc_mask=None):
        x, position_bias = self.layer[0](x, position_bias, mask)
        if enc is not None:
            x, enc_bias = self.layer[1](x, enc, enc_bias, enc_mask)
        return self.layer[-1](x), position_bias, enc_bias


class T5Stack(nn.Module):
    def __init__(self, shared, n, d, heads, d_kv, d_ff, buckets, dropout, is_decoder):
        super().__init__()
        self.embed_tokens, self.is_decoder = shared, is_decoder
        self.block = nn.ModuleList([T5Block(d, heads, d_kv, d_ff, buckets, dropout, is_decoder, i == 0)
                                    for i in range(n)])
        self.final_layer_norm, self.dropout = T5LayerNorm(d), nn.Dropout(dropout)

    def forward(self, ids, enc=None):
        B, T = ids.size()
        x = self.dropout(self.embed_tokens(ids))
        # the extended attention masks, fp32: (B, 1, 1, T) over the padding, causal (B, 1, T, T)
        mask = torch.zeros(B, 1, T if self.is_decoder else 1, T, device="cuda")
        enc_mask = torch.zeros(B, 1, 1, enc.size()[1], device="cuda") if enc is not None else None
        bias = enc_bias = None
        WHERE["stack"] = "decoder" if self.is_decoder else "encoder"
        for i, blk in enumerate(self.block):
            WHERE["block"] = i
            x, bias, enc_bias = blk(x, bias, mask, enc, enc_bias, enc_mask)
        return self.dropout(self.final_layer_norm(x))


class T5ForConditionalGeneration(nn.Module):
    def __init__(self, vocab, d, layers, heads, d_kv, d_ff, buckets, dropout, untied=False):
        super().__init__()
        self.d = d
        self.shared = nn.Embedding(vocab, d)
        self.encoder = T5Stack(self.shared, layers, d, heads, d_kv, d_ff, buckets, dropout, False)
        self.decoder = T5Stack(self.shared, layers, d, heads, d_kv, d_ff, buckets, dropout, True)
        # T5 v1.1's head: its own V x d weight, made after the decoder (HF's lm_head)
        self.lm_head = nn.Linear(d, vocab, bias=False) if untied else None

    def forward(self, input_ids, decoder_input_ids):
        enc = self.encoder(input_ids)
        out = self.decoder(decoder_input_ids, enc)
        WHERE["stack"], WHERE["block"] = "head", None
        if self.lm_head is not None:
            return self.lm_head(out)
        out = out * (self.d ** -0.5)  # the head tied to the shared embedding
        return torch.matmul(out, self.shared.weight.transpose(0, 1))


def main():
    global AMP
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch_size", type=int, default=8)
    ap.add_argument("--src_len", type=int, default=512)
    ap.add_argument("--tgt_len", type=int, default=128)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--d_model", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--d_ff", type=int, default=3072)
    ap.add_argument("--vocab", type=int, default=32128)
    ap.add_argument("--buckets", type=int, default=32)
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--amp", choices=["bf16", "none"], default="bf16")
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--untied_head", action="store_true")
    a = ap.parse_args()
    AMP = a.amp == "bf16"
    torch.cuda.init()
    model = T5ForConditionalGeneration(a.vocab, a.d_model, a.layers, a.heads, a.d_model // a.heads, a.d_ff,
                                       a.buckets, a.dropout, a.untied_head).to("cuda")
    model.train()
    params = list(model.parameters())
    enc_p = sum(p.numel() for p in model.encoder.block.parameters())
    dec_p = sum(p.numel() for p in model.decoder.block.parameters())
    print("facts: batch=%d src_len=%d tgt_len=%d layers=%d d_model=%d heads=%d d_ff=%d vocab=%d "
          "encoder_block_params=%d decoder_block_params=%d"
          % (a.batch_size, a.src_len, a.tgt_len, a.layers, a.d_model, a.heads, a.d_ff, a.vocab, enc_p, dec_p),
          flush=True)
    truth = {"program": "t5_adafactor.py", "batch_size": a.batch_size, "src_len": a.src_len,
             "tgt_len": a.tgt_len, "layers": a.layers, "d_model": a.d_model, "heads": a.heads, "d_ff": a.d_ff,
             "vocab_size": a.vocab, "amp": a.amp, "optimizer": "adafactor", "steps": 0, "oom": False,
             "oom_phase": None, "oom_at": None, "grad_bytes": None, "optim_state_bytes": None,
             "params": sum(p.numel() for p in params), "trainable_params": sum(p.numel() for p in params),
             "encoder_block_params": enc_p, "decoder_block_params": dec_p,
             "factored_elements": factored_elements(params), "param_bytes": tensor_bytes(params)}
    opt = torch.optim.Adafactor(params, lr=1e-3, foreach=False)
    phase = "forward"
    try:
        for step in range(a.steps):
            phase = "forward"
            src = torch.randint(0, a.vocab, (a.batch_size, a.src_len)).to("cuda")
            tgt = torch.randint(0, a.vocab, (a.batch_size, a.tgt_len)).to("cuda")
            labels = torch.randint(0, a.vocab, (a.batch_size, a.tgt_len)).to("cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=AMP):
                logits = model(src, tgt)
            loss = F.cross_entropy(logits.float().view(-1, a.vocab), labels.view(-1))
            del logits
            phase = "backward"
            loss.backward()
            del loss, src, tgt, labels
            if step == 0:
                truth["grad_bytes"] = tensor_bytes(p.grad for p in params)
            phase = "optimizer"
            opt.step()
            opt.zero_grad(set_to_none=True)
            truth["steps"] = step + 1
            truth["optim_state_bytes"] = tensor_bytes(state_tensors(opt))
    except torch.cuda.OutOfMemoryError as e:
        record_oom(truth, phase, e)
        truth["oom_at"] = dict(WHERE) if phase == "forward" else None
    print_truth(torch, truth)
    return 1 if truth["oom"] else 0


if __name__ == "__main__":
    sys.exit(main())
