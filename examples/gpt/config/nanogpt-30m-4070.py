# examples/gpt/config/nanogpt-30m-4070.py — a 30M-parameter
# nanoGPT on an RTX 4070 (12 GB): L=6, H=6, d=384, T=512, B=16, A=4, fp16 + GradScaler, compile.
# Observed there: 6582 MiB on the GPU (see docs: formula.md, worked example 1).
batch_size = 16
block_size = 512
gradient_accumulation_steps = 4
n_layer = 6
n_head = 6
n_embd = 384
dropout = 0.0
bias = False
dtype = 'float16'
compile = True
eval_interval = 250
eval_iters = 200
max_iters = 5000
