"""docstring with batch_size = 99"""
batch_size = 2**64 + 8
block_size = (-1)**65 + 2
n_layer = 10 // 0
dropout = 1e999
n_embd = ((((((((8))))))))
if True:
    batch_size = 3
n_head = 0x10
dtype = 'fp8'
