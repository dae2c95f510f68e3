# arithmetic and names, as nanoGPT config files write them
batch_size = 4 * 2
block_size = 1024 * 12 // 16
gradient_accumulation_steps = 5 * 8 - 2 ** 3 % 7
n_layer = (12 + 12) // 2
n_head = -(-12)
n_embd = n_head * 64
dropout = 0.1 / 2 + 1e-3
bias = False
dtype = 'bfloat' + "16"
compile = True
vocab_size = 50304 # padded
