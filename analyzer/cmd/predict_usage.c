/* predict_usage.c — `vramtrace predict --help` (predict_usage.h): its options, and the fixed costs
 * it assumes without a trace as the formula's constants give them. */
#include "predict_usage.h"

#include "advice.h"
#include "cards.h"
#include "formula.h"
#include "predict_model.h"

void predict_usage(FILE *out)
{
    fprintf(out,
            "usage: vramtrace predict [options] [CONFIG.py ...] [--key=value ...]\n\n"
            "Predicts the GPU memory of one training step and whether it fits a card: a GPT-style\n"
            "or gated (Llama-style) decoder's from the refined formula (docs/formula.md §3), or,\n"
            "with --from, any traced run's (a CNN, a diffusion U-Net, ...) scaled from what it\n"
            "measured.\n\n"
            "model:\n");
    predict_model_names(out, fprintf(out, "  --model NAME          "), 24);
    fprintf(
        out,
        "                        (nanoGPT's GPT-2 shapes, then Hugging Face models as their\n"
        "                        config.json has them: the same as that file given)\n"
        "  --n-layer N  --n-head N  --n-embd N  --block-size N  --vocab-size N  --bias / "
        "--no-bias\n"
        "  --mlp-width I         a gated-MLP decoder (Llama, Mistral: gate, up and down of\n"
        "                        width I, RMSNorm, rotary positions, no biases); it needs\n"
        "                        --n-layer, --n-head, --n-embd and --vocab-size\n"
        "  --kv-heads N          its key / value heads (grouped-query attention)\n"
        "  --tied-head / --untied-head  its head shares the embedding or not (untied)\n"
        "  CONFIG.json           a Hugging Face config.json (model_type llama, mistral,\n"
        "                        qwen2, gpt2, bert or roberta): its shape and block; eager,\n"
        "                        its dropout\n"
        "training:\n"
        "  --batch-size N  --grad-accum N  --dtype fp16|bf16|fp32  --compile / --no-compile  "
        "--dropout P\n"
        "  --no-flash            attention without fused SDPA (B*H*T^2 scores kept per layer)\n"
        "  --checkpointing       activation checkpointing of every block\n"
        "  --optimizer NAME      its state per trainable parameter: adamw or adam (two\n"
        "                        states, 8 B; the default, assumed), adamw8bit (bitsandbytes:\n"
        "                        2 B), sgd (no momentum: none), sgd-momentum (one buffer,\n"
        "                        4 B), adafactor (torch's: a row and a column of each\n"
        "                        matrix, from the shape)\n"
        "  --lora-rank R         LoRA adapters of rank R train alone (fp32, as peft keeps\n"
        "                        them), the model's weights frozen: no gradient, no state\n"
        "  --lora-targets LIST   the projections adapted in every block: q,k,v,o,gate,up,down\n"
        "                        (GPT-2: qkv for c_attn, o, up, down), all, or peft's module\n"
        "                        names; default peft's: q,v (GPT-2: qkv)\n"
        "  nanoGPT's own spelling works too (--batch_size=8, "
        "--gradient_accumulation_steps=64), and\n"
        "  bare arguments are nanoGPT config files (key = value lines), applied in order; a\n"
        "  line that sets a key but cannot be evaluated (a call, a typo such as 8x) is an\n"
        "  error, and a trace or a report's JSON is read with --from, not as a config file.\n"
        "  Without --grad-accum the accumulation is not assumed to be nanoGPT's 40: the\n"
        "  recommendation is a micro-batch and a factor for your accumulation steps.\n"
        "target:\n"
        "  --card CARD           %s, or a size (12GiB, 12288MiB, 11.5G)\n"
        "  --from TRACE          calibrate with a traced run: a trace, or the output of\n"
        "                        `vramtrace report --json TRACE` (its configuration, then\n"
        "                        the options here as what-ifs)\n"
        "output:\n"
        "  --json                one JSON object on stdout\n"
        "  -h, --help            this text\n\n"
        "without --from, defaults are nanoGPT train.py's (GPT-2 124M shape, batch_size 12,\n"
        "block_size 1024, bfloat16, compile; AdamW, every parameter trained), and the peak\n"
        "includes an assumed %llu MiB CUDA context, a cuBLAS workspace of %llu MiB and room\n"
        "for an allocator cache of %.0f %% of the tensors compiled, %.0f %% eager; with --from,\n"
        "the run's own (its optimizer and what it trained too; where the cache's share is not\n"
        "measured, %.0f and %.0f %% if that run set expandable_segments:True). Keep >= %d %% "
        "free.\n"
        "exit: 0 ok, 2 usage or bad value, 3 --from a file that is no trace nor a report's JSON,\n"
        "or a malformed trace\n",
        card_presets_help(), FORMULA_CONTEXT_BYTES >> 20, FORMULA_CUBLAS_BYTES >> 20,
        100 * FORMULA_CACHE_COMPILED, 100 * FORMULA_CACHE_EAGER,
        100 * FORMULA_CACHE_EXPANDABLE_COMPILED, 100 * FORMULA_CACHE_EXPANDABLE_EAGER,
        ADVICE_HEADROOM_PCT);
}
