/* vtmutate_words.h — the words the trace mutator (vtmutate.c) puts into traces: Python
 * qualified names and file names a training program's stacks hold, command-line arguments,
 * recorded environment variables and config files (nanoGPT's and Hugging Face's), with values a
 * crafted trace could give (0, negative, huge). Included once, by vtmutate.c. */
/* clang-format off */
static const char *const qualnames[] = {
    "forward", "backward", "Linear.forward", "CausalSelfAttention.forward", "Block.forward",
    "GPT.forward", "MLP.forward", "LayerNorm.forward", "Embedding.forward", "AdamW.step",
    "Adam.step", "SGD.step", "Optimizer.zero_grad", "step", "zero_grad", "estimate_loss",
    "evaluate", "<module>", "train", "get_batch", "cross_entropy", "CheckpointFunction.forward",
    "checkpoint", "Conv2d.forward", "BatchNorm2d.forward", "Bottleneck.forward", "ResNet.forward",
    "VisionTransformer.forward", "LlamaDecoderLayer.forward", "LlamaAttention.forward",
    "BertLayer.forward", "LoraLayer.forward", "_engine_run_backward", "clip_grad_norm_",
    "GradScaler.scale", "_to_copy", "compile_fx", "CUDAGraph.replay", "main", ""};
static const char *const filenames[] = {
    "train.py", "model.py", "/usr/lib/python3/dist-packages/torch/nn/modules/linear.py",
    "torch/optim/adamw.py", "torch/optim/optimizer.py", "torch/optim/sgd.py",
    "torch/nn/modules/module.py", "torch/autograd/__init__.py", "torch/_tensor.py",
    "torch/utils/checkpoint.py", "transformers/models/gpt2/modeling_gpt2.py",
    "transformers/models/llama/modeling_llama.py", "torchvision/models/resnet.py",
    "peft/tuners/lora/layer.py", "torch/_dynamo/eval_frame.py", "torch/cuda/graphs.py",
    "torch/nn/functional.py", "torch/amp/grad_scaler.py", "hf_train.py", ""};
static const char *const args[] = {
    "python3", "train.py", "config/train_gpt2.py", "--batch_size=8", "--batch_size=0",
    "--batch_size=99999999999999999999", "--compile=False", "--gradient_accumulation_steps=40",
    "--block_size=1024", "--n_layer=12", "--n_head=0", "--n_embd=768", "--dtype=bfloat16",
    "--dtype=float16", "hf_train.py", "--model", "gpt2", "--batch-size", "4", "-1", "1e308",
    "nan", "torchrun", "--nproc_per_node=2", "--micro-batch-size=3", "config.py", "model_dir",
    "--gradient_accumulation_steps=0", "--block_size=-5", "--vocab_size=1"};
static const char *const envs[] = {
    "RANK=0", "RANK=1", "WORLD_SIZE=2", "LOCAL_RANK=1", "WORLD_SIZE=0",
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
    "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128,roundup_power2_divisions:4",
    "PYTORCH_CUDA_ALLOC_CONF=roundup_power2_divisions:[256:1,512:2,>:8]",
    "PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync",
    "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:0", "PYTORCH_NO_CUDA_MEMORY_CACHING=1",
    "CUDA_VISIBLE_DEVICES=1"};
static const char *const files[] = {
    "batch_size = 12\nblock_size = 1024\ngradient_accumulation_steps = 5 * 8\n",
    "n_layer = 48\nn_head = 25\nn_embd = 1600\ndtype = 'float16'\n",
    "batch_size = 0\nn_head = 0\nblock_size = -1\n", "batch_size = 10**30\nn_embd = 2**64\n",
    "{\"n_layer\": 12, \"n_embd\": 768, \"n_head\": 12, \"vocab_size\": 50257, "
    "\"n_positions\": 1024, \"model_type\": \"gpt2\"}",
    "{\"hidden_size\": 4096, \"num_hidden_layers\": 32, \"num_attention_heads\": 32, "
    "\"vocab_size\": 32000, \"intermediate_size\": 11008, \"model_type\": \"llama\"}",
    "{\"hidden_size\": 0, \"num_hidden_layers\": 0, \"num_attention_heads\": 0, "
    "\"vocab_size\": 0}",
    "__version__ = '2.11.0'\ncuda = '12.8'\n", ""};
/* clang-format on */
