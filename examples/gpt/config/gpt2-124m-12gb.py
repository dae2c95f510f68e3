# examples/gpt/config/gpt2-124m-12gb.py — GPT-2 124M on a
# 12 GB card, which runs out of memory: L=12, H=12, d=768, T=1024, B=16, A=32, fp16.
# Run it under `vramtrace run --card 12GiB` and let `vramtrace report` recommend a fix.
batch_size = 16
block_size = 1024
gradient_accumulation_steps = 32
n_layer = 12
n_head = 12
n_embd = 768
dropout = 0.0
bias = False
dtype = 'float16'
compile = True
eval_interval = 2000
eval_iters = 200
max_iters = 5000
